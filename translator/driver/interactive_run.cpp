#include "driver/interactive_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>


namespace ukstap::interactive {

namespace {

// As driver/main.cpp decides for a plain invocation.
bool colors_wanted() {
  if (!::isatty(STDERR_FILENO)) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  const char* colors = std::getenv("SYSTEMTAP_COLORS");
  return !(colors && !*colors);
}

enum class Mode { Foreground, Analyze, Background };

[[noreturn]] void child(RunSession run, const Options& opts, const std::string& script, Mode mode) {
  bool analyze = mode == Mode::Analyze;
  // The prompt's own dispositions are not the run's: back to the defaults, then ukstap's.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTOU, SIGTTIN})
    ::signal(sig, SIG_DFL);
  // A background run is its own process group: the terminal's ^C is the prompt's, `stop` is
  // the run's.
  if (mode == Mode::Background) {
    ::setpgid(0, 0);
    // Its output still goes to the terminal under `stty tostop`: stopped by SIGTTOU, it could
    // not end when `stop` asks.
    ::signal(SIGTTOU, SIG_IGN);
  }
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  // Commands piped to the prompt are the prompt's: neither the run nor its -c command reads
  // them; nor does a background run read the terminal. A foreground run shares the terminal,
  // as a plain invocation does (input.char, an interactive -c).
  if ((mode == Mode::Background || !::isatty(STDIN_FILENO)) && devnull >= 0)
    ::dup2(devnull, STDIN_FILENO);
  if (analyze && devnull >= 0) ::dup2(devnull, STDOUT_FILENO);
  int rc = 1;
  {
    Session s(std::cerr);
    s.opts = opts;
    s.opts.script_text = script;
    s.opts.have_script_text = true;
    s.opts.script_file.clear();
    if (analyze) s.opts.last_pass = std::min(s.opts.last_pass, 2);
    s.diag.suppress_warnings = s.opts.suppress_warnings;
    s.diag.verbose = s.opts.verbose;
    s.diag.color = colors_wanted();
    try {
      rc = run(s);
    } catch (const std::exception& e) {
      std::cerr << "ukstap: internal error: " << e.what() << "\n";
    }
  }
  std::cout.flush();
  std::cerr.flush();
  std::exit(rc);  // exit, not _exit: the loader's atexit handlers remove the temporary directory
}

// The run's process, started with SIGINT and SIGQUIT ignored here (restored by the caller).
pid_t start_child(RunSession run, const Options& opts, const std::string& script, Mode mode,
                  struct sigaction& old_int, struct sigaction& old_quit) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  // While a foreground child runs, ^C (and ^\) are its: the terminal sends them to the whole
  // foreground group, and this process must outlive them.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  // Ignored before the fork (the child sets its own first thing): no window where a ^C
  // reaches this process with the prompt's disposition.
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  pid_t pid = ::fork();
  if (pid == 0) child(run, opts, script, mode);
  if (pid < 0) std::cerr << "ukstap: cannot start the run: " << std::strerror(errno) << "\n";
  if (pid > 0 && mode == Mode::Background) ::setpgid(pid, pid);  // either side may be first
  return pid;
}

// "the run ended by signal N" for a status a signal ended; the exit status (128+N).
int report_status(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::cerr << "ukstap: the run ended by signal " << sig << " (" << ::strsignal(sig) << ")\n";
    return 128 + sig;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int run_child(RunSession run, const Options& opts, const std::string& script, Mode mode) {
  struct sigaction old_int {}, old_quit {};
  pid_t pid = start_child(run, opts, script, mode, old_int, old_quit);
  if (pid < 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    return 1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  return report_status(status);
}

}  // namespace

int run_script(RunSession run, const Options& opts, const std::string& script) {
  return run_child(run, opts, script, Mode::Foreground);
}

int analyze_script(RunSession run, const Options& opts, const std::string& script) {
  return run_child(run, opts, script, Mode::Analyze);
}

std::string BackgroundRun::start(RunSession run, const Options& opts, const std::string& script) {
  if (running()) return "a run is going already (stop it first)";
  struct sigaction old_int {}, old_quit {};
  pid_t pid = start_child(run, opts, script, Mode::Background, old_int, old_quit);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  if (pid < 0) return "cannot start the run";
  pid_ = pid;
  return "";
}

bool BackgroundRun::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t got = ::waitpid(pid_, &status, WNOHANG);
  if (got == 0 || (got < 0 && errno == EINTR)) return true;
  if (got == pid_) {
    int rc = report_status(status);
    std::cerr << "ukstap: the background run (pid " << pid_ << ") ended, status " << rc << "\n";
  }
  pid_ = 0;
  return false;
}

int BackgroundRun::stop() {
  if (pid_ <= 0) return -1;
  // SIGINT, as ^C to a plain ukstap: end probes, detach, the -c command's group killed.
  ::kill(pid_, SIGINT);
  ::kill(pid_, SIGCONT);  // a run stopped by job control (SIGTTIN, SIGTSTP) must see the SIGINT
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = 0;
  return report_status(status);
}

}  // namespace ukstap::interactive
