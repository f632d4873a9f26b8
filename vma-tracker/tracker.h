// The task finder and VMA tracker: which processes are targets, and what every process had
// mapped at each moment, kept after the process exits so its stacks still symbolize.
//
// Source of truth: the kernel's own mmap/task side-band records (perf_event_open of a dummy
// software event on every CPU with mmap2/task/comm, clock CLOCK_MONOTONIC = bpf_ktime_get_ns()),
// as perf does: they carry the file name, pgoff and inode of every executable mapping, fork and
// exit, and exec (COMM with PERF_RECORD_MISC_COMM_EXEC). Processes already running when ukstap
// starts are read from /proc/PID/maps (after the perf events are open, so nothing falls in the
// gap). Why perf records and not tracepoints: docs/DESIGN.md ("VMA tracker").
//
// Time: every mapping has the time it appeared (0 for a /proc snapshot) and, once replaced or
// its process exec'd, the time it stopped; lookup(pid, pc, t) returns the mapping that covered pc
// at time t, so an address is resolved against what was mapped when the event happened.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ukstap::vma {

struct Mapping {
  uint64_t start = 0, end = 0;  // [start, end)
  uint64_t pgoff = 0;           // file offset of start
  uint32_t prot = 0;            // PROT_READ|PROT_WRITE|PROT_EXEC
  uint64_t dev = 0, ino = 0;    // file identity as the kernel reported it (0 for anon)
  std::string path;             // "/usr/lib/x86_64-linux-gnu/libc.so.6", "[vdso]", "" (anon)
  uint64_t since_ns = 0;        // CLOCK_MONOTONIC ns when it appeared; 0 = before we started
  uint64_t until_ns = UINT64_MAX;  // when it was replaced/unmapped/exec'd away
  uint32_t file_id = 0;         // the tracker's number for (dev, ino, path); 0 for anon
  uint64_t serial = 0;          // unique for the tracker's lifetime, never reused (cache keys:
                                // a freed Mapping's address can be reused, its serial cannot)
};

// Which processes matter (SystemTap's task finder).
struct TargetSpec {
  bool system_wide = false;             // a script with system-wide probes: everybody
  int target_pid = 0;                   // -c child or -x PID: it, its threads and descendants
  std::vector<std::string> binaries;    // process("PATH") probes: processes running PATH
};

struct TrackerStats {
  uint64_t mmap_records = 0, fork_records = 0, exec_records = 0, exit_records = 0;
  uint64_t lost_records = 0;        // PERF_RECORD_LOST: the perf buffer overflowed
  uint64_t proc_snapshots = 0;      // /proc/PID/maps files read
  uint64_t sideband_records = 0, sideband_bytes = 0;  // everything read from the perf rings
  uint64_t mirror_updates = 0;      // stp_vmas values written
  uint64_t mirror_errors = 0;       // bpf_map_update_elem/delete failures (map full, ...)
  uint64_t mirror_truncated = 0;    // processes with more than STP_VMA_MAX executable mappings
  uint64_t histories_released = 0;  // exited processes whose mappings were freed (retention)
};

// How long an exited process's mappings are kept. A stack record of the process can still be
// in the event ring when its exit record is applied, so its history stays at least until the
// ring's reader has passed every record written before the exit (the fence: the ring's
// producer position then, against its consumer position now). Beyond that, the `keep` most
// recently exited processes stay for late lookups (stacks stored by ustack_id() and printed
// later, addresses resolved in end probes); older ones are freed. Memory is then bounded by
// the live processes plus `keep` exited ones (~3 KB each with a libc's mappings).
struct Retention {
  size_t keep = 1024;
  std::function<uint64_t()> fence;     // position written so far (unset: 0)
  std::function<uint64_t()> consumed;  // position read so far (unset: everything)
};

// Single-threaded: one thread drains, looks up and mirrors.
class Tracker {
 public:
  Tracker();
  ~Tracker();
  Tracker(const Tracker&) = delete;
  Tracker& operator=(const Tracker&) = delete;

  void set_targets(const TargetSpec& spec);

  // Opens the side-band perf events on every online CPU. False with `why` (one line).
  bool start(std::string& why);
  // Reads /proc/PID/maps of every running process (system-wide) or of the targets; call after
  // start(). Also: snapshot_pid() for one process (e.g. -x PID, or a pid seen before its records).
  void snapshot_existing();
  bool snapshot_pid(int pid);

  // File descriptors to poll for readability (one per CPU); drain() reads every pending record.
  std::vector<int> poll_fds() const;
  // Reads all pending side-band records. Call before decoding any event record so every
  // mmap that happened before the event is known.
  void drain();

  // The mapping of process `pid` that covered `addr` at time `t_ns` (UINT64_MAX: latest), or
  // nullptr. Threads resolve to their process (tgid).
  // Pointers stay valid while the process's history is kept (exited non-target processes are
  // dropped at exit: nothing will ever ask about them; exited targets as Retention says).
  const Mapping* lookup(int pid, uint64_t addr, uint64_t t_ns = UINT64_MAX);
  // Changes whenever what lookup() can return may have changed (a record applied, a /proc
  // snapshot, a history freed): a lookup's answer, with the mapping's [since_ns, until_ns), can
  // be kept while this stays the same (loader/stack_text_cache.h).
  uint64_t generation() const;
  // All mappings of `pid` live at `t_ns` whose file is the same as `m`'s (for a module's
  // overall span: [lowest start, highest end)).
  std::vector<const Mapping*> file_mappings(int pid, const Mapping& m, uint64_t t_ns);
  // Which process the number `pid` names now (threads: their process), as a number that changes
  // when the pid is reused by a new process; 0 when no history is kept for it (never seen, or
  // exited and freed by the retention). Never reads /proc.
  uint64_t life(int pid) const;
  // Which process `pid` named at `t_ns`: as life(pid), but the process before the current one
  // when t_ns is before the current one's fork (a reused pid whose previous process's last
  // events are read after the new one forked: held --ctf events, loader/ctf_output.h); 0 when
  // no history is kept for that time (the previous process freed, or never seen).
  uint64_t life(int pid, uint64_t t_ns) const;
  // Every pid that has a history (for "which process had this address" searches).
  std::vector<int> known_pids() const;
  // Whether `pid` is a target under the TargetSpec (descendants of target_pid included).
  bool is_target(int pid) const;

  // Kernel mirror (runtime/common/stp_vma.h): writes each target process's executable mappings
  // into the BPF hash map `map_fd` and keeps it current on every drain(); removes exited ones.
  // `epoch_fd`: the mirror's epoch word (stp_vmas_epoch), added to after every change. false
  // (nothing mirrored) when it cannot be mapped: the kernel's caller-chain cache would trust a
  // mirror that changed.
  bool mirror_to(int map_fd, int epoch_fd);
  // The load bias written to the mirror for a mapping (e.g. from the ELF's PT_LOAD via the
  // symbolizer's ElfFile::bias_for). Unset: start - pgoff, right for the usual ELF layouts
  // where a segment's vaddr - offset equals the first segment's.
  void set_bias_fn(std::function<uint64_t(const Mapping&)> fn);

  // The file id a mapping of (path, dev, ino) gets — the number the mirror writes — for unwind
  // tables loaded before the file is mapped (-d, --ldd).
  uint32_t file_id_for(const std::string& path, uint64_t dev, uint64_t ino);
  // Called for each executable file mapping of a target process as it is recorded (also from
  // /proc snapshots), so unwind tables of dlopen'd or exec'd files get loaded. The callback must
  // not call back into the Tracker.
  void set_new_mapping_fn(std::function<void(const Mapping&)> fn);

  // Bounds the exited processes kept (default: Retention{}, no fence).
  void set_retention(Retention r);

  const TrackerStats& stats() const { return stats_; }

  // For tests: feed records without perf (what drain() does per record).
  void on_mmap(int pid, const Mapping& m, uint64_t t_ns);
  void on_fork(int pid, int ppid, uint64_t t_ns);
  void on_exec(int pid, uint64_t t_ns);
  void on_exit(int pid, uint64_t t_ns);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  TrackerStats stats_;
};

// /proc/PID/maps parsed (also used by tests as the independent truth).
std::vector<Mapping> read_proc_maps(int pid);

}  // namespace ukstap::vma
