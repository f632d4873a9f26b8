#include "loader/exit_report.h"

#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <ostream>

#include "driver/diagnostics.h"
#include "common/stp_vma.h"
#include "loader/attach.h"
#include "loader/kstack_output.h"
#include "loader/ksym.h"
#include "loader/output.h"
#include "loader/unwind_tables.h"
#include "loader/ustack_output.h"
#include "loader/deferred_unwind.h"
#include "unwind/stp_unwind.h"
#include "vma-tracker/tracker.h"

namespace ukstap::loader {

void ExitReport::user_stacks() {
  if (!t_.ustacks) return;
  const volatile struct stp_session* session = t_.session;
  static const char* names[] = STP_UNWIND_STOP_NAMES;
  if (verbose_ <= 0) {
    // Without -v: one line when walks were cut short for want of something ukstap could give
    // (depth, a table, a rule, a register), or when a walk that waited for a table was not
    // finished from a stack copy (printed as far as the kernel went, or a value the script
    // took: ubacktrace(), ustack(n)). Not for the ends of stacks or
    // unreadable memory, nor for "mappings unknown": a timer sample of a process that exec'd a
    // moment ago, before the mirror caught up (transient, nearly every profile of a new process
    // has one; -v). Nor for a frame-pointer chain's end or a bad frame after frame-pointer steps:
    // such a chain mostly ends at _start, complete (a profile of short-lived children has ~8 %
    // of those, most of them whole).
    uint64_t cut = 0, total = 0;
    std::string why;
    const DeferredUnwind* deferred = t_.deferred;
    for (int i = 0; i < STP_STOP_NR; i++) {
      uint64_t n = session->ustack_stops[i];
      total += n;
      if (i == STP_STOP_NO_TABLE_YET)  // those not finished here: printed without a stack copy,
        // and the values (ubacktrace(), ucallers(), ustack()): computed in the probe, they are
        // never finished in user space (6.1 guest: usymname(ustack(1)) gave 0x0 silently)
        // and those whose record was lost (reported as dropped records, not as cut short)
        n -= std::min(n, (deferred ? deferred->finished : 0) + session->ustack_unwritten_waits);
      else if (i != STP_STOP_DEPTH && i != STP_STOP_NO_TABLE && i != STP_STOP_INVALID_ROW &&
               i != STP_STOP_UNTRUSTED)
        continue;
      if (!n) continue;
      cut += n;
      // The count before the reason: "depth limit (MAXBACKTRACE) 1" read as MAXBACKTRACE=1.
      why += (why.empty() ? "" : ", ") + std::to_string(n) + " " + names[i];
    }
    if (cut)
      diag_.stream() << "WARNING: " << cut << " of " << total
                     << " user stacks were cut short: " << why << " (rerun with -v)\n";
    return;
  }
  auto& d = diag_.stream();
  d << "User stacks: " << t_.ustacks->stacks << " printed, " << t_.ustacks->frames << " frames ("
    << t_.ustacks->unresolved_frames << " without a symbol); walks ended by:";
  bool any = false;
  for (int i = 0; i < STP_STOP_NR; i++) {
    uint64_t n = session->ustack_stops[i];
    if (!n) continue;
    d << (any ? ", " : " ") << n << " " << names[i];
    any = true;
  }
  d << (any ? "\n" : " none\n");
  if (const DeferredUnwind* w = t_.deferred; w && (w->copies || w->without_copy))
    d << "User stacks: " << w->finished + w->without_copy
      << " walks waited for an unwind table: " << w->finished
      << " finished in user space over a stack copy (" << w->copies << " copies, "
      << (w->copies ? w->copy_bytes / w->copies : 0) << " stack bytes each on average, within "
      << (w->last_ns - w->first_ns) / 1000000 << " ms), " << w->without_copy << " without one\n";
  if (session->ustack_fp_frames)
    d << "User stacks: " << session->ustack_fp_frames
      << " frames found by frame pointers (no unwind table for their code: marked inexact)\n";
  if (t_.tables) {
    if (std::string l = t_.tables->inode_fallback_line(); !l.empty()) d << "User stacks: " << l << "\n";
    for (const std::string& w : t_.tables->warnings) d << "WARNING: " << w << "\n";
  }
  const auto& st = t_.tracker->stats();
  d << "VMA tracker: " << st.mmap_records << " mmap, " << st.fork_records << " fork, "
    << st.exec_records << " exec, " << st.exit_records << " exit records, " << st.lost_records
    << " lost; " << st.proc_snapshots << " /proc maps read\n";
}

void ExitReport::kernel_stacks() {
  if (t_.kstacks && verbose_ > 0)
    diag_.stream() << "Kernel stacks: " << t_.kstacks->stacks << " printed, " << t_.kstacks->frames
                   << " frames (" << t_.kstacks->unresolved_frames << " without a symbol); "
                   << t_.kallsyms->size() << " kernel symbols\n";
}

int ExitReport::losses() {
  auto& d = diag_.stream();
  const volatile struct stp_session* session = t_.session;
  Output& out = *t_.out;
  const uint64_t dropped = std::max<uint64_t>(out.dropped, (uint64_t)session->drops);
  const uint64_t errors = std::max<uint64_t>((uint64_t)out.errors, (uint64_t)session->errors);
  const uint64_t skipped = session->skipped + t_.kernel_skips.probes;
  if (session->stacks_lost)
    d << "WARNING: " << session->stacks_lost
      << " stacks were not stored: a stack-id map is full (raise -D MAXSTACKS=N)\n";
  if (t_.tracker) {
    t_.tracker->drain();  // a LOST record comes with the first record after the ring had room
    const vma::TrackerStats& st = t_.tracker->stats();
    if (st.lost_records)
      d << "WARNING: Number of lost VMA side-band records: " << st.lost_records
        << " (mappings made then are unknown: their stacks may not symbolize)\n";
    if (st.mirror_errors)
      d << "WARNING: Number of failed updates of the kernel's VMA mirror: " << st.mirror_errors
        << " (user stacks of those processes may be cut short)\n";
    if (st.mirror_truncated)
      d << "WARNING: Number of VMA mirror updates cut at " << STP_VMA_MAX
        << " executable mappings: " << st.mirror_truncated
        << " (user stacks through the others may be cut short)\n";
  }
  if (t_.tables && verbose_ <= 0)  // under -v user_stacks() printed them
    for (const std::string& w : t_.tables->warnings) d << "WARNING: " << w << "\n";
  if (out.malformed)
    d << "WARNING: Number of records that could not be decoded: " << out.malformed << "\n";
  if (dropped) d << "WARNING: Number of dropped records: " << dropped << "\n";
  if (errors > 0 || skipped > 0)
    d << "WARNING: Number of errors: " << errors << ", skipped probes: " << skipped << "\n";
  if (verbose_ > 0 && t_.kernel_skips.probes)  // the share of "skipped probes" the kernel made
    d << "Probe runs skipped by the kernel: " << t_.kernel_skips.probes
      << " (a BPF program already running on that CPU)\n";
  if (verbose_ > 0 && t_.kernel_skips.runtime)
    d << "Runtime programs: " << t_.kernel_skips.runtime
      << " runs skipped by the kernel (a BPF program already running on that CPU)\n";
  if (verbose_ > 0 && !t_.kernel_skips.known)
    d << "Probe runs skipped by the kernel: unknown (its bpf_prog_info has no recursion_misses)\n";
  if (int err = out.write_error()) {
    d.flush();
    diag_.fatal("cannot write output to " + out.name() + ": " + std::strerror(err));
    return 1;
  }
  return 0;
}

void KernelSkips::add(const char* name, uint64_t misses) {
  if (std::strncmp(name, "stp_probe_", 10) == 0 || syscall_dispatcher_tracepoint(name))
    probes += misses;
  else
    runtime += misses;
}

KernelSkips read_kernel_skips(struct bpf_object* obj) {
  KernelSkips k;
  if (!obj) return k;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    struct bpf_prog_info info {};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) continue;
    // The kernel fills no more than its own struct: an older one stops before the field.
    if (len < offsetof(struct bpf_prog_info, recursion_misses) + sizeof info.recursion_misses) {
      k.known = false;
      continue;
    }
    k.add(bpf_program__name(prog), info.recursion_misses);
  }
  return k;
}

void BpfRunStats::start() { fd_ = bpf_enable_stats(BPF_STATS_RUN_TIME); }

void BpfRunStats::report(struct bpf_object* obj, std::ostream& err) {
  if (fd_ < 0 || !obj) return;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    int fd = bpf_program__fd(prog);
    struct bpf_prog_info info {};
    uint32_t len = sizeof info;
    if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || !info.run_cnt) continue;
    err << "BPF program " << bpf_program__name(prog) << ": " << info.run_cnt << " runs, "
        << info.run_time_ns / info.run_cnt << " ns per run\n";
  }
  stop();
}

void BpfRunStats::stop() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int report_child_exit(int status, std::ostream& err) {
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    err << "WARNING: Child process exited with status " << WEXITSTATUS(status) << "\n";
    return 1;
  }
  if (WIFSIGNALED(status)) {
    err << "WARNING: Child process exited with signal " << WTERMSIG(status) << " ("
        << ::strsignal(WTERMSIG(status)) << ")\n";
    return 1;
  }
  return 0;
}

}  // namespace ukstap::loader
