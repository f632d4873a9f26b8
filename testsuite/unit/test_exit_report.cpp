// loader/exit_report: what pass 5 says at the end. Truth: real children that exit with a status
// or die by a signal (their wait status from the kernel), session counters set here, and the
// lines ukstap prints for them (SystemTap's wording), written here by hand.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>

#include "codegen/module_info.h"
#include "driver/session.h"
#include "loader/exit_report.h"
#include "loader/output.h"

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

TEST_CASE("losses: one WARNING per counter, the larger of the two sides' counts", "[exit_report]") {
  std::ostringstream err;
  ukstap::Session s(err);
  ukstap::codegen::ModuleInfo m;
  ukstap::loader::Output out(s, m);
  struct stp_session session {};
  session.drops = 3;
  session.errors = 1;
  session.skipped = 5;
  session.stacks_lost = 4;
  out.dropped = 7;  // the DROPS records the decoder saw: more than the page says
  out.errors = 2;
  out.malformed = 1;
  ukstap::loader::RunTotals totals{&session, &out};
  ukstap::loader::ExitReport report(s.diag, 0, totals);
  CHECK(report.losses() == 0);
  CHECK(err.str() ==
        "WARNING: 4 stacks were not stored: a stack-id map is full (raise -D MAXSTACKS=N)\n"
        "WARNING: Number of records that could not be decoded: 1\n"
        "WARNING: Number of dropped records: 7\n"
        "WARNING: Number of errors: 2, skipped probes: 5\n");
}

TEST_CASE("losses: nothing lost, nothing said", "[exit_report]") {
  std::ostringstream err;
  ukstap::Session s(err);
  ukstap::codegen::ModuleInfo m;
  ukstap::loader::Output out(s, m);
  struct stp_session session {};
  ukstap::loader::RunTotals totals{&session, &out};
  ukstap::loader::ExitReport report(s.diag, 1, totals);
  CHECK(report.losses() == 0);
  report.user_stacks();    // no user stacks in this run
  report.kernel_stacks();  // nor kernel stacks
  CHECK(err.str().empty());
}

#include "loader/deferred_unwind.h"
#include "loader/unwind_tables.h"
#include "loader/ustack_output.h"
#include "vma-tracker/symbolizer.h"
#include "vma-tracker/tracker.h"

TEST_CASE("user stacks without -v: cut short by a limit, or waiting for a table with no copy",
          "[exit_report]") {
  // Counters set here: 10 walks; 2 hit MAXBACKTRACE, 3 waited for a table not loaded yet, of
  // which user space finished 2 over their stack copies and 1 had none (printed as far as the
  // kernel went). Ends of stacks and of frame-pointer chains are not cuts.
  std::ostringstream err;
  ukstap::Session s(err);
  ukstap::codegen::ModuleInfo m;
  ukstap::loader::Output out(s, m);
  ukstap::vma::Tracker tracker;
  ukstap::sym::Symbolizer sym;
  ukstap::loader::UnwindTables tables(tracker, sym, 0);
  ukstap::loader::UserStacks ustacks(tracker, sym);
  ukstap::loader::DeferredUnwind deferred(tracker, sym, tables);
  struct stp_session session {};
  session.ustack_stops[STP_STOP_END] = 4;
  session.ustack_stops[STP_STOP_FP_END] = 1;
  session.ustack_stops[STP_STOP_DEPTH] = 2;
  session.ustack_stops[STP_STOP_NO_TABLE_YET] = 3;
  deferred.finished = 2;
  deferred.without_copy = 1;
  ukstap::loader::RunTotals totals{&session, &out};
  totals.ustacks = &ustacks;
  totals.deferred = &deferred;
  ukstap::loader::ExitReport(s.diag, 0, totals).user_stacks();
  CHECK(err.str() ==
        "WARNING: 3 of 10 user stacks were cut short: 2 depth limit (MAXBACKTRACE), "
        "1 unwind table not loaded yet (rerun with -v)\n");

  // Every walk that waited was finished: nothing about them.
  std::ostringstream err2;
  ukstap::Session s2(err2);
  deferred.finished = 3;
  deferred.without_copy = 0;
  session.ustack_stops[STP_STOP_DEPTH] = 0;
  ukstap::loader::ExitReport(s2.diag, 0, totals).user_stacks();
  CHECK(err2.str().empty());
}

// Truth: SystemTap's exit line counts every probe run it could not make; the kernel's misses of
// a probe program (stp_probe_*, a syscall dispatcher stp_sys_*) are such runs, the runtime's
// (stp_rt_*) are not the user's probes.
TEST_CASE("losses: the kernel's skipped probe runs join the probes' own count", "[exit_report]") {
  ukstap::loader::KernelSkips k;
  k.add("stp_probe_0", 2);
  k.add("stp_sys_enter_0", 3);
  k.add("stp_rt_kvma_exec", 11);
  k.add("stp_kread_prog", 0);
  CHECK(k.probes == 5);
  CHECK(k.runtime == 11);
  for (int verbose : {0, 1}) {
    std::ostringstream err;
    ukstap::Session s(err);
    ukstap::codegen::ModuleInfo m;
    ukstap::loader::Output out(s, m);
    struct stp_session session {};
    session.skipped = 1;
    ukstap::loader::RunTotals totals{&session, &out};
    totals.kernel_skips = k;
    ukstap::loader::ExitReport report(s.diag, verbose, totals);
    CHECK(report.losses() == 0);
    CHECK(err.str() == std::string("WARNING: Number of errors: 0, skipped probes: 6\n") +
                           (verbose ? "Probe runs skipped by the kernel: 5 (a BPF program already "
                                      "running on that CPU)\n"
                                      "Runtime programs: 11 runs skipped by the kernel (a BPF "
                                      "program already running on that CPU)\n"
                                    : ""));
  }
}

TEST_CASE("losses: the kernel's count unknown is no warning, said under -v", "[exit_report]") {
  for (int verbose : {0, 1}) {
    std::ostringstream err;
    ukstap::Session s(err);
    ukstap::codegen::ModuleInfo m;
    ukstap::loader::Output out(s, m);
    struct stp_session session {};
    ukstap::loader::RunTotals totals{&session, &out};
    totals.kernel_skips.known = false;
    ukstap::loader::ExitReport report(s.diag, verbose, totals);
    CHECK(report.losses() == 0);
    CHECK(err.str() == (verbose ? "Probe runs skipped by the kernel: unknown (its bpf_prog_info "
                                  "has no recursion_misses)\n"
                                : ""));
  }
}
