// The interactive prompt's commands (ukstap -i, driver/interactive.h): SystemTap's set — add,
// delete, list, edit, load, save, run, set, show, help, quit — plus `stop`, and the options
// `set`/`show` know. Each command is one row of a table: its name, short aliases, usage, help
// line and handler; `help` and the completion read the same table.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/interactive_run.h"
#include "driver/interactive_script.h"
#include "driver/run_session.h"
#include "driver/session.h"

namespace ukstap::interactive {

// Where the prompt's lines come from (a terminal through readline, or a pipe).
class LineSource {
 public:
  enum class Read { Line, Interrupted, End };
  virtual ~LineSource() = default;
  virtual Read read(const char* prompt, std::string& line) = 0;
};

// What the commands work on.
struct State {
  Options opts;         // the command line's, changed by `set`
  ScriptBuffer script;  // what `run` compiles
  bool auto_analyze = true;  // passes 1-2 after each change, errors shown (as stap)
  bool tty = false;          // stdin is a terminal: prompts, questions, history
  LineSource* input = nullptr;
  std::string pending;  // the lines of an `add` being typed, for completion
  std::function<void(const std::string&)> remember;  // history: each line typed (not answers)
  RunSession run = nullptr;  // passes 1-5 as a plain invocation runs them
  BackgroundRun background;  // `run &`, until `stop`
};

// Runs one command line. Returns true when the session should end (quit).
// A line that is not a command prints one error line naming it, and the prompt goes on.
bool execute(State& st, const std::string& line);

// For completion: command names (with aliases), `set`/`show` option names, and whether the
// command takes a file name (load, save) or an option name (set, show) or a command (help).
std::vector<std::string> command_names();
std::vector<std::string> option_names();
enum class ArgKind { None, Script, File, Option, Command };
ArgKind argument_kind(const std::string& command);

}  // namespace ukstap::interactive
