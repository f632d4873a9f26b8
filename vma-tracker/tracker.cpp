// The Tracker: side-band records and /proc snapshots -> per-process mapping histories, the
// task finder's verdicts and the kernel mirror (tracker.h; the pieces are perf_sideband,
// process_history, task_finder and vma_mirror).
#include "vma-tracker/tracker.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <deque>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "vma-tracker/perf_sideband.h"
#include "vma-tracker/process_history.h"
#include "vma-tracker/task_finder.h"
#include "vma-tracker/vma_mirror.h"

namespace ukstap::vma {

namespace {

// 128 data pages = 512 KiB per CPU (perf record's default): a burst of ~6,000 mmap records
// between two drains. At 256 KiB a loaded 2-core machine (two test scripts, a compiler, a
// guest) lost 2,629 records while the reader waited for a core.
constexpr size_t kRingPages = 128;

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The kernel's names for what has no file: perf says "//anon", /proc/PID/maps says nothing.
Mapping mapping_from(const SidebandRecord& r) {
  Mapping m;
  m.start = r.addr;
  m.end = r.addr + r.len;
  m.prot = r.prot;
  m.dev = makedev(r.maj, r.min);
  m.ino = r.ino;
  m.path = r.filename.rfind("//anon", 0) == 0 ? std::string() : r.filename;
  // perf reports vm_pgoff for every VMA; without a file it is the page number of the address,
  // which /proc/PID/maps shows as 0.
  m.pgoff = is_file_mapping(m) ? r.pgoff : 0;
  return m;
}

}  // namespace

struct Tracker::Impl {
  std::function<void(const Mapping&)> new_mapping_fn;
  struct Proc {
    ProcessHistory history;
    ExeId exe;
    bool awaiting_exe = false;  // exec'd; the next file mapping is the new main executable
    bool exited = false;
    uint64_t life = 0;          // which process of this pid (a reused pid gets a new one)
    uint64_t since_ns = 0;      // its fork's time (0: not seen forking: since always)
    uint64_t prev_life = 0;     // the process this pid named before that fork (0: none kept)
  };
  // Exited targets in exit order, waiting to be freed (Retention).
  struct Exited {
    int tgid;
    uint64_t life, fence;
  };

  Tracker& self;
  PerfSideband sideband;
  TaskFinder finder;
  VmaMirror mirror;
  std::unordered_map<int, Proc> procs;        // by tgid
  std::unordered_map<int, int> tgid_of_tid;   // threads (tid != tgid) seen being created
  std::unordered_set<int> snapshot_tried;     // pids looked up with no history
  std::map<std::tuple<uint64_t, uint64_t, std::string>, uint32_t> file_ids;
  std::vector<SidebandRecord> pending;        // read, not yet applied (see drain())
  std::set<int> mirror_dirty;                 // tgids whose mirror value is stale
  Retention retention;
  std::deque<Exited> exited;                  // oldest first
  uint64_t lives = 0;
  uint64_t generation = 0;                    // Tracker::generation()

  explicit Impl(Tracker& t) : self(t) {}

  // A thread ended. Lookups by its tid may still come (its last events), so its entry stays,
  // but only the 65536 most recently exited threads' do: thread pools would grow it forever.
  std::deque<std::pair<int, int>> exited_threads;  // (tid, tgid), oldest first
  void thread_exited(int tid, int tgid) {
    exited_threads.emplace_back(tid, tgid);
    if (exited_threads.size() <= 65536) return;
    auto [old_tid, old_tgid] = exited_threads.front();
    exited_threads.pop_front();
    auto it = tgid_of_tid.find(old_tid);
    if (it != tgid_of_tid.end() && it->second == old_tgid) tgid_of_tid.erase(it);
  }

  // A new process under `tgid`: its Proc, fresh.
  Proc& new_life(int tgid) {
    Proc& p = procs[tgid];
    p.life = ++lives;
    return p;
  }

  // Frees exited processes beyond retention.keep whose records have all been read. Also drops
  // queue entries of pids whose Proc is gone or was reused by a newer process.
  void release_exited() {
    uint64_t consumed = retention.consumed ? retention.consumed() : UINT64_MAX;
    while (!exited.empty()) {
      const Exited& e = exited.front();
      auto it = procs.find(e.tgid);
      bool current = it != procs.end() && it->second.life == e.life && it->second.exited;
      if (current && (exited.size() <= retention.keep || e.fence > consumed)) break;
      if (current) {
        ++generation;
        procs.erase(it);
        snapshot_tried.insert(e.tgid);  // gone: no /proc snapshot of whoever reuses the pid
        ++self.stats_.histories_released;
      }
      exited.pop_front();
    }
    // Pids looked up with no history: a set that only grows on a busy system. Forgetting
    // them costs at most one more /proc read per pid.
    if (snapshot_tried.size() > 65536) snapshot_tried.clear();
  }

  int tgid(int pid) const {
    auto it = tgid_of_tid.find(pid);
    return it == tgid_of_tid.end() ? pid : it->second;
  }

  uint32_t file_id(const Mapping& m) {
    if (m.path == "[vdso]") return id_for(0, 0, m.path);
    if (!is_file_mapping(m)) return 0;
    // " (deleted)" is how the kernel names an unlinked file: the same file as before.
    std::string path = m.path;
    static const std::string kDeleted = " (deleted)";
    if (path.size() > kDeleted.size() &&
        path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0)
      path.resize(path.size() - kDeleted.size());
    return id_for(m.dev, m.ino, path);
  }
  uint32_t id_for(uint64_t dev, uint64_t ino, const std::string& path) {
    // One file, one id, whatever name reached it (/lib/... and /usr/lib/... on a merged-/usr
    // system, a -d path and the mapped path): the inode decides when there is one.
    auto [it, added] = file_ids.try_emplace({dev, ino, ino ? std::string() : path}, 0);
    if (added) it->second = static_cast<uint32_t>(file_ids.size());
    return it->second;
  }

  void touched(int tgid) {
    if (mirror.active()) mirror_dirty.insert(tgid);
  }

  bool target(int tgid) const {
    auto it = procs.find(tgid);
    return finder.is_target(tgid, it != procs.end() ? &it->second.exe : nullptr);
  }

  void flush_mirror() {
    for (int pid : mirror_dirty) {
      auto it = procs.find(pid);
      if (it != procs.end() && !it->second.exited && target(pid))
        mirror.write(pid, it->second.history.live(), self.stats_);
      else
        mirror.remove(pid, self.stats_);
    }
    mirror_dirty.clear();
  }

  // A process with no history yet (running before we started): its /proc snapshot, once.
  Proc* history_of(int pid) {
    auto it = procs.find(tgid(pid));
    if (it != procs.end()) return &it->second;
    if (!snapshot_tried.insert(pid).second) return nullptr;
    if (!self.snapshot_pid(pid)) return nullptr;
    it = procs.find(tgid(pid));
    return it == procs.end() ? nullptr : &it->second;
  }

  void apply(const SidebandRecord& r) {
    TrackerStats& st = self.stats_;
    ++generation;
    switch (r.kind) {
      case SidebandRecord::Kind::Mmap:
        ++st.mmap_records;
        self.on_mmap(r.pid, mapping_from(r), r.time_ns);
        break;
      case SidebandRecord::Kind::Fork:
        ++st.fork_records;
        // FORK's ppid is the forking task's process: equal to pid for a new thread.
        if (r.pid == r.ppid) {
          if (r.tid != r.pid) tgid_of_tid[r.tid] = r.pid;
        } else {
          tgid_of_tid.erase(r.pid);  // the number now names a process
          self.on_fork(r.pid, r.ppid, r.time_ns);
        }
        break;
      case SidebandRecord::Kind::Exec:
        ++st.exec_records;
        self.on_exec(r.pid, r.time_ns);
        break;
      case SidebandRecord::Kind::Exit:
        ++st.exit_records;
        if (r.pid == r.tid) self.on_exit(r.pid, r.time_ns);  // the process, not one thread
        else thread_exited(r.tid, r.pid);
        break;
      case SidebandRecord::Kind::Lost:
        st.lost_records += r.lost;
        break;
    }
  }
};

Tracker::Tracker() : impl_(std::make_unique<Impl>(*this)) {}
Tracker::~Tracker() = default;

void Tracker::set_targets(const TargetSpec& spec) { impl_->finder.set_spec(spec); }

bool Tracker::start(std::string& why) { return impl_->sideband.open(kRingPages, why); }

std::vector<int> Tracker::poll_fds() const { return impl_->sideband.fds(); }

void Tracker::drain() {
  Impl& d = *impl_;
  if (d.sideband.is_open()) {
    // Each CPU has its own ring, so records arrive ordered per CPU only; a fork on one CPU
    // and the child's first mmap on another must be applied in time order. Records stamped
    // after this drain began may still be followed by earlier ones not yet read from another
    // ring: they wait for the next drain. Every event the caller is about to decode happened
    // before this call, so nothing it needs waits.
    const uint64_t cutoff = monotonic_ns();
    d.sideband.read_all(d.pending);
    stats_.sideband_records = d.sideband.records_read();
    stats_.sideband_bytes = d.sideband.bytes_read();
    std::stable_sort(d.pending.begin(), d.pending.end(),
                     [](const SidebandRecord& a, const SidebandRecord& b) {
                       return a.time_ns < b.time_ns;
                     });
    size_t n = 0;
    while (n < d.pending.size() && d.pending[n].time_ns < cutoff) d.apply(d.pending[n++]);
    d.pending.erase(d.pending.begin(), d.pending.begin() + static_cast<ptrdiff_t>(n));
  }
  d.flush_mirror();
  d.release_exited();
}

void Tracker::set_retention(Retention r) {
  impl_->retention = std::move(r);
  impl_->release_exited();
}

bool Tracker::snapshot_pid(int pid) {
  Impl& d = *impl_;
  const int tgid = TaskFinder::tgid_of(pid);
  if (tgid <= 0) return false;  // gone
  if (tgid != pid) d.tgid_of_tid[pid] = tgid;
  std::vector<Mapping> maps = read_proc_maps(tgid);
  ++stats_.proc_snapshots;
  ++d.generation;
  if (!d.procs.count(tgid)) d.new_life(tgid);
  Impl::Proc& p = d.procs[tgid];
  for (Mapping& m : maps) {
    // Only executable mappings: the side-band records never report the others, so kept ones
    // could never be superseded. [vsyscall] is no VMA of the process (a fixed kernel page that
    // no record reports either).
    if (!(m.prot & PROT_EXEC) || m.path == "[vsyscall]") continue;
    m.file_id = d.file_id(m);
    m.since_ns = 0;
    m.until_ns = UINT64_MAX;
    if (d.new_mapping_fn && m.file_id && d.target(tgid)) d.new_mapping_fn(m);
    p.history.add_if_free(m);
  }
  if (!p.exe.known) p.exe = TaskFinder::exe_of(tgid);
  d.touched(tgid);
  d.flush_mirror();
  return true;
}

void Tracker::snapshot_existing() {
  Impl& d = *impl_;
  DIR* dir = opendir("/proc");
  if (!dir) return;
  std::vector<int> pids;
  while (dirent* e = readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    pids.push_back(std::atoi(e->d_name));
  }
  closedir(dir);
  for (int pid : pids) {
    if (d.procs.count(pid)) continue;  // records already told us more
    if (d.finder.is_target(pid, nullptr)) snapshot_pid(pid);
  }
}

uint64_t Tracker::generation() const { return impl_->generation; }

const Mapping* Tracker::lookup(int pid, uint64_t addr, uint64_t t_ns) {
  Impl::Proc* p = impl_->history_of(pid);
  return p ? p->history.find(addr, t_ns) : nullptr;
}

std::vector<const Mapping*> Tracker::file_mappings(int pid, const Mapping& m, uint64_t t_ns) {
  std::vector<const Mapping*> out;
  Impl::Proc* p = impl_->history_of(pid);
  if (!p) return out;
  for (const Mapping& x : p->history.all()) {
    if (!(x.since_ns <= t_ns && t_ns < x.until_ns)) continue;
    // Anonymous memory is no file: only the mapping itself belongs to its "module".
    bool same = m.file_id != 0 ? x.file_id == m.file_id : (x.start == m.start && x.end == m.end);
    if (same) out.push_back(&x);
  }
  std::sort(out.begin(), out.end(),
            [](const Mapping* a, const Mapping* b) { return a->start < b->start; });
  return out;
}

std::vector<int> Tracker::known_pids() const {
  std::vector<int> out;
  for (const auto& [pid, p] : impl_->procs) out.push_back(pid);
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t Tracker::life(int pid) const {
  auto it = impl_->procs.find(impl_->tgid(pid));
  return it == impl_->procs.end() ? 0 : it->second.life;
}

uint64_t Tracker::life(int pid, uint64_t t_ns) const {
  auto it = impl_->procs.find(impl_->tgid(pid));
  if (it == impl_->procs.end()) return 0;
  return it->second.since_ns && t_ns < it->second.since_ns ? it->second.prev_life : it->second.life;
}

bool Tracker::is_target(int pid) const { return impl_->target(impl_->tgid(pid)); }

bool Tracker::mirror_to(int map_fd, int epoch_fd) {
  Impl& d = *impl_;
  if (epoch_fd < 0 || !d.mirror.set_epoch_fd(epoch_fd)) return false;
  d.mirror.set_fd(map_fd);
  for (const auto& [pid, p] : d.procs) d.touched(pid);
  d.flush_mirror();
  return true;
}

uint32_t Tracker::file_id_for(const std::string& path, uint64_t dev, uint64_t ino) {
  Mapping m;
  m.path = path;
  m.dev = dev;
  m.ino = ino;
  return impl_->file_id(m);
}

void Tracker::set_new_mapping_fn(std::function<void(const Mapping&)> fn) {
  impl_->new_mapping_fn = std::move(fn);
}

void Tracker::set_bias_fn(std::function<uint64_t(const Mapping&)> fn) {
  impl_->mirror.set_bias_fn(std::move(fn));
}

void Tracker::on_mmap(int pid, const Mapping& m, uint64_t t_ns) {
  Impl& d = *impl_;
  ++d.generation;
  // A process we have not heard of ran before we started: its earlier mappings come from
  // /proc first, then this record supersedes what it overlaps.
  if (!d.procs.count(d.tgid(pid))) d.history_of(pid);
  const int tgid = d.tgid(pid);
  if (!d.procs.count(tgid)) d.new_life(tgid);
  Impl::Proc& p = d.procs[tgid];
  Mapping x = m;
  x.file_id = d.file_id(x);
  if (p.awaiting_exe && is_file_mapping(x)) {
    // The kernel maps the new image's executable before its interpreter and the vDSO.
    p.exe.known = true;
    p.exe.path = x.path;
    p.exe.dev = x.dev;
    p.exe.ino = x.ino;
    p.awaiting_exe = false;
  }
  p.exited = false;
  if (d.new_mapping_fn && x.file_id && (x.prot & PROT_EXEC) && d.target(tgid)) d.new_mapping_fn(x);
  p.history.map(std::move(x), t_ns);
  d.touched(tgid);
}

void Tracker::on_fork(int pid, int ppid, uint64_t t_ns) {
  Impl& d = *impl_;
  ++d.generation;
  if (pid == ppid) return;  // a thread: same address space
  d.finder.note_fork(pid, ppid);
  d.snapshot_tried.erase(pid);
  Impl::Proc* parent = d.history_of(ppid);
  // A reused pid: the previous process's history goes (it exited: its exit record came
  // first), or, if it is still kept for late lookups, its mappings end here.
  auto before = d.procs.find(pid);
  const uint64_t prev_life = before != d.procs.end() ? before->second.life : 0;
  Impl::Proc& child = d.procs[pid];
  child.life = ++d.lives;
  child.since_ns = t_ns;
  child.prev_life = prev_life;
  child.history.end_all(t_ns);
  if (parent) {
    for (const Mapping* m : parent->history.live()) child.history.map(*m, t_ns);
    child.exe = parent->exe;
    child.awaiting_exe = parent->awaiting_exe;
  } else {
    child.exe = ExeId{};
    child.awaiting_exe = false;
  }
  child.exited = false;
  d.touched(pid);
}

void Tracker::on_exec(int pid, uint64_t t_ns) {
  Impl& d = *impl_;
  ++d.generation;
  const int tgid = d.tgid(pid);
  // No /proc snapshot for an unknown pid here: /proc already shows the new image.
  if (!d.procs.count(tgid)) d.new_life(tgid);
  Impl::Proc& p = d.procs[tgid];
  p.history.end_all(t_ns);  // the new image's mmaps follow this record
  p.exe = ExeId{};
  p.awaiting_exe = true;
  p.exited = false;
  d.touched(tgid);
}

void Tracker::on_exit(int pid, uint64_t t_ns) {
  (void)t_ns;  // the mappings stay live: the process's last events resolve against them
  Impl& d = *impl_;
  ++d.generation;
  const int tgid = d.tgid(pid);
  auto it = d.procs.find(tgid);
  if (it == d.procs.end()) return;
  if (!d.target(tgid)) {
    // Nobody will ask about a process no probe was watching: keep memory bounded on a busy
    // system when only some processes are targets.
    d.procs.erase(it);
  } else if (!it->second.exited) {
    it->second.exited = true;
    d.exited.push_back({tgid, it->second.life, d.retention.fence ? d.retention.fence() : 0});
  }
  d.touched(tgid);  // the mirror drops it
  d.release_exited();
}

}  // namespace ukstap::vma
