#include "loader/target.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <algorithm>
#include <map>
#include <set>
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
  own_group_ = !(::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp());
  if (!own_group_) ::prctl(PR_SET_CHILD_SUBREAPER, 1);  // the command's orphans stay ukstap's
  bool own_group = own_group_;
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
    // Its own process group (target.h), which ukstap kills as one; killed by the kernel if
    // ukstap dies (kept across exec; a SIGKILLed ukstap cannot do it itself).
    if (own_group) ::setpgid(0, 0);
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
  ::close(p[0]);
  park_fd_ = p[1];
  pid_ = pid;
  if (own_group_) {
    ::setpgid(pid, pid);  // also here, so the group exists before either side goes on
    set_target_group(pid);  // killed by ukstap's own emergency exit (interrupt.h)
    start_guardian();
  }
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
      if (own_group_) {
        ::kill(-pid_, SIGKILL);  // the target (alive or a zombie) still holds the group's id
        set_target_group(0);
      } else {
        kill_descendants();
      }
      int st = 0;
      while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
      }
      if (!exited_) status_ = st;
      exited_ = true;
    }
    ended_ = true;
  }
  dismiss_guardian();
}

// Every process descending from ukstap (the subreaper of the command's tree, target.h) but its
// own helpers, which name themselves "ukstap-*" (the background event closer, the guardian);
// found by their parent pids in /proc, killed the way down until none is left (a process may
// fork while its siblings die; bounded).
void TargetCommand::kill_descendants() {
  pid_t self = ::getpid();
  for (int round = 0; round < 16; ++round) {
    std::map<pid_t, std::vector<pid_t>> children;
    std::set<pid_t> helpers;
    if (DIR* d = ::opendir("/proc")) {
      while (struct dirent* e = ::readdir(d)) {
        char* end = nullptr;
        long pid = std::strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end) continue;
        std::string stat;
        if (!read_file("/proc/" + std::string(e->d_name) + "/stat", stat)) continue;
        size_t close = stat.rfind(')'), open = stat.find('(');
        if (close == std::string::npos || open == std::string::npos) continue;
        if (stat.compare(open + 1, 7, "ukstap-") == 0) helpers.insert((pid_t)pid);
        char state = 0;
        int ppid = 0;
        if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) continue;
        if (state != 'Z') children[ppid].push_back((pid_t)pid);
      }
      ::closedir(d);
    }
    std::vector<pid_t> todo = children[self], found;
    while (!todo.empty()) {
      pid_t p = todo.back();
      todo.pop_back();
      if (helpers.count(p)) continue;
      found.push_back(p);
      for (pid_t c : children[p]) todo.push_back(c);
    }
    if (found.empty()) return;
    for (pid_t p : found) ::kill(p, SIGKILL);
    for (pid_t p : found)  // orphans reparented to ukstap: reaped here (the target is reaped by end_tree)
      if (p != pid_) ::waitpid(p, nullptr, WNOHANG);
  }
}

}  // namespace ukstap::loader
