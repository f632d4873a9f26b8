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
};

class ExitReport {
 public:
  ExitReport(Diagnostics& diag, int verbose, const RunTotals& t) : diag_(diag), verbose_(verbose), t_(t) {}
  // -v: how user-stack walks ended, and what the VMA tracker saw; without -v one WARNING when
  // walks were cut short for want of something ukstap could give.
  void user_stacks();
  // -v: kernel stacks printed and the kernel symbol count.
  void kernel_stacks();
  // One WARNING line per loss counter, then the output's write error if any (one "ukstap:"
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
