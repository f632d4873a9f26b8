// LTTng-UST-style statedump events for --ctf traces (ctf-writer/statedump.h, bin_info.h).
//
// Truths: the dynamic loader's own view of this process (dl_iterate_phdr: LTTng-UST computes
// baddr = dlpi_addr + the first PT_LOAD's p_vaddr and memsz from the program headers exactly
// so), binutils' readelf for build-ids and debug links; the emission rules against fake
// mappings fed to the VMA tracker.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "ctf-writer/statedump.h"
#include "vma-tracker/tracker.h"

using namespace ukstap;
using ukstap::ctf::FieldDef;
using ukstap::ctf::FieldValue;

namespace {

struct Recorded {
  std::string name;
  uint64_t ts;
  int pid, tid;
  uint64_t ip;
  std::vector<FieldValue> v;
};

class Recorder : public ctf::EventOut {
 public:
  std::vector<std::string> classes;
  std::vector<Recorded> events;
  uint32_t define(const std::string& name, const std::vector<FieldDef>&) override {
    classes.push_back(name);
    return static_cast<uint32_t>(classes.size() - 1);
  }
  void emit(uint32_t cls, uint64_t ts, uint32_t, int pid, int tid, uint64_t ip,
            const std::vector<FieldValue>& v) override {
    events.push_back({classes.at(cls), ts, pid, tid, ip, v});
  }
  std::vector<std::string> names() const {
    std::vector<std::string> r;
    for (const auto& e : events) r.push_back(e.name);
    return r;
  }
};

std::string sh(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

std::string hex(const std::vector<uint8_t>& b) {
  std::string s;
  char t[3];
  for (uint8_t c : b) snprintf(t, sizeof t, "%02x", c), s += t;
  return s;
}

struct LoaderView {
  std::string path;
  uint64_t baddr = 0, memsz = 0;
};

// The loader's record of the object holding `addr`, computed as LTTng-UST's statedump does.
LoaderView loader_view(const void* addr) {
  Dl_info di{};
  REQUIRE(dladdr(addr, &di) != 0);
  struct Ctx {
    const void* base;
    LoaderView v;
  } ctx{di.dli_fbase, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* p) {
        auto* c = static_cast<Ctx*>(p);
        uint64_t lo = UINT64_MAX, hi = 0;
        bool first = true;
        uint64_t first_vaddr = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          if (first) first_vaddr = ph.p_vaddr, first = false;
          lo = std::min<uint64_t>(lo, ph.p_vaddr);
          hi = std::max<uint64_t>(hi, ph.p_vaddr + ph.p_memsz);
        }
        if (info->dlpi_addr + first_vaddr != reinterpret_cast<uint64_t>(c->base)) return 0;
        c->v.baddr = info->dlpi_addr + first_vaddr;
        c->v.memsz = hi - lo;
        return 1;
      },
      &ctx);
  char real[PATH_MAX];
  REQUIRE(realpath(di.dli_fname[0] ? di.dli_fname : "/proc/self/exe", real));
  ctx.v.path = real;
  return ctx.v;
}

const Recorded* find_bin(const Recorder& r, const std::string& path) {
  for (const auto& e : r.events)
    if (e.name == "lttng_ust_statedump:bin_info" && e.v[2].s == path) return &e;
  return nullptr;
}

const Recorded* find_after(const Recorder& r, const std::string& name, uint64_t baddr) {
  for (const auto& e : r.events)
    if (e.name == name && e.v[0].u == baddr) return &e;
  return nullptr;
}

loader::Frame user_frame(uint64_t addr) {
  loader::Frame f;
  f.addr = addr;
  return f;
}

__attribute__((noinline)) uint64_t here() { return reinterpret_cast<uint64_t>(__builtin_return_address(0)); }

}  // namespace

TEST_CASE("statedump bin_info of this process's libc and program equals the loader's view",
          "[ctf-statedump]") {
  vma::Tracker tracker;
  REQUIRE(tracker.snapshot_pid(getpid()));
  Recorder rec;
  ctf::Statedump sd(rec, tracker);
  uint64_t in_libc = reinterpret_cast<uint64_t>(&getpid) + 4;
  uint64_t in_prog = here();
  ctf::StackEvent ev{getpid(), getpid(), 0, 12345};
  sd.before(ev, {user_frame(in_libc), user_frame(in_prog)});

  // start, (bin_info, build_id[, debug_link]) x 2, end — start and end bracket the first dump.
  REQUIRE(rec.events.size() >= 6);
  CHECK(rec.events.front().name == "lttng_ust_statedump:start");
  CHECK(rec.events.back().name == "lttng_ust_statedump:end");
  for (const auto& e : rec.events) {
    CHECK(e.pid == getpid());
    CHECK(e.ts == 12345);
  }
  for (uint64_t addr : {in_libc, in_prog}) {
    LoaderView want = loader_view(reinterpret_cast<const void*>(addr));
    INFO(want.path);
    const Recorded* bin = find_bin(rec, want.path);
    REQUIRE(bin);
    CHECK(bin->v[0].u == want.baddr);
    CHECK(bin->v[1].u == want.memsz);
    CHECK(bin->v[3].u == 1);  // PIE and shared library: ET_DYN
    // build-id and debug link as binutils reads them
    std::string notes = sh("readelf -n '" + want.path + "' 2>/dev/null");
    auto at = notes.find("Build ID: ");
    REQUIRE(at != std::string::npos);
    std::string want_id = notes.substr(at + 10, notes.find('\n', at) - at - 10);
    CHECK(bin->v[4].u == 1);
    const Recorded* bid = find_after(rec, "lttng_ust_statedump:build_id", want.baddr);
    REQUIRE(bid);
    CHECK(hex(bid->v[1].bytes) == want_id);
    std::string link = sh("readelf --string-dump=.gnu_debuglink '" + want.path + "' 2>/dev/null");
    const Recorded* dl = find_after(rec, "lttng_ust_statedump:debug_link", want.baddr);
    if (link.find("]  ") != std::string::npos) {
      REQUIRE(dl);
      CHECK(link.find(dl->v[2].s) != std::string::npos);
      CHECK(bin->v[5].u == 1);
    } else {
      CHECK(!dl);
      CHECK(bin->v[5].u == 0);
    }
  }
  // The same stack again: the readers know both files already.
  size_t n = rec.events.size();
  sd.before(ev, {user_frame(in_libc), user_frame(in_prog)});
  CHECK(rec.events.size() == n);
}

namespace {
constexpr int P = 5000101;

vma::Mapping map_of(uint64_t start, uint64_t end, const std::string& path, uint64_t ino) {
  vma::Mapping m;
  m.start = start;
  m.end = end;
  m.pgoff = 0;
  m.prot = PROT_READ | PROT_EXEC;
  m.dev = makedev(8, 1);
  m.ino = ino;
  m.path = path;
  return m;
}

std::string self_exe() {
  char real[PATH_MAX];
  REQUIRE(realpath("/proc/self/exe", real));
  return real;
}
}  // namespace

TEST_CASE("statedump: new files are added, an exec'd image restarts the dump", "[ctf-statedump]") {
  vma::Tracker tracker;
  std::string a = self_exe();
  std::string b = sh("readlink -f /bin/true");
  b.erase(b.find_last_not_of('\n') + 1);
  // /bin/true has a .gnu_debuglink in Debian's packages; the unit test program has none.
  const bool b_link =
      sh("readelf --string-dump=.gnu_debuglink '" + b + "' 2>/dev/null").find("]  ") != std::string::npos;
  std::vector<std::string> b_events = {"lttng_ust_statedump:bin_info", "lttng_ust_statedump:build_id"};
  if (b_link) b_events.push_back("lttng_ust_statedump:debug_link");
  const uint64_t X = 0x7f0000000000, Y = 0x7f1000000000;
  tracker.on_mmap(P, map_of(X, X + 0x10000, a, 11), 100);
  Recorder rec;
  ctf::Statedump sd(rec, tracker);
  ctf::StackEvent e1{P, P, 1, 200};
  sd.before(e1, {user_frame(X + 0x100)});
  CHECK(rec.names() == std::vector<std::string>{"lttng_ust_statedump:start", "lttng_ust_statedump:bin_info",
                                                "lttng_ust_statedump:build_id", "lttng_ust_statedump:end"});
  CHECK(rec.events[1].v[0].u == X);  // pgoff 0, first PT_LOAD at vaddr 0
  // A second file (dlopen): its bin_info alone, no start (start would make readers forget a).
  tracker.on_mmap(P, map_of(Y, Y + 0x10000, b, 12), 300);
  rec.events.clear();
  sd.before({P, P, 1, 400}, {user_frame(Y + 0x10), user_frame(X + 0x200)});
  CHECK(rec.names() == b_events);
  CHECK(rec.events[0].v[2].s == b);
  // exec: another file where a was; the readers must forget a (start), then learn what is used.
  tracker.on_exec(P, 500);
  tracker.on_mmap(P, map_of(X, X + 0x10000, b, 12), 500);
  rec.events.clear();
  sd.before({P, P, 1, 600}, {user_frame(X + 0x10)});
  std::vector<std::string> restart = {"lttng_ust_statedump:start"};
  restart.insert(restart.end(), b_events.begin(), b_events.end());
  restart.push_back("lttng_ust_statedump:end");
  CHECK(rec.names() == restart);
  CHECK(rec.events[1].v[2].s == b);
  CHECK(sd.stats().restarts == 1);
  // Classes are defined when first used, each once (dense ids: babeltrace2 2.0.4's debug-info
  // filter aborts on a gap).
  std::vector<std::string> classes = {"lttng_ust_statedump:start", "lttng_ust_statedump:bin_info",
                                      "lttng_ust_statedump:build_id", "lttng_ust_statedump:end"};
  if (b_link) classes.push_back("lttng_ust_statedump:debug_link");
  CHECK(rec.classes == classes);
}

TEST_CASE("statedump: a vanished or non-ELF mapped file gives no event", "[ctf-statedump]") {
  char dir[] = "/tmp/ukstap-sd-XXXXXX";
  REQUIRE(mkdtemp(dir));
  std::string gone = std::string(dir) + "/gone.so", text = std::string(dir) + "/text.so";
  REQUIRE(system(("cp /proc/self/exe '" + gone + "' && echo hello > '" + text + "'").c_str()) == 0);
  vma::Tracker tracker;
  const uint64_t X = 0x7f0000000000, Y = 0x7f1000000000;
  tracker.on_mmap(P, map_of(X, X + 0x1000, gone, 21), 100);
  tracker.on_mmap(P, map_of(Y, Y + 0x1000, text, 22), 100);
  unlink(gone.c_str());
  Recorder rec;
  ctf::Statedump sd(rec, tracker);
  sd.before({P, P, 0, 200}, {user_frame(X + 1), user_frame(Y + 1), user_frame(0x1234)});
  CHECK(rec.events.empty());
  CHECK(sd.stats().unreadable_files == 2);
  unlink(text.c_str());
  rmdir(dir);
}

TEST_CASE("statedump: one frame event per user frame, ip at the call for callers",
          "[ctf-statedump]") {
  vma::Tracker tracker;
  Recorder rec;
  ctf::Statedump sd(rec, tracker);
  std::vector<loader::Frame> fr(4);
  fr[0].addr = 0x1000;                                 // leaf: the pc itself
  fr[1].addr = 0x2000;                                 // a return address: the call before it
  fr[2].addr = 0x3000, fr[2].name = "__restore_rt";    // a symbol starts there: kept
  fr[3].addr = 0xffffffff81000000, fr[3].kernel = true;  // kernel frames: none
  sd.after({P, P + 1, 0, 7}, fr);
  REQUIRE(rec.events.size() == 3);
  CHECK(rec.classes == std::vector<std::string>{"ukstap:callstack_user_frame"});
  uint64_t want_ip[] = {0x1000, 0x1fff, 0x3000};
  for (size_t i = 0; i < 3; ++i) {
    CHECK(rec.events[i].ip == want_ip[i]);
    CHECK(rec.events[i].v[0].u == i);           // depth
    CHECK(rec.events[i].v[1].u == fr[i].addr);  // the stack's own entry
    CHECK(rec.events[i].tid == P + 1);
  }
}

TEST_CASE("statedump: a frame address has one frame event per process, again after a restart",
          "[ctf-statedump]") {
  vma::Tracker tracker;
  const std::string a = self_exe();
  std::string b = sh("readlink -f /bin/true");
  b.erase(b.find_last_not_of('\n') + 1);
  const uint64_t X = 0x7f0000000000;
  tracker.on_mmap(P, map_of(X, X + 0x10000, a, 11), 100);
  Recorder rec;
  ctf::Statedump sd(rec, tracker);
  auto stack = [&](int pid, uint64_t t, std::vector<uint64_t> pcs) {
    std::vector<loader::Frame> fr;
    for (uint64_t pc : pcs) fr.push_back(user_frame(pc));
    rec.events.clear();
    sd.before({pid, pid, 0, t}, fr);
    sd.after({pid, pid, 0, t}, fr);
    std::vector<uint64_t> ips;  // the frame events' ips
    for (const auto& e : rec.events)
      if (e.name == "ukstap:callstack_user_frame") ips.push_back(e.ip);
    return ips;
  };
  CHECK(stack(P, 200, {X + 0x100, X + 0x200}) == std::vector<uint64_t>{X + 0x100, X + 0x1ff});
  // The same stack again: no event at all (the readers can name both addresses already).
  CHECK(stack(P, 300, {X + 0x100, X + 0x200}) == std::vector<uint64_t>{});
  CHECK(rec.events.empty());
  // One new caller: its frame alone, at its depth.
  CHECK(stack(P, 350, {X + 0x100, X + 0x300}) == std::vector<uint64_t>{X + 0x2ff});
  CHECK(rec.events.back().v[0].u == 1);
  // Another process with the same addresses: its own frame events (the readers resolve per vpid).
  CHECK(stack(P + 2, 360, {X + 0x100}) == std::vector<uint64_t>{X + 0x100});
  // exec: another file at X. The dump restarts (readers forget the old files and the names
  // they gave), so the same address gets its frame event again.
  tracker.on_exec(P, 500);
  tracker.on_mmap(P, map_of(X, X + 0x10000, b, 12), 500);
  CHECK(stack(P, 600, {X + 0x100}) == std::vector<uint64_t>{X + 0x100});
  CHECK(rec.events.front().name == "lttng_ust_statedump:start");
  CHECK(sd.stats().restarts == 1);
  CHECK(sd.stats().frame_events == 5);
}

TEST_CASE("statedump: exited processes are forgotten with the tracker's; a reused pid starts over",
          "[ctf-statedump]") {
  // Truth: the forks, mappings and exits fed to the tracker, which keeps `keep` exited processes.
  vma::Tracker tracker;
  vma::Retention r;
  r.keep = 8;
  tracker.set_retention(r);
  const std::string a = self_exe();
  const uint64_t X = 0x7f0000000000;
  Recorder rec;
  ctf::Statedump sd(rec, tracker);
  uint64_t t = 100;
  // One short-lived process: fork, its mapping, one stack event, exit. Returns its frame events.
  auto life = [&](int pid) {
    tracker.on_fork(pid, 1, t++);
    tracker.on_mmap(pid, map_of(X, X + 0x10000, a, 11), t++);
    std::vector<loader::Frame> fr = {user_frame(X + 0x100), user_frame(X + 0x200)};
    rec.events.clear();
    sd.before({pid, pid, 0, t}, fr);
    sd.after({pid, pid, 0, t}, fr);
    ++t;
    tracker.on_exit(pid, t++);
    size_t frames = 0;
    for (const auto& e : rec.events) frames += e.name == "ukstap:callstack_user_frame";
    return frames;
  };
  // 20,000 processes, as a long system-wide trace sees them: memory stays bounded.
  size_t most = 0;
  for (int i = 0; i < 20000; ++i) {
    REQUIRE(life(10000 + i) == 2);
    most = std::max<size_t>(most, sd.stats().processes);
  }
  CHECK(most <= 2 * 256 + 8);  // the prune threshold doubles what the tracker keeps, from 256
  CHECK(sd.stats().processes_freed >= 20000 - most);
  // A pid reused after its process was freed: the same file at the same addresses, yet a new
  // process for the readers (they resolve per vpid): a statedump start and its frames again.
  REQUIRE(life(10000) == 2);
  CHECK(rec.events.front().name == "lttng_ust_statedump:start");
  // Reused while the tracker still keeps the exited one (the last 8): starts over too.
  REQUIRE(life(10000 + 19999) == 2);
  CHECK(rec.events.front().name == "lttng_ust_statedump:start");
  // A live process keeps what it was told: its second stack has no event.
  tracker.on_fork(7, 1, t++);
  tracker.on_mmap(7, map_of(X, X + 0x10000, a, 11), t++);
  std::vector<loader::Frame> fr = {user_frame(X + 0x100)};
  sd.before({7, 7, 0, t}, fr);
  sd.after({7, 7, 0, t}, fr);
  for (int i = 0; i < 2000; ++i) life(40000 + i);  // prunes happen meanwhile
  rec.events.clear();
  sd.before({7, 7, 0, t}, fr);
  sd.after({7, 7, 0, t}, fr);
  CHECK(rec.events.empty());
}

TEST_CASE("statedump: a late event of a process whose pid was reused since is still that process's",
          "[ctf-statedump]") {
  // --ctf holds an event up to 100 ms (loader/ctf_output.h): the process may exit and its pid
  // be reused before its last events are written. Truth: the forks, mappings and exit fed to the
  // tracker, with their times; the events' times say which process they belong to.
  vma::Tracker tracker;
  const std::string a = self_exe();
  const uint64_t X = 0x7f0000000000;
  Recorder rec;
  ctf::Statedump sd(rec, tracker);
  std::vector<loader::Frame> fr = {user_frame(X + 0x100), user_frame(X + 0x200)};
  auto starts = [&] {
    size_t n = 0;
    for (const auto& e : rec.events) n += e.name == "lttng_ust_statedump:start";
    return n;
  };
  tracker.on_fork(5, 1, 100);
  tracker.on_mmap(5, map_of(X, X + 0x10000, a, 11), 101);
  sd.before({5, 5, 0, 110}, fr);
  sd.after({5, 5, 0, 110}, fr);
  CHECK(starts() == 1);
  tracker.on_exit(5, 130);
  tracker.on_fork(5, 1, 140);  // the pid reused
  tracker.on_mmap(5, map_of(X, X + 0x10000, a, 11), 141);
  rec.events.clear();
  sd.before({5, 5, 0, 120}, fr);  // the old process's last event, written now
  sd.after({5, 5, 0, 120}, fr);
  CHECK(starts() == 0);
  CHECK(rec.events.empty());  // its frames were told already
  rec.events.clear();
  sd.before({5, 5, 0, 150}, fr);  // the new process: its own dump and frames
  sd.after({5, 5, 0, 150}, fr);
  CHECK(starts() == 1);
  size_t frames = 0;
  for (const auto& e : rec.events) frames += e.name == "ukstap:callstack_user_frame";
  CHECK(frames == 2);
  CHECK(tracker.life(5, 120) != tracker.life(5, 150));
  CHECK(tracker.life(5, 150) == tracker.life(5));
}
