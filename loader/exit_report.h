// What pass 5 says on stderr once the probes are detached and the end probes have run: how
// user and kernel stack walks went (-v), each BPF program's run count and time (-vv), one
// WARNING line per counter of things lost on the way (whatever -v says), the output's write
// error, and how the -c command ended.
#pragma once

#include <iosfwd>
#include <string>

#include "common/stp_records.h"

struct bpf_object;

namespace ukstap {
class Diagnostics;
namespace vma {
class Tracker;
}
namespace ksym {
class Kallsyms;
}

namespace loader {

class Output;
class UnwindTables;
class DeferredUnwind;
class UserStacks;
class KernelStacks;

// Runs of the module's BPF programs that the kernel itself skipped, read once they are detached:
// bpf_prog_info.recursion_misses (Linux 5.12 on). A tp_btf/raw_tp/fentry program is not run again
// on a CPU where it is already running (prog->active), a kprobe/uprobe/tracepoint/perf_event one
// not while any such program runs there or a map syscall holds bpf_prog_active; either way the
// handler never runs and only this counter says so. SystemTap counts a probe it could not run
// for want of its context in "skipped probes", so a probe program's misses go there.
struct KernelSkips {
  // stp_probe_* and the syscall dispatchers (syscall_dispatcher_tracepoint(): their misses are
  // syscall probes not run):
  // added to the "skipped probes" of the exit report.
  uint64_t probes = 0;
  // The runtime's own programs (stp_rt_*: the kernel VMA cache; syscall-type helpers, which
  // BPF_PROG_RUN never skips): not the user's probes, so not in stap's figure; a miss there
  // leaves a mapping unknown, which shows as user stacks cut short. Said under -v.
  uint64_t runtime = 0;
  // false when the kernel's bpf_prog_info has no recursion_misses (before 5.12): the count is
  // unknown, not zero and not an error.
  bool known = true;
  void add(const char* program_name, uint64_t misses);
};
// The sum over the programs `obj` loaded (those without a descriptor are skipped).
KernelSkips read_kernel_skips(struct bpf_object* obj);

// Everything the report reads; the pointers are null for what the run did not use.
struct RunTotals {
  const volatile struct stp_session* session;  // the counters the probes kept
  Output* out;
  vma::Tracker* tracker = nullptr;
  UnwindTables* tables = nullptr;
  DeferredUnwind* deferred = nullptr;
  UserStacks* ustacks = nullptr;
  KernelStacks* kstacks = nullptr;
  const ksym::Kallsyms* kallsyms = nullptr;
  KernelSkips kernel_skips = {};
};

class ExitReport {
 public:
  ExitReport(Diagnostics& diag, int verbose, const RunTotals& t) : diag_(diag), verbose_(verbose), t_(t) {}
  // -v: how user-stack walks ended, and what the VMA tracker saw; without -v one WARNING when
  // walks were cut short for want of something ukstap could give.
  void user_stacks();
  // -v: kernel stacks printed and the kernel symbol count.
  void kernel_stacks();
  // One WARNING line per loss counter (the skipped probes: the probes' own count plus the
  // kernel's, KernelSkips), then the output's write error if any (one "ukstap:"
  // line). Returns the exit status these call for (1 on a write error).
  int losses();

 private:
  Diagnostics& diag_;
  int verbose_;
  RunTotals t_;
};

// -vv: the kernel's per-program run counts and run time (BPF_ENABLE_STATS), on only while ukstap
// holds the descriptor, so other tracers are not slowed after it exits.
class BpfRunStats {
 public:
  ~BpfRunStats() { stop(); }
  void start();
  // One line per program of `obj` that ran: "BPF program NAME: N runs, T ns per run"; then stop.
  void report(struct bpf_object* obj, std::ostream& err);
  void stop();

 private:
  int fd_ = -1;
};

// How the -c command ended when it ended by itself (a wait status): a WARNING line and 1 for a
// non-zero exit or a signal, nothing and 0 for success.
int report_child_exit(int status, std::ostream& err);

}  // namespace loader
}  // namespace ukstap
