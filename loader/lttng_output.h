// `ukstap --lttng` (lttng-writer/README.md): the events --ctf makes (ctf_output.h), handed to the
// LTTng writer process instead of the CTF one; it emits each as an LTTng-UST ukstap:event, which
// the user's LTTng sessions record (local, --live through lttng-relayd, snapshot). The symbol
// (statedump) events are not made: their provider name, lttng_ust_statedump, belongs to
// liblttng-ust, whose own statedump describes the writer; each event carries its symbolized frames.
#pragma once

#include <string>

namespace ukstap::loader {

class CtfOutput;

// Starts the writer (LTTNG_UST_ALLOW_BLOCKING=1 in its environment, so a channel made with
// --blocking-timeout blocks it rather than discarding) and opens `out` on it. False with `why`.
bool open_lttng(CtfOutput& out, std::string& why);

// The writer program: beside an uninstalled ukstap (the build tree), else in pkglibexecdir.
std::string lttng_writer_path();

}  // namespace ukstap::loader
