#include "loader/target.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

TargetCommand::~TargetCommand() {
  if (park_fd_ >= 0) ::close(park_fd_);
}

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
  pid_t pid = ::fork();
  if (pid < 0) {
    why = std::string("fork: ") + std::strerror(errno);
    ::close(p[0]);
    ::close(p[1]);
    return false;
  }
  if (pid == 0) {
    ::close(p[1]);
    // Default signal state for the command (the parent blocks its signals for a signalfd).
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGPIPE}) ::signal(sig, SIG_DFL);
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
  return true;
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
  // is running the user's command and is dealt with by kill_and_reap() at the end.
  if (park_fd_ < 0) return;
  ::close(park_fd_);
  park_fd_ = -1;
  if (pid_ > 0 && !exited_) {
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    exited_ = true;
  }
}

bool TargetCommand::reap() {
  if (pid_ <= 0 || exited_) return exited_;
  int st;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    exited_ = true;
    status_ = st;
  }
  return exited_;
}

void TargetCommand::kill_and_reap() {
  if (pid_ <= 0 || exited_) return;
  if (park_fd_ >= 0) {
    abandon();
    return;
  }
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
  }
  exited_ = true;
}

}  // namespace ukstap::loader
