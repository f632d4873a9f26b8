// -c CMD: the target command, forked before the module loads and parked until every probe is
// attached (docs/STAP-FORMATS.md §8).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ukstap::loader {

// The process tree -c starts goes when the run ends (background children of a shell command
// included); the kernel kills the target if ukstap dies (PDEATHSIG, SIGKILL included).
//  - Outside a terminal's foreground (scripts, CI, pipes without a tty) the tree is one process
//    group the target leads: ukstap SIGKILLs the group at exit, and a guardian process forked
//    for that purpose kills it if ukstap itself is killed.
//  - In a terminal's foreground the command stays in ukstap's process group, the shell's job,
//    as with stap -c: ^C, ^Z and a pager later in the pipeline behave as for any job (a group of
//    its own holding the terminal stopped such a pager and kept the terminal on ^Z). ukstap is
//    then the tree's subreaper (orphans come to it) and kills every process descending from it
//    at exit, its own helpers aside. What a SIGKILL of ukstap leaves there is only what the
//    command started (the command itself dies with it).
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
  // Ends the whole tree: SIGKILL to the group (or to every descendant), the target reaped, the
  // guardian dismissed. Idempotent.
  void end_tree();

 private:
  void start_guardian();
  void dismiss_guardian();
  void kill_descendants();
  std::vector<std::string> argv_;
  std::string path_;
  pid_t pid_ = 0;
  int park_fd_ = -1;  // write end: one byte releases the child
  bool exited_ = false, ended_ = false;
  int status_ = 0;
  pid_t guardian_ = 0;
  int guardian_fd_ = -1;  // write end: EOF without a 'q' first means ukstap died
  bool own_group_ = true;  // false in a terminal's foreground (above)
};

// True when CMD holds an unquoted | & ; < > ( ) { } or a newline.
bool needs_shell(const std::string& cmd);

}  // namespace ukstap::loader
