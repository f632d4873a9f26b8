// Command-line parsing for the ukstap driver, with SystemTap's options and meanings:
//   ukstap [OPTIONS] [SCRIPT_FILE | - | -e SCRIPT] [ARGS...]
#pragma once

#include <iosfwd>
#include <string>

#include "driver/session.h"

namespace ukstap {

// What the command line asks for besides the Options themselves.
struct CommandLine {
  enum class Action {
    Run,             // run passes 1..opts.last_pass
    Help,            // -h / --help
    Version,         // -V / --version
    ListProbes,      // -l / -L PATTERN (opts.list_pattern, opts.list_with_vars)
    DumpFunctions,   // --dump-functions
    DumpProbeTypes,  // --dump-probe-types
    Interactive,     // -i / --interactive (driver/interactive.h)
    Error,           // bad usage; the message was printed; exit with `exit_code`
  };
  Action action = Action::Run;
  int exit_code = 0;
  bool last_pass_given = false;  // -p was on the command line
};

// Parses argv into `opts`. Errors are printed to `err` as one line ("ukstap: ..." followed by
// a hint to --help, or SystemTap's own text where it has one, e.g. "Invalid timeout interval.")
// and reported as Action::Error with exit code 1. Never throws for user errors.
CommandLine parse_command_line(int argc, char** argv, Options& opts, std::ostream& err);

// --help text (stdout) and the -V version banner.
void print_usage(std::ostream& out);
void print_version(std::ostream& out);

// The hint printed after a usage error.
extern const char* const kHelpHint;

}  // namespace ukstap
