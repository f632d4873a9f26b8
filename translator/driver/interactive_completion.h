// Tab completion at the interactive prompt (ukstap -i): command names, `set`/`show` options,
// file names after load/save, and inside an `add`: probe points (what `ukstap -l` lists and
// the built-in point types of --dump-probe-types, a component at a time: `syscall.op<TAB>`;
// inside a string parameter, a path for process("/library(" and otherwise the names -l lists,
// e.g. process("/bin/bash").function("rea<TAB>),
// tapset functions (--dump-functions), the script's own globals and functions, and the
// variables the probe point being written offers (what `ukstap -L POINT` lists).
#pragma once

#include <string>
#include <vector>

#include "driver/interactive_commands.h"

namespace ukstap::interactive {

// Hooks readline's completion to the session (its options name the tapsets: -I, -D).
void install_completion(State& st);

// The completions of TYPED, a probe point being written, one component at a time: whole
// names, or a prefix ending in '.' (more components follow), '(' or '("' (a parameter); in a
// string parameter, its value closed with `")` (a directory: ending in '/').
std::vector<std::string> complete_probe_point(const Options& opts, const std::string& typed);

}  // namespace ukstap::interactive
