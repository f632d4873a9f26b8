// The VMA tracker and task finder (vma-tracker/tracker.h).
//
// Pure-logic tests feed records through on_mmap/on_fork/on_exec/on_exit. Live tests (root; under
// CI=true they run and fail rather than skip) open the real side-band events and compare with
// /proc/PID/maps snapshots that the processes themselves took — parsed here, not by the code
// under test.
#include <catch2/catch.hpp>

#include <bpf/bpf.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/stp_vma.h"
#include "vma-tracker/tracker.h"

using namespace ukstap::vma;

namespace {

// Fake pids above any pid_max (4194304): /proc never has them, so no snapshot interferes.
constexpr int P = 5000001, C = 5000002, G = 5000003, U = 5000009;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

Mapping file_map(uint64_t start, uint64_t end, uint64_t pgoff, const std::string& path,
                 uint64_t ino) {
  Mapping m;
  m.start = start;
  m.end = end;
  m.pgoff = pgoff;
  m.prot = PROT_READ | PROT_EXEC;
  m.dev = makedev(8, 1);
  m.ino = ino;
  m.path = path;
  return m;
}

// Root is needed for system-wide perf events and BPF maps; CI=true means run (and fail) anyway.
bool live_ok() {
  const char* ci = std::getenv("CI");
  if (geteuid() == 0 || (ci && std::string(ci) == "true")) return true;
  WARN("skipping: live tracker tests need root (set CI=true to force them)");
  return false;
}

std::string canonical(const char* path) {
  char buf[PATH_MAX];
  return realpath(path, buf) ? std::string(buf) : std::string(path);
}

// One line of /proc/PID/maps, parsed independently of read_proc_maps.
struct TruthMap {
  uint64_t start = 0, end = 0, pgoff = 0, ino = 0;
  std::string perms, path;
};

std::vector<TruthMap> parse_maps(const std::string& text, bool exec_only) {
  std::vector<TruthMap> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    TruthMap t;
    std::string range, off, dev;
    ls >> range >> t.perms >> off >> dev >> t.ino;
    size_t dash = range.find('-');
    t.start = std::stoull(range.substr(0, dash), nullptr, 16);
    t.end = std::stoull(range.substr(dash + 1), nullptr, 16);
    t.pgoff = std::stoull(off, nullptr, 16);
    std::getline(ls, t.path);
    t.path.erase(0, t.path.find_first_not_of(' ') == std::string::npos
                        ? t.path.size()
                        : t.path.find_first_not_of(' '));
    // [vsyscall] is a fixed kernel page, not a VMA of the process: no record ever reports it.
    if (exec_only && (t.perms[2] != 'x' || t.path == "[vsyscall]")) continue;
    out.push_back(t);
  }
  return out;
}

std::string slurp_file(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_fd(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

void write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w <= 0) _exit(90);
    c += w;
    n -= static_cast<size_t>(w);
  }
}

void write_blob(int fd, const std::string& s) {
  uint64_t n = s.size();
  write_all(fd, &n, sizeof n);
  write_all(fd, s.data(), s.size());
}

// Reads what write_u64/write_blob wrote, in order.
struct Reader {
  std::string data;
  size_t pos = 0;
  uint64_t u64() {
    uint64_t v = 0;
    if (pos + 8 <= data.size()) std::memcpy(&v, data.data() + pos, 8);
    pos += 8;
    return v;
  }
  std::string blob() {
    uint64_t n = u64();
    std::string s = pos + n <= data.size() ? data.substr(pos, n) : std::string();
    pos += n;
    return s;
  }
};

// Every executable mapping of `snap` is what the tracker says `pid` had at time t.
void check_snapshot(Tracker& tr, int pid, const std::string& snap, uint64_t t) {
  auto truth = parse_maps(snap, true);
  REQUIRE(!truth.empty());
  for (const TruthMap& s : truth) {
    INFO("mapping " << std::hex << s.start << "-" << s.end << std::dec << " " << s.path
                    << " at t=" << t);
    const Mapping* m = tr.lookup(pid, s.start, t);
    REQUIRE(m != nullptr);
    CHECK(m->start == s.start);
    CHECK(m->end == s.end);
    CHECK(m->pgoff == s.pgoff);
    CHECK(m->path == s.path);
    CHECK(m->ino == s.ino);
  }
}

pid_t wait_child(pid_t pid) {
  int status = 0;
  pid_t r = waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return r;
}

}  // namespace

// ------------------------------------------------------------------------------ pure logic

TEST_CASE("overlapping mappings split and resolve by time", "[tracker]") {
  Tracker tr;
  TargetSpec all;
  all.system_wide = true;
  tr.set_targets(all);
  tr.on_mmap(P, file_map(0x10000, 0x50000, 0, "/lib/a.so", 11), 10);
  tr.on_mmap(P, file_map(0x20000, 0x30000, 0x7000, "/lib/b.so", 12), 20);

  const Mapping* whole = tr.lookup(P, 0x15000, 15);
  REQUIRE(whole);
  CHECK(whole->start == 0x10000);
  CHECK(whole->end == 0x50000);
  CHECK(whole->until_ns == 20);
  CHECK(tr.lookup(P, 0x25000, 15) == whole);  // before b replaced the middle

  const Mapping* left = tr.lookup(P, 0x15000, 25);
  REQUIRE(left);
  CHECK(left->start == 0x10000);
  CHECK(left->end == 0x20000);
  CHECK(left->pgoff == 0);
  CHECK(left->since_ns == 20);
  const Mapping* mid = tr.lookup(P, 0x25000, 25);
  REQUIRE(mid);
  CHECK(mid->path == "/lib/b.so");
  CHECK(mid->pgoff == 0x7000);
  const Mapping* right = tr.lookup(P, 0x35000, 25);
  REQUIRE(right);
  CHECK(right->start == 0x30000);
  CHECK(right->end == 0x50000);
  CHECK(right->pgoff == 0x20000);  // the file offset moves with the start
  CHECK(right->path == "/lib/a.so");
  CHECK(right->file_id == left->file_id);
  CHECK(right->file_id != mid->file_id);

  CHECK(tr.lookup(P, 0x15000, 5) == nullptr);  // nothing mapped yet
  CHECK(tr.lookup(P, 0x50000, 25) == nullptr);  // end is exclusive
  CHECK(tr.lookup(P, 0x35000) == right);        // latest

  // A module's span: the two surviving pieces of a.so at t=25.
  auto pieces = tr.file_mappings(P, *left, 25);
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[0] == left);
  CHECK(pieces[1] == right);

  // One mapping covering several: all of them end.
  tr.on_mmap(P, file_map(0x0, 0x60000, 0, "/lib/c.so", 13), 30);
  CHECK(tr.lookup(P, 0x25000, 35)->path == "/lib/c.so");
  CHECK(tr.lookup(P, 0x25000, 25) == mid);
  CHECK(mid->until_ns == 30);
}

TEST_CASE("a replacement at the same address: lookup before and after", "[tracker]") {
  Tracker tr;
  tr.on_mmap(P, file_map(0x40000, 0x41000, 0, "/x/first", 21), 100);
  tr.on_mmap(P, file_map(0x40000, 0x41000, 0x1000, "/x/second", 22), 200);
  CHECK(tr.lookup(P, 0x40800, 150)->path == "/x/first");
  CHECK(tr.lookup(P, 0x40800, 199)->path == "/x/first");
  CHECK(tr.lookup(P, 0x40800, 200)->path == "/x/second");
  CHECK(tr.lookup(P, 0x40800)->pgoff == 0x1000);
  CHECK(tr.lookup(P, 0x40800, 99) == nullptr);
}

TEST_CASE("fork copies, exec clears, exit keeps, pid reuse", "[tracker]") {
  Tracker tr;
  TargetSpec all;
  all.system_wide = true;
  tr.set_targets(all);
  tr.on_mmap(P, file_map(0x1000, 0x2000, 0, "/bin/parent", 1), 10);
  tr.on_fork(C, P, 20);
  tr.on_mmap(P, file_map(0x3000, 0x4000, 0, "/lib/late.so", 2), 25);  // after the fork

  const Mapping* copy = tr.lookup(C, 0x1800, 22);
  REQUIRE(copy);
  CHECK(copy->path == "/bin/parent");
  CHECK(copy->since_ns == 20);
  CHECK(tr.lookup(C, 0x1800, 15) == nullptr);  // the child did not exist yet
  CHECK(tr.lookup(C, 0x3800, 30) == nullptr);  // the parent's later mmap is not the child's

  tr.on_exec(C, 40);
  CHECK(tr.lookup(C, 0x1800, 45) == nullptr);
  CHECK(tr.lookup(C, 0x1800, 35) == copy);
  tr.on_mmap(C, file_map(0x5000, 0x6000, 0, "/bin/new", 3), 41);
  CHECK(tr.lookup(C, 0x5800, 45)->path == "/bin/new");

  tr.on_exit(C, 50);
  CHECK(tr.lookup(C, 0x5800, 60)->path == "/bin/new");  // its last events still resolve
  CHECK(tr.lookup(C, 0x5800)->path == "/bin/new");
  CHECK(tr.lookup(C, 0x1800, 35) == copy);

  // The pid is reused by a new child of P: old times see the old process, new times the new.
  tr.on_fork(C, P, 70);
  CHECK(tr.lookup(C, 0x5800, 60)->path == "/bin/new");
  CHECK(tr.lookup(C, 0x5800, 75) == nullptr);
  CHECK(tr.lookup(C, 0x3800, 75)->path == "/lib/late.so");
  auto pids = tr.known_pids();
  CHECK(std::count(pids.begin(), pids.end(), C) == 1);
}

TEST_CASE("file ids: per file, the vDSO its own, anonymous 0", "[tracker]") {
  Tracker tr;
  tr.on_mmap(P, file_map(0x1000, 0x2000, 0, "/lib/a.so", 7), 1);
  tr.on_mmap(P, file_map(0x3000, 0x4000, 0x2000, "/lib/a.so", 7), 2);
  tr.on_mmap(P, file_map(0x5000, 0x6000, 0, "/lib/b.so", 8), 3);
  Mapping vdso;
  vdso.start = 0x7000;
  vdso.end = 0x9000;
  vdso.prot = PROT_READ | PROT_EXEC;
  vdso.path = "[vdso]";
  tr.on_mmap(P, vdso, 4);
  Mapping anon = vdso;
  anon.start = 0xa000;
  anon.end = 0xb000;
  anon.path = "";
  tr.on_mmap(P, anon, 5);
  tr.on_mmap(C, file_map(0x1000, 0x2000, 0, "/lib/a.so", 7), 6);
  tr.on_mmap(C, vdso, 7);

  uint32_t a = tr.lookup(P, 0x1000)->file_id;
  CHECK(a != 0);
  CHECK(tr.lookup(P, 0x3000)->file_id == a);
  CHECK(tr.lookup(C, 0x1000)->file_id == a);  // shared across processes
  CHECK(tr.lookup(P, 0x5000)->file_id != a);
  uint32_t v = tr.lookup(P, 0x7000)->file_id;
  CHECK(v != 0);
  CHECK(v != a);
  CHECK(tr.lookup(C, 0x7000)->file_id == v);
  CHECK(tr.lookup(P, 0xa000)->file_id == 0);
}

TEST_CASE("task finder: target pid, descendants, binaries, system-wide", "[tracker]") {
  Tracker tr;
  TargetSpec spec;
  spec.target_pid = P;
  tr.set_targets(spec);
  tr.on_fork(C, P, 10);
  tr.on_fork(G, C, 20);
  CHECK(tr.is_target(P));
  CHECK(tr.is_target(C));
  CHECK(tr.is_target(G));
  CHECK_FALSE(tr.is_target(U));
  tr.on_fork(U, 1, 30);
  CHECK_FALSE(tr.is_target(U));

  // A real process forked before the tracker existed: its /proc ppid chain.
  TargetSpec self;
  self.target_pid = static_cast<int>(getppid());
  tr.set_targets(self);
  CHECK(tr.is_target(getpid()));

  TargetSpec bins;
  bins.binaries = {"/bin/true"};  // a symlinked directory on merged-/usr systems
  tr.set_targets(bins);
  struct stat st;
  REQUIRE(stat("/bin/true", &st) == 0);
  tr.on_exec(G, 40);
  Mapping exe = file_map(0x1000, 0x2000, 0, canonical("/bin/true"), st.st_ino);
  exe.dev = st.st_dev;
  tr.on_mmap(G, exe, 41);
  tr.on_mmap(G, file_map(0x8000, 0x9000, 0, "/lib/x86_64-linux-gnu/libc.so.6", 99), 42);
  CHECK(tr.is_target(G));
  tr.on_exec(C, 50);
  tr.on_mmap(C, file_map(0x1000, 0x2000, 0, "/usr/bin/false", 1234), 51);
  CHECK_FALSE(tr.is_target(C));
  tr.on_fork(U, G, 60);  // a fork runs the same executable
  CHECK(tr.is_target(U));

  TargetSpec all;
  all.system_wide = true;
  tr.set_targets(all);
  CHECK(tr.is_target(C));
  CHECK(tr.is_target(1));
}

TEST_CASE("exited non-targets are forgotten, targets kept", "[tracker]") {
  Tracker tr;
  TargetSpec spec;
  spec.target_pid = P;
  tr.set_targets(spec);
  tr.on_mmap(P, file_map(0x1000, 0x2000, 0, "/bin/p", 1), 1);
  tr.on_fork(C, P, 2);
  tr.on_mmap(U, file_map(0x1000, 0x2000, 0, "/bin/u", 2), 3);
  tr.on_exit(C, 4);
  tr.on_exit(U, 5);
  CHECK(tr.lookup(C, 0x1000, 4)->path == "/bin/p");
  CHECK(tr.lookup(U, 0x1000, 4) == nullptr);
}

TEST_CASE("read_proc_maps: spaces, (deleted), pseudo names", "[tracker]") {
  char tmpl[] = "/tmp/ukstap-tracker-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const std::string dir = tmpl;
  const std::string cdir = canonical(tmpl);  // the kernel names files by their resolved path
  const std::string path = dir + "/a b (c).bin";
  const long page = sysconf(_SC_PAGESIZE);
  {
    std::ofstream out(path);
    out << std::string(static_cast<size_t>(3 * page), 'x');
  }
  int fd = open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  void* a = mmap(nullptr, static_cast<size_t>(page), PROT_READ, MAP_PRIVATE, fd, page);
  REQUIRE(a != MAP_FAILED);
  close(fd);
  unlink(path.c_str());
  rmdir(dir.c_str());

  auto maps = read_proc_maps(getpid());
  const Mapping* mine = nullptr;
  bool vdso = false, stack = false, anon = false;
  for (const Mapping& m : maps) {
    if (m.start == reinterpret_cast<uint64_t>(a)) mine = &m;
    vdso |= m.path == "[vdso]";
    stack |= m.path == "[stack]";
    anon |= m.path.empty();
  }
  REQUIRE(mine);
  CHECK(mine->path == cdir + "/a b (c).bin (deleted)");
  CHECK(mine->end - mine->start == static_cast<uint64_t>(page));
  CHECK(mine->pgoff == static_cast<uint64_t>(page));
  CHECK(mine->ino == st.st_ino);
  CHECK(mine->dev == st.st_dev);
  CHECK(mine->prot == PROT_READ);
  CHECK(vdso);
  CHECK(stack);
  CHECK(anon);
  CHECK(read_proc_maps(U).empty());
  munmap(a, static_cast<size_t>(page));
}

// ------------------------------------------------------------------------------ live

// A tracker whose targets are this test process and its children, started.
static void start_for_self(Tracker& tr) {
  TargetSpec spec;
  spec.target_pid = getpid();
  tr.set_targets(spec);
  std::string why;
  const bool started = tr.start(why);
  INFO(why);
  REQUIRE(started);
}

TEST_CASE("live: a replaced mapping resolves by time, after the process exited", "[tracker]") {
  if (!live_ok()) return;
  Tracker tr;
  start_for_self(tr);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));

  int pfd[2];
  REQUIRE(pipe(pfd) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(pfd[0]);
    int f1 = open("/bin/true", O_RDONLY), f2 = open("/bin/ls", O_RDONLY);
    if (f1 < 0 || f2 < 0) _exit(2);
    // An address nobody uses: let the kernel choose one, give it back, then claim it.
    void* hole = mmap(nullptr, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(hole, 2 * page);
    void* a = mmap(hole, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED_NOREPLACE, f1, 0);
    if (a != hole) _exit(3);
    uint64_t t1 = now_ns();
    std::string snap1 = slurp_file("/proc/self/maps");
    munmap(a, page);
    void* b = mmap(hole, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED_NOREPLACE, f2,
                   static_cast<off_t>(page));
    if (b != hole) _exit(4);
    uint64_t t2 = now_ns();
    std::string snap2 = slurp_file("/proc/self/maps");
    uint64_t addr = reinterpret_cast<uint64_t>(hole);
    write_all(pfd[1], &addr, 8);
    write_all(pfd[1], &t1, 8);
    write_all(pfd[1], &t2, 8);
    write_blob(pfd[1], snap1);
    write_blob(pfd[1], snap2);
    _exit(0);
  }
  close(pfd[1]);
  Reader r{read_fd(pfd[0])};
  close(pfd[0]);
  wait_child(child);
  tr.drain();

  const uint64_t addr = r.u64(), t1 = r.u64(), t2 = r.u64();
  const std::string snap1 = r.blob(), snap2 = r.blob();
  REQUIRE(addr != 0);

  const Mapping* m1 = tr.lookup(child, addr, t1);
  REQUIRE(m1);
  CHECK(m1->path == canonical("/bin/true"));
  CHECK(m1->pgoff == 0);
  const Mapping* m2 = tr.lookup(child, addr, t2);
  REQUIRE(m2);
  CHECK(m2->path == canonical("/bin/ls"));
  CHECK(m2->pgoff == page);
  CHECK(m1->until_ns <= m2->since_ns);
  CHECK(m1->until_ns > t1);
  CHECK(tr.lookup(child, addr) == m2);  // exited: its last mappings are still there

  check_snapshot(tr, child, snap1, t1);
  check_snapshot(tr, child, snap2, t2);
  CHECK(tr.is_target(child));
  CHECK(tr.stats().mmap_records >= 2);
  CHECK(tr.stats().fork_records >= 1);
  CHECK(tr.stats().exit_records >= 1);
  CHECK(tr.stats().lost_records == 0);
}

TEST_CASE("live: fork + exec, the new image's mappings after it exited", "[tracker]") {
  if (!live_ok()) return;
  Tracker tr;
  start_for_self(tr);
  const std::string parent_snap = slurp_file("/proc/self/maps");

  int pfd[2];
  REQUIRE(pipe(pfd) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(pfd[0]);
    uint64_t t_pre = now_ns();
    write_all(pfd[1], &t_pre, 8);
    // cat reads its own maps: the exec'd image's truth, written by the process itself.
    dup2(pfd[1], 1);
    close(pfd[1]);
    execl("/bin/cat", "cat", "/proc/self/maps", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pfd[1]);
  Reader r{read_fd(pfd[0])};
  close(pfd[0]);
  wait_child(child);
  tr.drain();

  const uint64_t t_pre = r.u64();
  const std::string cat_snap = r.data.substr(8);
  check_snapshot(tr, child, cat_snap, UINT64_MAX);
  bool libc = false;
  for (const TruthMap& s : parse_maps(cat_snap, true)) {
    if (s.path.find("/libc.so.6") == std::string::npos) continue;
    libc = true;
    const Mapping* m = tr.lookup(child, s.start + 16);
    REQUIRE(m);
    CHECK(m->path == s.path);
    CHECK(m->since_ns > t_pre);
    CHECK(m->file_id != 0);
  }
  CHECK(libc);

  // Before the exec the child had the parent's image; after it, not.
  auto parent_exec = parse_maps(parent_snap, true);
  REQUIRE(!parent_exec.empty());
  const TruthMap& own = parent_exec.front();
  const Mapping* before = tr.lookup(child, own.start, t_pre);
  REQUIRE(before);
  CHECK(before->path == own.path);
  CHECK(before->start == own.start);
  CHECK(before->end == own.end);
  const Mapping* after = tr.lookup(child, own.start);
  CHECK((after == nullptr || after->since_ns > t_pre));
  CHECK(tr.stats().exec_records >= 1);
  CHECK(tr.is_target(child));
}

TEST_CASE("live: a thread's tid resolves to its process's mappings", "[tracker]") {
  if (!live_ok()) return;
  Tracker tr;
  start_for_self(tr);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));

  int tid = 0;
  uint64_t addr = 0, t = 0;
  std::string snap;
  std::thread th([&] {
    tid = static_cast<int>(gettid());
    int fd = open("/bin/true", O_RDONLY);
    void* a = mmap(nullptr, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    close(fd);
    if (a == MAP_FAILED) return;
    addr = reinterpret_cast<uint64_t>(a);
    t = now_ns();
    snap = slurp_file("/proc/thread-self/maps");
  });
  th.join();
  REQUIRE(addr != 0);
  tr.drain();

  REQUIRE(tid != getpid());
  const Mapping* by_tid = tr.lookup(tid, addr, t);
  REQUIRE(by_tid);
  CHECK(by_tid == tr.lookup(getpid(), addr, t));
  CHECK(by_tid->path == canonical("/bin/true"));
  check_snapshot(tr, tid, snap, t);
  CHECK(tr.is_target(tid));
  munmap(reinterpret_cast<void*>(addr), page);
}

// The mirror's epoch word (stp_vmas_epoch in runtime/bpf/stp_bpf_vma_mirror.h).
static int epoch_map() {
  LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
  return bpf_map_create(BPF_MAP_TYPE_ARRAY, "stp_vmas_epoch", sizeof(uint32_t), sizeof(uint64_t),
                        1, &o);
}

static uint64_t epoch_of(int fd) {
  uint32_t zero = 0;
  uint64_t v = 0;
  bpf_map_lookup_elem(fd, &zero, &v);
  return v;
}

TEST_CASE("live: the BPF mirror matches a live child's /proc/PID/maps", "[tracker]") {
  if (!live_ok()) return;
  int map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "stp_vmas", sizeof(uint32_t),
                              sizeof(stp_proc_vmas), 64, nullptr);
  INFO("bpf_map_create: " << std::strerror(errno));
  REQUIRE(map_fd >= 0);
  int ep_fd = epoch_map();
  REQUIRE(ep_fd >= 0);
  Tracker tr;
  start_for_self(tr);
  REQUIRE(tr.mirror_to(map_fd, ep_fd));
  // Every write of the mirror changes its epoch (the kernel's chain cache relies on it).
  const uint64_t ep0 = epoch_of(ep_fd);

  int up[2], down[2];
  REQUIRE(pipe(up) == 0);
  REQUIRE(pipe(down) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(up[0]);
    close(down[1]);
    int fd = open("/bin/ls", O_RDONLY);
    void* a = mmap(nullptr, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 4096);
    if (a == MAP_FAILED) _exit(2);
    write_blob(up[1], slurp_file("/proc/self/maps"));
    close(up[1]);
    char c;
    while (read(down[0], &c, 1) > 0) {
    }
    _exit(0);
  }
  close(up[1]);
  close(down[0]);
  Reader r{read_fd(up[0])};
  close(up[0]);
  const std::string snap = r.blob();
  tr.drain();

  auto v = std::make_unique<stp_proc_vmas>();
  uint32_t key = static_cast<uint32_t>(child);
  REQUIRE(bpf_map_lookup_elem(map_fd, &key, v.get()) == 0);
  auto truth = parse_maps(snap, true);
  REQUIRE(v->nr == truth.size());
  CHECK(v->gen >= 1);
  for (size_t i = 0; i < truth.size(); ++i) {
    const stp_vma_entry& e = v->e[i];
    const TruthMap& s = truth[i];
    INFO(s.path);
    CHECK(e.start == s.start);
    CHECK(e.end == s.end);
    CHECK(e.bias == s.start - s.pgoff);
    CHECK(e.flags == (s.path == "[vdso]" ? STP_VMA_VDSO : s.path.empty() ? STP_VMA_JIT : 0u));
    const Mapping* m = tr.lookup(child, s.start);
    REQUIRE(m);
    CHECK(e.file_id == m->file_id);
    CHECK(e.file_id != 0);
  }

  // A bias callback (the symbolizer's PT_LOAD arithmetic) is what the mirror writes.
  CHECK(epoch_of(ep_fd) > ep0);
  const uint64_t ep1 = epoch_of(ep_fd);
  tr.set_bias_fn([](const Mapping& m) { return m.start - m.pgoff + 0x1000; });
  REQUIRE(tr.mirror_to(map_fd, ep_fd));
  CHECK(epoch_of(ep_fd) > ep1);
  CHECK(!tr.mirror_to(map_fd, -1));  // no epoch: nothing is mirrored
  REQUIRE(bpf_map_lookup_elem(map_fd, &key, v.get()) == 0);
  CHECK(v->e[0].bias == truth[0].start - truth[0].pgoff + 0x1000);

  close(down[1]);
  wait_child(child);
  tr.drain();
  CHECK(bpf_map_lookup_elem(map_fd, &key, v.get()) != 0);  // exited: removed
  CHECK(tr.stats().mirror_errors == 0);
  CHECK(tr.stats().mirror_truncated == 0);
  close(map_fd);
  close(ep_fd);
}

TEST_CASE("live: records wrapping around the end of the ring", "[tracker]") {
  if (!live_ok()) return;
  Tracker tr;
  start_for_self(tr);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // Two names of different lengths: record sizes that do not divide the ring, so some
  // records straddle its end. ~5,000 records of ~110 bytes pass through 256 KiB rings twice.
  const char* files[] = {"/bin/true", "/usr/bin/sha256sum"};
  int fds[2] = {open(files[0], O_RDONLY), open(files[1], O_RDONLY)};
  REQUIRE(fds[0] >= 0);
  REQUIRE(fds[1] >= 0);
  struct Seen {
    uint64_t addr, t;
    int which;
  };
  std::vector<Seen> seen;
  for (int i = 0; i < 5000; ++i) {
    int which = (i * 7 / 3) % 2;
    void* a = mmap(nullptr, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fds[which], 0);
    REQUIRE(a != MAP_FAILED);
    seen.push_back({reinterpret_cast<uint64_t>(a), now_ns(), which});
    munmap(a, page);
    if (i % 200 == 199) tr.drain();
  }
  close(fds[0]);
  close(fds[1]);
  tr.drain();
  CHECK(tr.stats().lost_records == 0);
  CHECK(tr.stats().sideband_bytes > 2 * 256 * 1024);
  size_t wrong = 0;
  for (const Seen& s : seen) {
    const Mapping* m = tr.lookup(getpid(), s.addr, s.t);
    if (!m || m->path != canonical(files[s.which]) || m->start != s.addr) ++wrong;
  }
  CHECK(wrong == 0);
}

// ------------------------------------------------------------------------------ cost
// Not run by default: `unit_tests "[.tracker-bench]"`. Numbers go to docs/BENCHMARKS.md.

namespace {

// The workload runs in its own process (forked before any tracker state exists), so the
// tracker's process pays no copy-on-write faults for the workload's forks, as in ukstap.
double cpu_ms_self() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

// Returns the wall time; adds the tracker process's own CPU time (poll + drain) to *cpu_ms.
double workload_ms(int n, Tracker* tr, double* cpu_ms) {
  auto t0 = std::chrono::steady_clock::now();
  pid_t w = fork();
  if (w == 0) {
    char arg0[] = "true";
    char* argv[] = {arg0, nullptr};
    for (int i = 0; i < n; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        execve("/bin/true", argv, environ);
        _exit(127);
      }
      int status;
      waitpid(pid, &status, 0);
    }
    _exit(0);
  }
  int status;
  if (!tr) {
    waitpid(w, &status, 0);
  } else {
    std::vector<pollfd> pfds;
    for (int fd : tr->poll_fds()) pfds.push_back({fd, POLLIN, 0});
    const double c0 = cpu_ms_self();
    for (;;) {
      poll(pfds.data(), pfds.size(), 10);
      tr->drain();
      if (waitpid(w, &status, WNOHANG) == w) break;
    }
    *cpu_ms += cpu_ms_self() - c0;
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("cost of the side-band records per fork+exec", "[.tracker-bench]") {
  if (!live_ok()) return;
  const int n = 500, rounds = 11;
  std::vector<double> off, on, on_mirror;
  double recs = 0, bytes = 0, drain_ms = 0, drain_mirror_ms = 0;
  int map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "stp_vmas", sizeof(uint32_t),
                              sizeof(stp_proc_vmas), STP_VMA_PROCS, nullptr);
  REQUIRE(map_fd >= 0);
  for (int round = 0; round < rounds; ++round) {
    off.push_back(workload_ms(n, nullptr, nullptr));
    {
      Tracker tr;
      TargetSpec all;
      all.system_wide = true;
      tr.set_targets(all);
      std::string why;
      REQUIRE(tr.start(why));
      on.push_back(workload_ms(n, &tr, &drain_ms));
      recs += static_cast<double>(tr.stats().sideband_records) / n / rounds;
      bytes += static_cast<double>(tr.stats().sideband_bytes) / n / rounds;
      CHECK(tr.stats().lost_records == 0);
    }
    {
      Tracker tr;
      TargetSpec all;
      all.system_wide = true;  // every spawn is mirrored: the most map writes
      tr.set_targets(all);
      std::string why;
      REQUIRE(tr.start(why));
      int ep_fd = epoch_map();
      REQUIRE(ep_fd >= 0);
      REQUIRE(tr.mirror_to(map_fd, ep_fd));
      on_mirror.push_back(workload_ms(n, &tr, &drain_mirror_ms));
      CHECK(tr.stats().mirror_errors == 0);
    }
  }
  close(map_fd);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("tracker bench: %d x fork+exec /bin/true, median of %d rounds\n", n, rounds);
  std::printf("  no tracker:                      %.1f ms (%.1f us/spawn)\n", median(off),
              median(off) * 1000 / n);
  std::printf("  tracker, system-wide:            %.1f ms (%.1f us/spawn)\n", median(on),
              median(on) * 1000 / n);
  std::printf("  tracker + mirror, system-wide:   %.1f ms (%.1f us/spawn)\n", median(on_mirror),
              median(on_mirror) * 1000 / n);
  std::printf("  tracker process CPU (poll+drain) per spawn: %.2f us, with the mirror %.2f us\n",
              drain_ms * 1000 / n / rounds, drain_mirror_ms * 1000 / n / rounds);
  std::printf("  side-band per spawn: %.1f records, %.0f bytes\n", recs, bytes);
}
