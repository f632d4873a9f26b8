// -c CMD: the target command, forked before the module loads and parked until every probe is
// attached (STAP-FORMATS §8).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ukstap::loader {

class TargetCommand {
 public:
  ~TargetCommand();
  // Splits CMD as stap does (wordexp WRDE_NOCMD|WRDE_UNDEF, or `sh -c CMD` when it holds an
  // unquoted shell metacharacter) and checks the program exists. False with a one-line `why`.
  bool prepare(const std::string& cmd, std::string& why);
  // Forks the child; it waits until release() (then execs) or abandon() (then exits 1 quietly).
  bool fork_parked(std::string& why);
  void release();
  void abandon();
  pid_t pid() const { return pid_; }
  // The program file the child will exec ("" for `sh -c CMD`: the shell is not the target).
  const std::string& path() const { return path_; }
  // Reaps the child if it has exited (WNOHANG). True once it is gone; status() is its waitpid status.
  bool reap();
  bool exited() const { return exited_; }
  int status() const { return status_; }
  // Kills a child that is still running (SIGKILL) and reaps it.
  void kill_and_reap();

 private:
  std::vector<std::string> argv_;
  std::string path_;
  pid_t pid_ = 0;
  int park_fd_ = -1;  // write end: one byte releases the child
  bool exited_ = false;
  int status_ = 0;
};

// True when CMD holds an unquoted | & ; < > ( ) { } or a newline.
bool needs_shell(const std::string& cmd);

}  // namespace ukstap::loader
