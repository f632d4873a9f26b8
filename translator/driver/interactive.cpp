#include "driver/interactive.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include "driver/interactive_commands.h"
#include "driver/interactive_completion.h"

namespace ukstap::interactive {

namespace {

// ------------------------------------------------------------------------------ signals

volatile sig_atomic_t g_interrupt = 0;  // ^C at the prompt: drop the line
volatile sig_atomic_t g_hangup = 0;     // SIGTERM / SIGHUP: leave as on ^D
int g_wake[2] = {-1, -1};               // the handler's wake-up for select()

void on_signal(int sig) {
  int saved = errno;
  if (sig == SIGINT) g_interrupt = 1;
  else g_hangup = 1;
  if (g_wake[1] >= 0) (void)!::write(g_wake[1], "x", 1);
  errno = saved;
}

void install_prompt_signals() {
  if (g_wake[0] < 0 && ::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) g_wake[0] = g_wake[1] = -1;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: select() returns
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

void drain_wake() {
  char buf[64];
  while (g_wake[0] >= 0 && ::read(g_wake[0], buf, sizeof buf) > 0) {
  }
}

// ------------------------------------------------------------------------------ line sources

// A terminal: readline's callback interface, so a ^C can drop the line being typed and give
// a fresh prompt (readline's own handlers would only resume the same line).
class TerminalSource : public LineSource {
 public:
  Read read(const char* prompt, std::string& line) override {
    done_ = eof_ = false;
    current_ = this;
    g_interrupt = 0;
    drain_wake();
    rl_callback_handler_install(prompt, on_line);
    while (!done_) {
      if (g_hangup) {
        abandon();
        return Read::End;
      }
      if (g_interrupt) {
        g_interrupt = 0;
        abandon();
        return Read::Interrupted;
      }
      fd_set fds;
      FD_ZERO(&fds);
      FD_SET(STDIN_FILENO, &fds);
      if (g_wake[0] >= 0) FD_SET(g_wake[0], &fds);
      int n = ::select(std::max(STDIN_FILENO, g_wake[0]) + 1, &fds, nullptr, nullptr, nullptr);
      if (n < 0) {
        if (errno == EINTR) continue;
        abandon();
        return Read::End;
      }
      if (g_wake[0] >= 0 && FD_ISSET(g_wake[0], &fds)) drain_wake();
      if (FD_ISSET(STDIN_FILENO, &fds)) rl_callback_read_char();
    }
    if (eof_) {
      std::fputs("\n", stdout);
      std::fflush(stdout);
      return Read::End;
    }
    line = line_;
    return Read::Line;
  }

 private:
  static void on_line(char* text) {
    TerminalSource* self = current_;
    self->done_ = true;
    self->eof_ = text == nullptr;
    self->line_ = text ? text : "";
    std::free(text);
    // The terminal back to normal while the command runs (a run's -c command may want it).
    rl_callback_handler_remove();
  }

  // The line being typed is dropped; a new line for what comes next.
  void abandon() {
    rl_free_line_state();
    rl_callback_sigcleanup();
    rl_callback_handler_remove();
    std::fputs("\n", stdout);
    std::fflush(stdout);
  }

  static inline TerminalSource* current_ = nullptr;
  bool done_ = false, eof_ = false;
  std::string line_;
};

// Commands piped in: one per line, no prompt.
class PipeSource : public LineSource {
 public:
  Read read(const char*, std::string& line) override {
    if (!std::getline(std::cin, line)) return Read::End;
    return Read::Line;
  }
};

// ------------------------------------------------------------------------------ history

// ~/.ukstap_history, $HOME first (as readline's own ~ expansion), else the password entry.
std::string history_path() {
  const char* home = std::getenv("HOME");
  if (!home || !*home) {
    struct passwd* pw = ::getpwuid(::getuid());
    home = pw ? pw->pw_dir : nullptr;
  }
  return home && *home ? std::string(home) + "/.ukstap_history" : "";
}

constexpr int kHistoryLines = 1000;

// The history file is used only when it is this user's own: a regular file (not a link) owned
// by the effective user, or absent from a directory that user owns. Root with another user's
// $HOME (sudo keeps it) would otherwise create a file its owner cannot write, or follow a
// link planted there to rewrite any file. Returns why not, or "".
std::string untrusted_history(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return "it is not a regular file";
    if (st.st_uid != ::geteuid()) return "another user owns it";
    return "";
  }
  std::string dir = path.substr(0, path.rfind('/'));
  if (::stat(dir.empty() ? "/" : dir.c_str(), &st) != 0) return "its directory is missing";
  if (st.st_uid != ::geteuid()) return "another user owns its directory";
  return "";
}

class History {
 public:
  History() : path_(history_path()) {
    if (path_.empty()) return;
    stifle_history(kHistoryLines);
    if (std::string why = untrusted_history(path_); !why.empty()) {
      std::cerr << "ukstap: history not kept in " << path_ << ": " << why << "\n";
      path_.clear();
      return;
    }
    read_history(path_.c_str());
  }
  ~History() {
    if (!path_.empty() && untrusted_history(path_).empty())
      history_truncate_file(path_.c_str(), kHistoryLines);
  }
  // Kept as typed, and appended to the file at once: a session that dies keeps its history.
  void add(const std::string& line) {
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    HIST_ENTRY* last = history_length > 0 ? history_get(history_base + history_length - 1) : nullptr;
    if (last && line == last->line) return;
    add_history(line.c_str());
    if (path_.empty()) return;
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return;  // an unwritable home: history for this session only
    ::close(fd);
    append_history(1, path_.c_str());
  }

 private:
  std::string path_;
};

}  // namespace

int run_prompt(const Options& cmdline, RunSession run) {
  State st;
  st.run = run;
  st.opts = cmdline;
  st.tty = ::isatty(STDIN_FILENO);
  // The command line's script is the starting script.
  if (cmdline.have_script_text) {
    st.script.append(cmdline.script_text);
  } else if (cmdline.script_file == "-") {
    std::cerr << "ukstap: -i reads its commands from stdin: give the script as a file or -e\n";
    return 1;
  } else if (!cmdline.script_file.empty()) {
    if (std::string why = st.script.load(cmdline.script_file); !why.empty()) {
      std::cerr << "ukstap: " << why << "\n";
      return 1;
    }
  }
  st.opts.have_script_text = false;
  st.opts.script_text.clear();
  st.opts.script_file.clear();

  TerminalSource terminal;
  PipeSource pipe;
  st.input = st.tty ? static_cast<LineSource*>(&terminal) : &pipe;
  std::unique_ptr<History> history;
  if (st.tty) {
    install_prompt_signals();
    rl_catch_signals = 0;  // the handlers above, not readline's
    install_completion(st);
    history = std::make_unique<History>();
    st.remember = [&history](const std::string& l) { history->add(l); };
    std::cout << "ukstap interactive mode: 'add' a probe, 'run' it, 'help' for the commands, "
                 "^D to leave.\n";
  }
  for (;;) {
    std::string line;
    st.background.running();  // says so when a background run has ended
    LineSource::Read got = st.input->read(st.tty ? "ukstap> " : "", line);
    if (got == LineSource::Read::End) break;
    if (got == LineSource::Read::Interrupted) continue;
    if (history) history->add(line);
    if (execute(st, line)) break;
    std::cout.flush();
  }
  // ^D or the end of the input with a background run going: stopped, as `quit` does.
  if (st.background.running()) st.background.stop();
  std::cout.flush();
  return 0;
}

}  // namespace ukstap::interactive
