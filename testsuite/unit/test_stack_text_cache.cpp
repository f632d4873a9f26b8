// The reader's whole-stack text cache (loader/stack_text_cache.h) and the tracker generation it
// relies on (vma::Tracker::generation()): an entry answers only for the same key, the same
// generation and an event time inside the interval it was made for; every change to what
// Tracker::lookup() can return changes the generation.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "loader/stack_text_cache.h"
#include "vma-tracker/tracker.h"

using ukstap::loader::StackTextCache;

TEST_CASE("stack text cache: same key, generation and time window only", "[stack_text_cache]") {
  StackTextCache c;
  std::vector<uint64_t> pcs{0x1000, 0x2000, 0x3000};
  StackTextCache::Key k{42, 0x10, 3, 1, pcs.data(), pcs.size()};
  c.put(k, 100, 200, 7, {"text\n", 3, 1, 0});
  const StackTextCache::Value* v = c.find(k, 150, 7);
  REQUIRE(v);
  CHECK(v->text == "text\n");
  CHECK(v->frames == 3);
  CHECK(v->unresolved == 1);
  CHECK(c.find(k, 100, 7));          // [lo, hi)
  CHECK_FALSE(c.find(k, 99, 7));     // before the mappings' interval
  CHECK_FALSE(c.find(k, 200, 7));    // a mapping replaced at 200
  CHECK_FALSE(c.find(k, 150, 8));    // the tracker changed since
  std::vector<uint64_t> other{0x1000, 0x2000, 0x3008};
  StackTextCache::Key k2{42, 0x10, 3, 1, other.data(), other.size()};
  CHECK_FALSE(c.find(k2, 150, 7));   // another pc
  StackTextCache::Key k3{43, 0x10, 3, 1, pcs.data(), pcs.size()};
  CHECK_FALSE(c.find(k3, 150, 7));   // another process
  StackTextCache::Key k4{42, 0x11, 3, 1, pcs.data(), pcs.size()};
  CHECK_FALSE(c.find(k4, 150, 7));   // other symbol flags
  StackTextCache::Key k5{42, 0x10, 2, 1, pcs.data(), pcs.size()};
  CHECK_FALSE(c.find(k5, 150, 7));   // another exact count
  StackTextCache::Key k6{42, 0x10, 3, 1, pcs.data(), 2};
  CHECK_FALSE(c.find(k6, 150, 7));   // a prefix of the stack
}

TEST_CASE("tracker generation: every history change moves it", "[stack_text_cache]") {
  ukstap::vma::Tracker t;
  uint64_t g = t.generation();
  ukstap::vma::Mapping m;
  m.start = 0x400000;
  m.end = 0x401000;
  m.prot = 5;
  m.path = "/bin/x";
  m.dev = 1;
  m.ino = 2;
  t.on_fork(500, 1, 10);
  CHECK(t.generation() != g);
  g = t.generation();
  t.on_mmap(500, m, 20);
  CHECK(t.generation() != g);
  g = t.generation();
  REQUIRE(t.lookup(500, 0x400100, 30));
  CHECK(t.generation() == g);  // a lookup of a known process changes nothing
  t.on_exec(500, 40);
  CHECK(t.generation() != g);
  g = t.generation();
  t.on_exit(500, 50);
  CHECK(t.generation() != g);
}
