#include "loader/target.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "loader/interrupt.h"
#include "loader/util.h"

namespace ukstap::loader {

bool needs_shell(const std::string& cmd) {
  bool sq = false, dq = false;
  for (size_t i = 0; i < cmd.size(); i++) {
    char c = cmd[i];
    if (sq) {
      if (c == '\'') sq = false;
      continue;
    }
    if (c == '\\') {
      i++;
      continue;
    }
    if (dq) {
      if (c == '"') dq = false;
      continue;
    }
    if (c == '\'') sq = true;
    else if (c == '"') dq = true;
    else if (std::strchr("|&;<>(){}\n", c)) return true;
  }
  return false;
}

TargetCommand::~TargetCommand() { end_tree(); }

bool TargetCommand::prepare(const std::string& cmd, std::string& why) {
  if (needs_shell(cmd)) {
    argv_ = {"/bin/sh", "-c", cmd};
    return true;
  }
  wordexp_t we;
  int rc = ::wordexp(cmd.c_str(), &we, WRDE_NOCMD | WRDE_UNDEF);
  if (rc != 0) {
    if (rc == WRDE_SYNTAX)
      why = "ERROR: wordexp: syntax error (unmatched quotes?) in -c " + cmd;
    else
      why = "ERROR: wordexp: parsing error (" + std::to_string(rc) + ") in -c " + cmd;
    return false;
  }
  for (size_t i = 0; i < we.we_wordc; i++) argv_.push_back(we.we_wordv[i]);
  ::wordfree(&we);
  if (argv_.empty()) {
    why = "the -c command is empty";
    return false;
  }
  if (!find_program(argv_[0], path_)) {
    why = "cannot run the -c command '" + argv_[0] + "': " +
          (argv_[0].find('/') != std::string::npos ? std::strerror(errno ? errno : ENOENT) : "command not found");
    return false;
  }
  return true;
}

bool TargetCommand::fork_parked(std::string& why) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::fflush(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    why = std::string("fork: ") + std::strerror(errno);
    ::close(p[0]);
    ::close(p[1]);
    return false;
  }
  if (pid == 0) {
    ::close(p[1]);
    // Default signal state for the command (ukstap's handlers are ukstap's).
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGPIPE}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Its own process group, which ukstap kills as one; killed by the kernel if ukstap dies
    // (kept across exec; a SIGKILLed ukstap cannot do it itself).
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // ukstap died before the line above
    char go = 0;
    ssize_t n;
    do n = ::read(p[0], &go, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1 || go != 'g') ::_exit(1);  // abandoned: ukstap failed before the probes were live
    ::close(p[0]);
    std::vector<char*> av;
    for (auto& a : argv_) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    ::execvp(av[0], av.data());
    std::fprintf(stderr, "ukstap: cannot run the -c command '%s': %s\n", av[0], std::strerror(errno));
    ::_exit(1);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before either side goes on
  ::close(p[0]);
  park_fd_ = p[1];
  pid_ = pid;
  set_target_group(pid);  // killed by ukstap's own emergency exit (interrupt.h)
  start_guardian();
  return true;
}

// The guardian: a forked ukstap that holds nothing but its end of a pipe (no BPF object, no
// output file: it must not keep a probe or a reader alive) and waits. EOF without a 'q' before
// means ukstap ended without ending the tree (SIGKILL): it kills the group, then exits.
void TargetCommand::start_guardian() {
  int g[2];
  if (::pipe2(g, O_CLOEXEC) != 0) return;  // no guardian: PDEATHSIG still ends the target
  pid_t group = pid_;
  pid_t gp = ::fork();
  if (gp < 0) {
    ::close(g[0]);
    ::close(g[1]);
    return;
  }
  if (gp == 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_IGN);  // ^C is ukstap's
    ::signal(SIGCHLD, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int keep = ::fcntl(g[0], F_DUPFD, 3);  // above stdin/out/err
    int devnull = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) ::dup2(devnull, fd);  // a reader of ukstap's output must not wait for us
    ::dup2(keep, 3);
    if (::close_range(4, ~0U, 0) != 0)  // kernels before 5.9
      for (long fd = 4, max = std::min(::sysconf(_SC_OPEN_MAX), 1L << 20); fd < max; ++fd) ::close((int)fd);
    ::prctl(PR_SET_NAME, "ukstap-guard");
    char c = 0;
    ssize_t n;
    do n = ::read(3, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1 || c != 'q') ::kill(-group, SIGKILL);
    ::_exit(0);
  }
  ::close(g[0]);
  guardian_ = gp;
  guardian_fd_ = g[1];
}

void TargetCommand::dismiss_guardian() {
  if (guardian_fd_ >= 0) {
    char q = 'q';
    while (::write(guardian_fd_, &q, 1) < 0 && errno == EINTR) {
    }
    ::close(guardian_fd_);
    guardian_fd_ = -1;
  }
  if (guardian_ > 0) {
    while (::waitpid(guardian_, nullptr, 0) < 0 && errno == EINTR) {
    }
    guardian_ = 0;
  }
}

void TargetCommand::release() {
  if (park_fd_ < 0) return;
  // In the terminal's foreground, the command's group gets the terminal (a shell's foreground
  // job): it may read it, and ^C is its, as with stap -c.
  if (::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp())
    gave_tty_ = ::tcsetpgrp(STDIN_FILENO, pid_) == 0;
  char go = 'g';
  while (::write(park_fd_, &go, 1) < 0 && errno == EINTR) {
  }
  ::close(park_fd_);
  park_fd_ = -1;
}

void TargetCommand::abandon() {
  // Only a still-parked child is let go here (it exits when its pipe closes); a released one
  // is running the user's command and is dealt with by end_tree() at the end.
  if (park_fd_ < 0) return;
  ::close(park_fd_);
  park_fd_ = -1;
  if (pid_ > 0 && !exited_) {
    set_target_group(0);  // about to be reaped: its id may name another group after
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    exited_ = true;
    ended_ = true;  // reaped: its pid no longer names the group
  }
}

bool TargetCommand::reap() {
  if (pid_ <= 0 || exited_) return exited_;
  // WNOWAIT: the exited target stays a zombie until end_tree(), so its pid (the group's id)
  // cannot be reused by another process before the group is killed.
  siginfo_t si{};
  if (::waitid(P_PID, pid_, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid_) {
    exited_ = true;
    status_ = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0)
                                       : (si.si_status | (si.si_code == CLD_DUMPED ? 0x80 : 0));
  }
  return exited_;
}

void TargetCommand::end_tree() {
  if (pid_ > 0 && !ended_) {
    if (park_fd_ >= 0) {
      abandon();
    } else {
      ::kill(-pid_, SIGKILL);  // the target (alive or a zombie) still holds the group's id
      set_target_group(0);
      int st = 0;
      while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
      }
      if (!exited_) status_ = st;
      exited_ = true;
    }
    ended_ = true;
  }
  if (gave_tty_) {  // back to ukstap's group; SIGTTOU held off, ukstap being in the background
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    ::sigprocmask(SIG_BLOCK, &ttou, &old);
    ::tcsetpgrp(STDIN_FILENO, ::getpgrp());
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    gave_tty_ = false;
  }
  dismiss_guardian();
}

}  // namespace ukstap::loader
