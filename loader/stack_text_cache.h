// The printed text of whole user stacks, kept by what decides it, so a stack printed event after
// event (print_ubacktrace() in a loop's syscall probe) is one lookup and one copy instead of a
// mapping lookup, a frame-cache lookup and a string append per frame (bench/walk_cost.sh
// "stream": the reader spent ~800 ns a 15-frame record on them, docs/DESIGN.md "What a walk
// costs").
//
// A stack's text is a function of (pid, symbol flags, pcs, exact, stop) and of the mapping that
// covered each pc at the event's time (UserStacks::walk; its frame cache already keys a frame's
// text by that mapping). An entry keeps the intersection of those mappings' [since_ns,
// until_ns) and the tracker's generation (vma::Tracker::generation()) it was made under: while
// the generation is the same, the histories are too, so an event whose time falls inside that
// interval finds every pc in the very same mappings and gets the very same text. A stack with
// a pc in no mapping, or whose walk changed the tracker (a /proc snapshot on first sight), is
// not kept. Direct-mapped, kSlots entries: bounded memory, no eviction bookkeeping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ukstap::loader {

class StackTextCache {
 public:
  struct Key {
    int pid;
    uint32_t flags, exact, stop;
    const uint64_t* pcs;
    size_t n;
  };
  // What printing the stack added to UserStacks' counters besides the text.
  struct Value {
    std::string text;
    uint64_t frames = 0, unresolved = 0, cut = 0;
  };

  // The entry for `k` valid at event time `t_ns` under tracker generation `gen`, or null.
  const Value* find(const Key& k, uint64_t t_ns, uint64_t gen) const {
    const Slot& s = slots_[index(k)];
    if (!s.used || s.gen != gen || t_ns < s.lo || t_ns >= s.hi || !same(s, k)) return nullptr;
    return &s.v;
  }
  // Keeps `v` for `k`, valid for event times in [lo, hi) under generation `gen`.
  void put(const Key& k, uint64_t lo, uint64_t hi, uint64_t gen, Value v) {
    if (lo >= hi) return;
    Slot& s = slots_[index(k)];
    s.used = true;
    s.pid = k.pid;
    s.flags = k.flags;
    s.exact = k.exact;
    s.stop = k.stop;
    s.pcs.assign(k.pcs, k.pcs + k.n);
    s.lo = lo;
    s.hi = hi;
    s.gen = gen;
    s.v = std::move(v);
  }

 private:
  static constexpr size_t kSlots = 256;
  struct Slot {
    bool used = false;
    int pid = 0;
    uint32_t flags = 0, exact = 0, stop = 0;
    std::vector<uint64_t> pcs;
    uint64_t lo = 0, hi = 0, gen = 0;
    Value v;
  };
  static size_t index(const Key& k) {
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uint32_t)k.pid ^ ((uint64_t)k.flags << 32);
    for (size_t i = 0; i < k.n; ++i) h = (h ^ k.pcs[i]) * 0x100000001b3ull;
    return (size_t)(h ^ (h >> 29) ^ (h >> 47)) % kSlots;
  }
  static bool same(const Slot& s, const Key& k) {
    return s.pid == k.pid && s.flags == k.flags && s.exact == k.exact && s.stop == k.stop &&
           s.pcs.size() == k.n && (k.n == 0 || std::memcmp(s.pcs.data(), k.pcs, k.n * 8) == 0);
  }
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
};

}  // namespace ukstap::loader
