// The VMA tracker keeps exited processes' mappings bounded (vma-tracker/tracker.h Retention):
// a system-wide run over a busy machine sees tens of thousands of short processes; each kept
// its history forever (~3 KB, 69 -> 204 MB in 60 s of `/bin/true` in a loop).
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <string>

#include "vma-tracker/tracker.h"

using namespace ukstap::vma;

namespace {

// Fake pids above any pid_max (4194304): /proc never has them, so no snapshot interferes.
constexpr int kParent = 6000000, kFirstChild = 6000001;

Mapping exe_map(uint64_t start, const std::string& path, uint64_t ino) {
  Mapping m;
  m.start = start;
  m.end = start + 0x1000;
  m.prot = PROT_READ | PROT_EXEC;
  m.dev = makedev(8, 1);
  m.ino = ino;
  m.path = path;
  return m;
}

// Child i: forked from the parent, execs /bin/c<i> mapped at its own address, exits.
uint64_t addr_of(int i) { return 0x400000 + uint64_t(i) * 0x10000; }
void churn(Tracker& tr, int from, int n) {
  for (int i = from; i < from + n; ++i) {
    const int pid = kFirstChild + i;
    const uint64_t t = 1000 + uint64_t(i) * 10;
    tr.on_fork(pid, kParent, t);
    tr.on_exec(pid, t + 1);
    tr.on_mmap(pid, exe_map(addr_of(i), "/bin/c" + std::to_string(i), 100 + i), t + 2);
    tr.on_exit(pid, t + 3);
  }
}

// Every process is a target (a system-wide script).
void trace_everything(Tracker& tr) {
  TargetSpec all;
  all.system_wide = true;
  tr.set_targets(all);
}

}  // namespace

TEST_CASE("exited processes: a bounded number kept, the latest still resolve", "[tracker][retention]") {
  Tracker tr;
  trace_everything(tr);
  tr.on_mmap(kParent, exe_map(0x10000, "/bin/sh", 1), 1);
  const int n = 5000;
  churn(tr, 0, n);
  tr.drain();
  // Only the parent and the most recently exited stay (the default bound, 1024, plus the
  // parent: far fewer than the 5000 that exited).
  CHECK(tr.known_pids().size() <= 1025);
  CHECK(tr.stats().histories_released >= uint64_t(n - 1024));
  // The last one to exit still resolves at the time of its last event, and after.
  const int last = n - 1;
  const Mapping* m = tr.lookup(kFirstChild + last, addr_of(last) + 0x10, 1000 + uint64_t(last) * 10 + 2);
  REQUIRE(m);
  CHECK(m->path == "/bin/c" + std::to_string(last));
  CHECK(tr.lookup(kFirstChild + last, addr_of(last) + 0x10)->path == m->path);
  // The first one is gone (and no /proc snapshot stands in for it).
  CHECK(tr.lookup(kFirstChild, addr_of(0) + 0x10, 1002) == nullptr);
  // The live parent is never released.
  REQUIRE(tr.lookup(kParent, 0x10800));
  CHECK(tr.lookup(kParent, 0x10800)->path == "/bin/sh");
}

TEST_CASE("exited processes: freed only once the reader passed their records", "[tracker][retention]") {
  Tracker tr;
  trace_everything(tr);
  tr.on_mmap(kParent, exe_map(0x10000, "/bin/sh", 1), 1);
  uint64_t written = 100, read = 0;
  Retention r;
  r.keep = 0;  // nothing kept for late lookups: only the fence holds them
  r.fence = [&] { return written; };
  r.consumed = [&] { return read; };
  tr.set_retention(r);
  churn(tr, 0, 3);  // exit fences: 100
  written = 200;
  churn(tr, 3, 2);  // exit fences: 200
  tr.drain();
  CHECK(tr.known_pids().size() == 6);  // records written before the exits are not read yet
  CHECK(tr.lookup(kFirstChild + 2, addr_of(2), 1000 + 2 * 10 + 2)->path == "/bin/c2");
  read = 150;
  tr.drain();
  CHECK(tr.known_pids().size() == 3);  // the parent and the two exits fenced at 200
  CHECK(tr.lookup(kFirstChild + 2, addr_of(2), 1000 + 2 * 10 + 2) == nullptr);
  CHECK(tr.lookup(kFirstChild + 4, addr_of(4), 1000 + 4 * 10 + 2)->path == "/bin/c4");
  read = 200;
  tr.drain();
  CHECK(tr.known_pids().size() == 1);
}

TEST_CASE("exited processes: a reused pid's new process is not freed by the old exit", "[tracker][retention]") {
  Tracker tr;
  trace_everything(tr);
  Retention r;
  r.keep = 0;
  uint64_t written = 10, read = 0;
  r.fence = [&] { return written; };
  r.consumed = [&] { return read; };
  tr.set_retention(r);
  tr.on_mmap(kParent, exe_map(0x10000, "/bin/sh", 1), 1);
  churn(tr, 0, 1);                     // kFirstChild exits (fence 10)
  tr.on_fork(kFirstChild, kParent, 5000);  // the pid is reused before the reader caught up
  tr.on_mmap(kFirstChild, exe_map(0x900000, "/bin/again", 7), 5001);
  read = 10;
  tr.drain();
  REQUIRE(tr.lookup(kFirstChild, 0x900010, 5002));
  CHECK(tr.lookup(kFirstChild, 0x900010, 5002)->path == "/bin/again");
}

TEST_CASE("mapping serials are never reused", "[tracker][retention]") {
  Tracker tr;
  trace_everything(tr);
  Retention r;
  r.keep = 0;
  tr.set_retention(r);
  tr.on_mmap(kParent, exe_map(0x10000, "/bin/sh", 1), 1);
  churn(tr, 0, 1);
  tr.on_mmap(kFirstChild + 1, exe_map(0x20000, "/bin/x", 2), 100);
  const uint64_t before = tr.lookup(kFirstChild + 1, 0x20010)->serial;
  tr.on_exit(kFirstChild + 1, 101);
  CHECK(tr.lookup(kFirstChild + 1, 0x20010) == nullptr);  // freed at once (keep 0, no fence)
  tr.on_mmap(kFirstChild + 1, exe_map(0x20000, "/bin/x", 2), 200);
  CHECK(tr.lookup(kFirstChild + 1, 0x20010)->serial > before);
}
