#include "driver/interactive_commands.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "driver/interactive_run.h"
#include "driver/option_checks.h"

namespace ukstap::interactive {

namespace {

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The line after its first N words, outer blanks trimmed (add's text keeps its own spacing).
std::string rest_after_words(const std::string& line, size_t n) {
  size_t i = 0;
  for (size_t w = 0; w < n; ++w) {
    i = line.find_first_not_of(" \t", i);
    if (i == std::string::npos) return "";
    i = line.find_first_of(" \t", i);
    if (i == std::string::npos) return "";
  }
  size_t b = line.find_first_not_of(" \t", i), e = line.find_last_not_of(" \t");
  return b == std::string::npos ? "" : line.substr(b, e - b + 1);
}

void error(const std::string& msg) { std::cerr << "ukstap: " << msg << "\n"; }

// A yes/no question on a terminal; without one the answer is yes (the commands were written
// ahead by someone who meant them).
bool confirm(State& st, const std::string& question) {
  if (!st.tty || !st.input) return true;
  for (;;) {
    std::string answer;
    if (st.input->read((question + " (y or n) ").c_str(), answer) != LineSource::Read::Line)
      return false;
    if (answer == "y" || answer == "Y" || answer == "yes") return true;
    if (answer == "n" || answer == "N" || answer == "no") return false;
    std::cerr << "Please answer y or n.\n";
  }
}

void analyze_if_wanted(State& st) {
  if (st.auto_analyze && !st.script.empty() && has_probes(st.opts, st.script.text()))
    analyze_script(st.run, st.opts, st.script.text());
}

// ---------------------------------------------------------------------------- set/show options

bool parse_flag(const std::string& v, bool& out) {
  if (v == "1" || v == "on" || v == "yes" || v == "true") return out = true, true;
  if (v == "0" || v == "off" || v == "no" || v == "false") return out = false, true;
  return false;
}

bool parse_int(const std::string& v, long lo, long hi, long& out) {
  if (v.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (errno || *end || n < lo || n > hi) return false;
  out = n;
  return true;
}

struct Setting {
  const char* name;
  const char* help;
  std::function<std::string(const State&)> show;
  // "" or why VALUE is refused.
  std::function<std::string(State&, const std::string& value)> set;
};

std::function<std::string(const State&)> show_flag(bool Options::*field) {
  return [field](const State& st) { return std::string(st.opts.*field ? "1" : "0"); };
}
std::function<std::string(State&, const std::string&)> set_flag(bool Options::*field) {
  return [field](State& st, const std::string& v) {
    return parse_flag(v, st.opts.*field) ? std::string() : "expected 0 or 1, not '" + v + "'";
  };
}

// An integer option in [lo, hi]; `what` names it in the refusal ("expected a number 0-100").
std::function<std::string(const State&)> show_int(int Options::*field) {
  return [field](const State& st) { return std::to_string(st.opts.*field); };
}
std::function<std::string(State&, const std::string&)> set_int(int Options::*field, long lo, long hi,
                                                                 const char* what) {
  return [=](State& st, const std::string& v) {
    long n;
    if (!parse_int(v, lo, hi, n))
      return "expected " + std::string(what) + " " + std::to_string(lo) + "-" + std::to_string(hi) +
             ", not '" + v + "'";
    st.opts.*field = static_cast<int>(n);
    return std::string();
  };
}

std::string unquote(std::string v) {
  if (v.size() >= 2 && (v[0] == '"' || v[0] == '\'') && v.back() == v[0]) v = v.substr(1, v.size() - 2);
  return v;
}

const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = {
      {"verbose", "verbosity of every pass (-v)", show_int(&Options::verbose),
       set_int(&Options::verbose, 0, 100, "a number")},
      {"last_pass", "stop after pass NUM 1-5 (-p)", show_int(&Options::last_pass),
       set_int(&Options::last_pass, 1, 5, "a pass number")},
      {"keep_tmpdir", "keep the temporary directory (-k)", show_flag(&Options::keep_tmpdir),
       set_flag(&Options::keep_tmpdir)},
      {"guru_mode", "guru mode: embedded C allowed (-g)", show_flag(&Options::guru_mode),
       set_flag(&Options::guru_mode)},
      {"suppress_warnings", "suppress warnings (-w)", show_flag(&Options::suppress_warnings),
       set_flag(&Options::suppress_warnings)},
      {"panic_warnings", "treat warnings as errors (-W)", show_flag(&Options::warnings_as_errors),
       set_flag(&Options::warnings_as_errors)},
      {"unoptimized", "unoptimized translation (-u)", show_flag(&Options::unoptimized),
       set_flag(&Options::unoptimized)},
      {"target_pid", "target() is PID, 0 for none (-x)",
       [](const State& st) { return std::to_string(st.opts.target_pid); },
       [](State& st, const std::string& v) {
         long n;
         if (!parse_int(v, 0, 0x7fffffffL, n)) return "invalid target process ID '" + v + "'";
         if (n && !st.opts.target_cmd.empty()) return std::string("cmd is set: a target pid and a cmd cannot go together");
         st.opts.target_pid = static_cast<int>(n);
         return std::string();
       }},
      {"cmd", "run CMD with the probes, end when it ends; \"\" for none (-c)",
       [](const State& st) { return "\"" + st.opts.target_cmd + "\""; },
       [](State& st, const std::string& v) {
         if (st.opts.target_pid && !unquote(v).empty())
           return std::string("target_pid is set: a target pid and a cmd cannot go together");
         st.opts.target_cmd = unquote(v);
         return std::string();
       }},
      {"timeout", "end each run after SECONDS, 0 for none (-T)",
       [](const State& st) {
         std::ostringstream o;
         o << st.opts.timeout_s;
         return o.str();
       },
       [](State& st, const std::string& v) {
         char* end = nullptr;
         double t = std::strtod(v.c_str(), &end);
         if (v.empty() || *end || !std::isfinite(t) || (t != 0 && t < 0.001) || t > kMaxTimeoutSeconds)
           return "invalid timeout '" + v + "' (seconds, at least 0.001; 0 for none)";
         st.opts.timeout_s = t;
         return std::string();
       }},
      {"args", "the script's arguments $1 @1 ... (words)",
       [](const State& st) {
         std::string all;
         for (const auto& a : st.opts.args) all += (all.empty() ? "" : " ") + a;
         return all;
       },
       [](State& st, const std::string& v) {
         st.opts.args = split_words(v);
         return std::string();
       }},
      {"auto_analyze", "check the script (passes 1-2) after each change",
       [](const State& st) { return std::string(st.auto_analyze ? "1" : "0"); },
       [](State& st, const std::string& v) {
         return parse_flag(v, st.auto_analyze) ? std::string() : "expected 0 or 1, not '" + v + "'";
       }},
  };
  return table;
}

const Setting* find_setting(const std::string& name) {
  for (const auto& s : settings())
    if (name == s.name) return &s;
  return nullptr;
}

// ---------------------------------------------------------------------------------- commands

struct Command {
  const char* name;
  std::vector<std::string> aliases;
  const char* usage;
  const char* help;
  ArgKind arg;
  // words[0] is the command as typed; line is the whole line. True: end the session.
  std::function<bool(State&, const std::vector<std::string>& words, const std::string& line)> run;
};

const std::vector<Command>& commands();

void print_help(const std::string& which) {
  size_t width = 0;
  for (const auto& c : commands()) width = std::max(width, std::strlen(c.usage));
  for (const auto& c : commands()) {
    bool named = which == c.name;
    for (const auto& a : c.aliases) named = named || which == a;
    if (!which.empty() && !named) continue;
    std::cout << std::left << std::setw(static_cast<int>(width)) << c.usage << " -- " << c.help;
    if (!c.aliases.empty()) {
      std::cout << " (also";
      for (const auto& a : c.aliases) std::cout << " '" << a << "'";
      std::cout << ")";
    }
    std::cout << "\n";
    if (!which.empty() && (which == "set" || which == "show")) {
      size_t w = 0;
      for (const auto& s : settings()) w = std::max(w, std::strlen(s.name));
      for (const auto& s : settings())
        std::cout << "    " << std::setw(static_cast<int>(w)) << s.name << " -- " << s.help << "\n";
    }
    if (!which.empty()) return;
  }
  if (!which.empty()) {
    error("help: unknown command \"" + which + "\" (try \"help\")");
    return;
  }
  std::cout << "A run stops by itself (exit(), -c's command ending, the timeout) or on ^C; "
               "^D or 'quit' leaves.\n";
}

bool cmd_add(State& st, const std::vector<std::string>& words, const std::string& line) {
  std::string entry = rest_after_words(line, 1);
  if (words.size() < 2) {
    error("add: give a probe, function or global (add probe begin { ... })");
    return false;
  }
  for (;;) {
    std::string diagnostics;
    Completeness c = check_entry(st.opts, entry, diagnostics);
    if (c == Completeness::Complete) break;
    if (c == Completeness::Invalid) {
      std::cerr << diagnostics << "ukstap: add: nothing added\n";
      st.pending.clear();
      return false;
    }
    st.pending = entry;
    std::string more;
    auto got = st.input ? st.input->read(st.tty ? "ukstap>>> " : "", more) : LineSource::Read::End;
    if (got == LineSource::Read::Interrupted) {
      st.pending.clear();
      return false;
    }
    if (got == LineSource::Read::End) {
      error("add: the input ended inside the entry: nothing added");
      st.pending.clear();
      return false;
    }
    if (st.remember) st.remember(more);
    entry += "\n" + more;
  }
  st.pending.clear();
  st.script.append(entry);
  analyze_if_wanted(st);
  return false;
}

bool cmd_delete(State& st, const std::vector<std::string>& words, const std::string& line) {
  if (words.size() == 1) {
    if (st.script.empty()) return false;
    if (confirm(st, "Delete the whole script (" + std::to_string(st.script.size()) + " lines)?"))
      st.script.clear();
    return false;
  }
  // "3 - 5" as well as "3-5".
  std::string range;
  for (size_t i = 1; i < words.size(); ++i) range += words[i];
  (void)line;
  if (std::string why = st.script.erase(range); !why.empty()) {
    error("delete: " + why);
    return false;
  }
  analyze_if_wanted(st);
  return false;
}

bool cmd_list(State& st, const std::vector<std::string>&, const std::string&) {
  st.script.list(std::cout);
  return false;
}

bool cmd_load(State& st, const std::vector<std::string>& words, const std::string&) {
  if (words.size() != 2) {
    error("load: give one FILE");
    return false;
  }
  if (!st.script.empty() &&
      !confirm(st, "Replace the current script (" + std::to_string(st.script.size()) + " lines)?"))
    return false;
  if (std::string why = st.script.load(words[1]); !why.empty()) {
    error("load: " + why);
    return false;
  }
  analyze_if_wanted(st);
  return false;
}

bool cmd_save(State& st, const std::vector<std::string>& words, const std::string&) {
  if (words.size() != 2) {
    error("save: give one FILE");
    return false;
  }
  if (std::string why = st.script.save(words[1]); !why.empty()) error("save: " + why);
  return false;
}

// $VISUAL, $EDITOR or vi on a temporary copy; the edited file becomes the script.
bool cmd_edit(State& st, const std::vector<std::string>&, const std::string&) {
  const char* editor = std::getenv("VISUAL");
  if (!editor || !*editor) editor = std::getenv("EDITOR");
  if (!editor || !*editor) editor = "vi";
  char path[] = "/tmp/ukstap-edit-XXXXXX.stp";
  int fd = ::mkstemps(path, 4);
  if (fd < 0) {
    error(std::string("edit: cannot create a temporary file: ") + std::strerror(errno));
    return false;
  }
  ::close(fd);
  std::string why = st.script.save(path);
  if (why.empty()) {
    std::cout.flush();
    struct sigaction ignore {}, old {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, &old);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::signal(SIGINT, SIG_DFL);
      ::execl("/bin/sh", "sh", "-c", (std::string(editor) + " \"$1\"").c_str(), "sh", path,
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::sigaction(SIGINT, &old, nullptr);
    if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      why = std::string("the editor '") + editor + "' failed; the script is unchanged";
    else
      why = st.script.load(path);
  }
  ::unlink(path);
  if (!why.empty()) {
    error("edit: " + why);
    return false;
  }
  analyze_if_wanted(st);
  return false;
}

bool cmd_run(State& st, const std::vector<std::string>& words, const std::string&) {
  bool background = words.size() == 2 && words[1] == "&";
  if (words.size() > 1 && !background) {
    error("run: 'run' runs in the foreground, 'run &' in the background");
    return false;
  }
  if (st.script.empty()) {
    error("run: the script is empty (add a probe first)");
    return false;
  }
  if (st.background.running()) {
    error("run: a background run is going ('stop' ends it)");
    return false;
  }
  if (!background) {
    run_script(st.run, st.opts, st.script.text());
  } else if (std::string why = st.background.start(st.run, st.opts, st.script.text()); !why.empty()) {
    error("run: " + why);
  }
  return false;
}

bool cmd_stop(State& st, const std::vector<std::string>&, const std::string&) {
  // A foreground run holds the terminal until it ends (^C stops it): only `run &` is left.
  if (!st.background.running()) {
    error("stop: no background run ('run &' starts one; ^C stops a foreground run)");
    return false;
  }
  st.background.stop();
  return false;
}

bool cmd_set(State& st, const std::vector<std::string>& words, const std::string& line) {
  if (words.size() < 2) {
    error("set: give OPTION VALUE (\"help set\" lists the options)");
    return false;
  }
  const Setting* s = find_setting(words[1]);
  if (!s) {
    error("set: unknown option \"" + words[1] + "\" (\"help set\" lists them)");
    return false;
  }
  std::string value = rest_after_words(line, 2);
  if (words.size() < 3 && std::string(s->name) != "cmd" && std::string(s->name) != "args") {
    error(std::string("set: ") + s->name + " needs a value");
    return false;
  }
  if (std::string why = s->set(st, value); !why.empty()) error(std::string("set ") + s->name + ": " + why);
  return false;
}

bool cmd_show(State& st, const std::vector<std::string>& words, const std::string&) {
  if (words.size() > 2) {
    error("show: give one OPTION, or none for all");
    return false;
  }
  bool any = false;
  for (const auto& s : settings())
    if (words.size() == 1 || words[1] == s.name) {
      std::cout << s.name << ": " << s.show(st) << "\n";
      any = true;
    }
  if (!any) error("show: unknown option \"" + words[1] + "\" (\"help set\" lists them)");
  return false;
}

bool cmd_help(State&, const std::vector<std::string>& words, const std::string&) {
  print_help(words.size() > 1 ? words[1] : "");
  return false;
}

bool cmd_quit(State& st, const std::vector<std::string>&, const std::string&) {
  if (st.background.running()) st.background.stop();  // nothing left attached behind us
  return true;
}

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"add", {"a"}, "add TEXT", "add a probe, function or global (more lines while unfinished)",
       ArgKind::Script, cmd_add},
      {"delete", {"d"}, "delete [N|N-M]", "delete script line N, lines N to M, or the whole script",
       ArgKind::None, cmd_delete},
      {"list", {"l"}, "list", "show the script with its line numbers", ArgKind::None, cmd_list},
      {"edit", {"e"}, "edit", "edit the script in $VISUAL, $EDITOR or vi", ArgKind::None, cmd_edit},
      {"load", {}, "load FILE", "replace the script with FILE's", ArgKind::File, cmd_load},
      {"save", {}, "save FILE", "write the script to FILE", ArgKind::File, cmd_save},
      {"run", {"r"}, "run [&]",
       "compile and run the script in the foreground (^C stops it), or with & in the background",
       ArgKind::None, cmd_run},
      {"stop", {}, "stop", "stop the background run (its end probes run)", ArgKind::None, cmd_stop},
      {"set", {}, "set OPTION VALUE", "set an option (help set: the options)", ArgKind::Option,
       cmd_set},
      {"show", {}, "show [OPTION]", "show an option, or all of them", ArgKind::Option, cmd_show},
      {"help", {"h", "?"}, "help [COMMAND]", "list the commands, or describe one",
       ArgKind::Command, cmd_help},
      {"quit", {"q", "exit"}, "quit", "leave (as ^D does)", ArgKind::None, cmd_quit},
  };
  return table;
}

const Command* find_command(const std::string& word) {
  for (const auto& c : commands()) {
    if (word == c.name) return &c;
    for (const auto& a : c.aliases)
      if (word == a) return &c;
  }
  return nullptr;
}

}  // namespace

bool execute(State& st, const std::string& line) {
  std::vector<std::string> words = split_words(line);
  if (words.empty()) return false;
  const Command* c = find_command(words[0]);
  if (!c) {
    error("unknown command \"" + words[0] + "\" (try \"help\")");
    return false;
  }
  return c->run(st, words, line);
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const auto& c : commands()) names.push_back(c.name);
  return names;
}

std::vector<std::string> option_names() {
  std::vector<std::string> names;
  for (const auto& s : settings()) names.push_back(s.name);
  return names;
}

ArgKind argument_kind(const std::string& command) {
  const Command* c = find_command(command);
  return c ? c->arg : ArgKind::None;
}

}  // namespace ukstap::interactive
