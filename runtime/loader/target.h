// -c CMD: the target command, forked before the module loads and parked until every probe is
// attached (STAP-FORMATS §8).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ukstap::loader {

// The process tree -c starts is one process group (the target leads it) and goes as one: at
// ukstap's exit every process still in it is SIGKILLed (background children of a shell
// command included), and if ukstap itself is killed (SIGKILL included) a guardian process
// forked for that purpose kills the group, while the kernel kills the target (PDEATHSIG).
// When ukstap runs in the terminal's foreground the group gets the terminal while the command
// runs (as a shell's foreground job: it can read it, ^C goes to it and its exit ends the run,
// as with stap -c) and ukstap takes it back at the end.
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
  // True once the target has exited (it is not reaped yet: its pid keeps naming the group);
  // status() is its waitpid-style status.
  bool reap();
  bool exited() const { return exited_; }
  int status() const { return status_; }
  // Ends the whole tree: SIGKILL to the group, the target reaped, the terminal taken back, the
  // guardian dismissed. Idempotent.
  void end_tree();

 private:
  void start_guardian();
  void dismiss_guardian();
  std::vector<std::string> argv_;
  std::string path_;
  pid_t pid_ = 0;
  int park_fd_ = -1;  // write end: one byte releases the child
  bool exited_ = false, ended_ = false;
  int status_ = 0;
  pid_t guardian_ = 0;
  int guardian_fd_ = -1;  // write end: EOF without a 'q' first means ukstap died
  bool gave_tty_ = false;
};

// True when CMD holds an unquoted | & ; < > ( ) { } or a newline.
bool needs_shell(const std::string& cmd);

}  // namespace ukstap::loader
