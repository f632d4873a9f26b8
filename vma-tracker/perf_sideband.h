// The kernel's side-band records (mmap, fork, exec, exit) read from one perf ring per CPU.
//
// One PERF_COUNT_SW_DUMMY event per online CPU (pid = -1: every task on that CPU) never counts
// anything; it exists for its side-band records: PERF_RECORD_MMAP2 for executable mappings,
// FORK, EXIT, COMM (with PERF_RECORD_MISC_COMM_EXEC on exec) and LOST. Every record carries the
// sample_id trailer {pid, tid, time}, time on CLOCK_MONOTONIC (use_clockid), the clock of
// bpf_ktime_get_ns(), so a BPF event's timestamp can be compared with a mapping's lifetime.
//
// Data mappings (attr.mmap_data) are not requested: stacks only hold addresses in executable
// mappings, and data mmaps are far more frequent (malloc arenas, file reads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ukstap::vma {

struct SidebandRecord {
  enum class Kind { Mmap, Fork, Exec, Exit, Lost };
  Kind kind = Kind::Mmap;
  uint64_t time_ns = 0;      // from the sample_id trailer (CLOCK_MONOTONIC)
  int pid = 0, tid = 0;      // the task's tgid and tid
  int ppid = 0, ptid = 0;    // Fork: the forking task; Exit: the parent
  // Mmap:
  uint64_t addr = 0, len = 0, pgoff = 0;
  uint32_t maj = 0, min = 0, prot = 0, flags = 0;
  uint64_t ino = 0;
  std::string filename;      // Mmap: the kernel's name ("//anon", "[vdso]", a path)
  uint64_t lost = 0;         // Lost: records dropped
};

class PerfSideband {
 public:
  PerfSideband() = default;
  ~PerfSideband();
  PerfSideband(const PerfSideband&) = delete;
  PerfSideband& operator=(const PerfSideband&) = delete;

  // Opens and maps one event per online CPU, `ring_pages` data pages each (a power of two).
  // False with a one-line `why`; nothing stays open then.
  bool open(size_t ring_pages, std::string& why);
  void close();
  bool is_open() const { return !rings_.empty(); }
  std::vector<int> fds() const;

  // Appends every complete record pending in every ring to `out` (ring order within a CPU; the
  // caller orders across CPUs by time) and frees the ring space. Returns the number appended.
  size_t read_all(std::vector<SidebandRecord>& out);
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t records_read() const { return records_read_; }

 private:
  struct Ring {
    int fd = -1;
    void* base = nullptr;   // metadata page followed by the data pages
    size_t map_len = 0;
  };
  void read_ring(Ring& r, std::vector<SidebandRecord>& out);

  std::vector<Ring> rings_;
  std::vector<unsigned char> scratch_;  // a record that wraps around the end of the ring
  uint64_t bytes_read_ = 0, records_read_ = 0;
};

}  // namespace ukstap::vma
