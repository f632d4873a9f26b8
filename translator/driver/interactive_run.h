// `run` (and the analysis after each change) of the interactive prompt: the script goes
// through the same passes as `ukstap -e SCRIPT` (driver/run_session.h), in a child process.
//
// Why a child: a run ends by ^C (SIGINT to the terminal's foreground group); the child takes
// it with ukstap's own handlers (loader/interrupt.h: end probes run, everything detached, the
// -c target's group killed), while the prompt's process ignores it for the run's duration and
// stays. Whatever the run attached or allocated is the child's, so the kernel releases it when
// the child exits even if a pass failed half-way; the next run starts from a clean process.
#pragma once

#include <sys/types.h>

#include <string>

#include "driver/run_session.h"
#include "driver/session.h"

namespace ukstap::interactive {

// Runs passes 1..opts.last_pass of SCRIPT in the foreground and waits for them. Output and
// diagnostics go where a plain invocation sends them. Returns the child's exit status (128+N
// when a signal N ended it).
int run_script(RunSession run, const Options& opts, const std::string& script);

// Passes 1 and 2 only, stdout discarded: the script's parse and semantic errors, if any, on
// stderr (SystemTap's interactive mode analyzes the script after each change). 0 when clean.
int analyze_script(RunSession run, const Options& opts, const std::string& script);

// `run &`: the same run in the background, so the prompt stays usable, until `stop` (SIGINT
// to the run, as ^C to a plain ukstap) or its own end. Its own process group (^C at the
// prompt is not its), stdin /dev/null. One at a time.
class BackgroundRun {
 public:
  // "" or why it did not start.
  std::string start(RunSession run, const Options& opts, const std::string& script);
  // Whether it still runs; when it has ended, says so (once) and forgets it.
  bool running();
  // Interrupts it and waits for its end probes and exit: its exit status (-1: none running).
  int stop();

 private:
  pid_t pid_ = 0;
};

}  // namespace ukstap::interactive
