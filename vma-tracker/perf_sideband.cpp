// Opening the per-CPU dummy events and decoding their rings (see perf_sideband.h).
#include "vma-tracker/perf_sideband.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

namespace ukstap::vma {

namespace {

// "0-3,5,7-8" (/sys/devices/system/cpu/online) -> {0,1,2,3,5,7,8}.
std::vector<int> online_cpus() {
  std::vector<int> cpus;
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string text;
  if (in && std::getline(in, text)) {
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, ',')) {
      int lo = 0, hi = 0;
      if (std::sscanf(part.c_str(), "%d-%d", &lo, &hi) == 2) {
        for (int c = lo; c <= hi; ++c) cpus.push_back(c);
      } else if (std::sscanf(part.c_str(), "%d", &lo) == 1) {
        cpus.push_back(lo);
      }
    }
  }
  if (cpus.empty()) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n; ++c) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

perf_event_attr sideband_attr() {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;
  a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;  // the sample_id trailer's fields
  a.sample_id_all = 1;
  a.mmap = 1;
  a.mmap2 = 1;        // inode, dev, prot and flags with every mapping
  a.mmap_data = 0;    // executable mappings only (perf_sideband.h)
  a.comm = 1;
  a.comm_exec = 1;    // marks the COMM record an exec emits
  a.task = 1;         // FORK and EXIT
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;  // = bpf_ktime_get_ns()
  // Wake a poller once a page of records is pending: drain() runs before every event decode
  // anyway, so polling only has to keep the ring from filling up between events.
  a.watermark = 1;
  a.wakeup_watermark = 4096;
  return a;
}

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The sample_id trailer for sample_type TID|TIME: {u32 pid, tid; u64 time} at the very end.
constexpr size_t kTrailer = 16;

bool decode(const unsigned char* rec, size_t size, SidebandRecord& r) {
  perf_event_header h;
  std::memcpy(&h, rec, sizeof h);
  if (size < sizeof h + kTrailer) return false;
  const unsigned char* body = rec + sizeof h;
  const unsigned char* trailer = rec + size - kTrailer;
  r.time_ns = load<uint64_t>(trailer + 8);
  r.pid = static_cast<int>(load<uint32_t>(trailer));
  r.tid = static_cast<int>(load<uint32_t>(trailer + 4));
  const size_t body_len = size - sizeof h - kTrailer;
  auto name_at = [&](size_t off) {
    if (off >= body_len) return std::string();
    const char* s = reinterpret_cast<const char*>(body + off);
    return std::string(s, strnlen(s, body_len - off));
  };
  // MMAP and MMAP2 start alike: u32 pid, tid; u64 addr, len, pgoff.
  auto mmap_head = [&] {
    r.kind = SidebandRecord::Kind::Mmap;
    r.pid = static_cast<int>(load<uint32_t>(body));
    r.tid = static_cast<int>(load<uint32_t>(body + 4));
    r.addr = load<uint64_t>(body + 8);
    r.len = load<uint64_t>(body + 16);
    r.pgoff = load<uint64_t>(body + 24);
  };
  switch (h.type) {
    case PERF_RECORD_MMAP2:
      // u32 pid, tid; u64 addr, len, pgoff; u32 maj, min; u64 ino, ino_generation;
      // u32 prot, flags; char filename[]
      if (body_len < 64) return false;
      mmap_head();
      if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        r.maj = r.min = 0;  // a build-id instead of the file identity (attr.build_id; unused)
        r.ino = 0;
      } else {
        r.maj = load<uint32_t>(body + 32);
        r.min = load<uint32_t>(body + 36);
        r.ino = load<uint64_t>(body + 40);
      }
      r.prot = load<uint32_t>(body + 56);
      r.flags = load<uint32_t>(body + 60);
      r.filename = name_at(64);
      return true;
    case PERF_RECORD_MMAP:
      // u32 pid, tid; u64 addr, len, pgoff; char filename[]; only executable ones reach us.
      if (body_len < 32) return false;
      mmap_head();
      r.prot = PROT_READ | PROT_EXEC;
      r.filename = name_at(32);
      return true;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
      // u32 pid, ppid, tid, ptid; u64 time
      if (body_len < 24) return false;
      r.kind = h.type == PERF_RECORD_FORK ? SidebandRecord::Kind::Fork : SidebandRecord::Kind::Exit;
      r.pid = static_cast<int>(load<uint32_t>(body));
      r.ppid = static_cast<int>(load<uint32_t>(body + 4));
      r.tid = static_cast<int>(load<uint32_t>(body + 8));
      r.ptid = static_cast<int>(load<uint32_t>(body + 12));
      return true;
    case PERF_RECORD_COMM:
      // u32 pid, tid; char comm[]: only an exec's COMM changes what is mapped.
      if (!(h.misc & PERF_RECORD_MISC_COMM_EXEC) || body_len < 8) return false;
      r.kind = SidebandRecord::Kind::Exec;
      r.pid = static_cast<int>(load<uint32_t>(body));
      r.tid = static_cast<int>(load<uint32_t>(body + 4));
      r.filename = name_at(8);
      return true;
    case PERF_RECORD_LOST:
      // u64 id, lost
      if (body_len < 16) return false;
      r.kind = SidebandRecord::Kind::Lost;
      r.lost = load<uint64_t>(body + 8);
      return true;
    default:
      return false;
  }
}

}  // namespace

PerfSideband::~PerfSideband() { close(); }

void PerfSideband::close() {
  for (Ring& r : rings_) {
    if (r.base) munmap(r.base, r.map_len);
    if (r.fd >= 0) ::close(r.fd);
  }
  rings_.clear();
}

bool PerfSideband::open(size_t ring_pages, std::string& why) {
  close();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  perf_event_attr attr = sideband_attr();
  for (int cpu : online_cpus()) {
    Ring r;
    r.fd = static_cast<int>(
        syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (r.fd < 0) {
      why = "perf_event_open(dummy, cpu " + std::to_string(cpu) + "): " + std::strerror(errno);
      close();
      return false;
    }
    r.map_len = (1 + ring_pages) * page;
    // Writable so the kernel honours data_tail and never overwrites unread records.
    void* base = mmap(nullptr, r.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
    if (base == MAP_FAILED) {
      why = "mmap of the perf ring (cpu " + std::to_string(cpu) + "): " + std::strerror(errno);
      ::close(r.fd);
      close();
      return false;
    }
    r.base = base;
    rings_.push_back(r);
  }
  if (rings_.empty()) {
    why = "no online CPU found";
    return false;
  }
  return true;
}

std::vector<int> PerfSideband::fds() const {
  std::vector<int> out;
  for (const Ring& r : rings_) out.push_back(r.fd);
  return out;
}

size_t PerfSideband::read_all(std::vector<SidebandRecord>& out) {
  const size_t before = out.size();
  for (Ring& r : rings_) read_ring(r, out);
  return out.size() - before;
}

void PerfSideband::read_ring(Ring& r, std::vector<SidebandRecord>& out) {
  auto* meta = static_cast<perf_event_mmap_page*>(r.base);
  // Acquire: the record bytes below data_head are visible once data_head is.
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;  // only we write it
  const auto* data = static_cast<const unsigned char*>(r.base) + meta->data_offset;
  const uint64_t size = meta->data_size;
  while (tail < head) {
    const uint64_t off = tail % size;
    perf_event_header h;
    // Records are 8-byte aligned and the ring size is a multiple of 8: a header never wraps.
    std::memcpy(&h, data + off, sizeof h);
    if (h.size < sizeof h || h.size > head - tail) break;  // torn: should not happen
    const unsigned char* rec = data + off;
    if (off + h.size > size) {
      // The record straddles the end of the ring: reassemble it.
      scratch_.resize(h.size);
      const size_t first = size - off;
      std::memcpy(scratch_.data(), data + off, first);
      std::memcpy(scratch_.data() + first, data, h.size - first);
      rec = scratch_.data();
    }
    SidebandRecord rec_out;
    if (decode(rec, h.size, rec_out)) out.push_back(std::move(rec_out));
    ++records_read_;
    bytes_read_ += h.size;
    tail += h.size;
  }
  // Release: our reads of the records complete before the kernel may reuse their space.
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

}  // namespace ukstap::vma
