// loader/interrupt: what an exit from the signal handler removes. Each case runs in a forked
// child (the handler ends the process); the truth is the child's wait status and what `find`
// sees of the files afterwards.
#include "test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "loader/interrupt.h"

using namespace ukstap::loader;
using ukstap::test::run;
using ukstap::test::sh;
using ukstap::test::TempDir;

namespace {

// The wait status of a child running `body` then exiting 0 (the handler's exit is 1).
int in_child(const std::function<void()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);  // the handler's message
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    install_interrupt_handlers();
    body();
    ::_exit(0);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return st;
}

bool exited_with(int st, int code) { return WIFEXITED(st) && WEXITSTATUS(st) == code; }

}  // namespace

TEST_CASE("interrupt: a third signal's exit removes the registered paths, nested and many",
          "[interrupt]") {
  TempDir dir("intr");
  // 600 names of ~40 bytes fill several 4 KiB getdents buffers; two levels of directories.
  REQUIRE(sh("cd '" + dir.path + "' && mkdir -p mod/vmlinux/deeper keep && "
             "for i in $(seq 600); do : > mod/file-with-a-rather-long-name-number-$i; done && "
             ": > mod/vmlinux/vmlinux.h && : > mod/vmlinux/deeper/x && : > keep/k && "
             ": > lone.tmp.1 && : > dropped.tmp.1"));
  int st = in_child([&] {
    add_emergency_removal(dir / "mod");
    add_emergency_removal(dir / "lone.tmp.1");
    add_emergency_removal(dir / "dropped.tmp.1");
    drop_emergency_removal(dir / "dropped.tmp.1");  // written and renamed: no longer ours
    ::raise(SIGINT);
    ::raise(SIGTERM);
    ::raise(SIGINT);  // the third: "too many interrupts", _exit(1)
  });
  CHECK(exited_with(st, 1));
  CHECK(run("cd '" + dir.path + "' && find . | sort") == ".\n./dropped.tmp.1\n./keep\n./keep/k\n");
}

TEST_CASE("interrupt: an exit through main leaves the registered paths to their owners",
          "[interrupt]") {
  TempDir dir("intr");
  REQUIRE(sh("mkdir '" + dir / "mod" + "'"));
  int st = in_child([&] {
    add_emergency_removal(dir / "mod");
    ::raise(SIGINT);  // one signal: recorded, the process goes on
  });
  CHECK(exited_with(st, 0));
  CHECK(run("cd '" + dir.path + "' && find . | sort") == ".\n./mod\n");
}
