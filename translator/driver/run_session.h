// Running a script through the passes, as a plain `ukstap SCRIPT` does: the driver's main path
// (driver/main.cpp) and each `run` of the interactive prompt (driver/interactive_run.h) share it.
#pragma once

#include "driver/session.h"

namespace ukstap {

// Passes 1 to s.opts.last_pass for the script s.opts names (script_text, or script_file), with
// the -v pass lines and each pass's diagnostics; -pN's output on stdout. Returns the exit
// status a plain invocation would have (0, or 1 after a failed pass or an interrupted run).
int run_session(Session& s);

// run_session's type: the interactive mode (a library part) is handed it by main.cpp, which
// defines it, rather than linking main.cpp's pass sequence into every tool and test binary.
using RunSession = int (*)(Session& s);

}  // namespace ukstap
