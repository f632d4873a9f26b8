// loader/exit_report: the -c command's exit as pass 5 reports it. Truth: real children that
// exit with a status or die by a signal (their wait status from the kernel), and the lines
// SystemTap's staprun prints for them, written here by hand.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>

#include "loader/exit_report.h"

using ukstap::loader::report_child_exit;

namespace {

int child_status(void (*body)()) {
  pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return st;
}

}  // namespace

TEST_CASE("child exit: success says nothing", "[exit_report]") {
  std::ostringstream err;
  CHECK(report_child_exit(child_status([] { ::_exit(0); }), err) == 0);
  CHECK(err.str().empty());
}

TEST_CASE("child exit: a non-zero status", "[exit_report]") {
  std::ostringstream err;
  CHECK(report_child_exit(child_status([] { ::_exit(3); }), err) == 1);
  CHECK(err.str() == "WARNING: Child process exited with status 3\n");
}

TEST_CASE("child exit: a signal", "[exit_report]") {
  std::ostringstream err;
  CHECK(report_child_exit(child_status([] { ::raise(SIGKILL); }), err) == 1);
  CHECK(err.str() == "WARNING: Child process exited with signal 9 (Killed)\n");
}
