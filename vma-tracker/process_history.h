// One process's (tgid's) mappings over time: what was mapped where, from when until when.
//
// Nothing is ever changed except a mapping's until_ns, so a Mapping* handed out stays valid and
// true for as long as the history exists: a replaced mapping keeps its whole old extent and
// lifetime, and the parts of it that survive a partial overlap become new mappings from the
// replacement's time on (the kernel splits a VMA the same way).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "vma-tracker/tracker.h"

namespace ukstap::vma {

// Whether a file backs `m` (then pgoff is a file offset and (dev, ino, path) names the file);
// anonymous memory and the kernel's pseudo mappings ([vdso]) have none.
inline bool is_file_mapping(const Mapping& m) {
  return m.ino != 0 || (!m.path.empty() && m.path[0] == '/');
}

class ProcessHistory {
 public:
  // `m` is mapped at time t (m.since_ns is set to t): live mappings it overlaps end at t.
  const Mapping& map(Mapping m, uint64_t t);
  // Every live mapping ends at t (exec, or a reused pid's old process before its fork copy).
  void end_all(uint64_t t);
  // Adds `m` as it is (a /proc snapshot: since 0) unless it overlaps a live mapping, which is
  // then newer information from a side-band record. True when added.
  bool add_if_free(const Mapping& m);

  // The mapping covering `addr` at time t (since <= t < until), or nullptr.
  const Mapping* find(uint64_t addr, uint64_t t) const;
  // Live mappings, sorted by start, not overlapping.
  std::vector<const Mapping*> live() const;
  // Every mapping ever recorded, in the order they appeared.
  const std::deque<Mapping>& all() const { return all_; }

 private:
  Mapping* add_live(Mapping m);
  void retire(Mapping* m, uint64_t t);

  std::deque<Mapping> all_;                      // owner; deque keeps element addresses
  std::map<uint64_t, Mapping*> live_;            // by start
  std::multimap<uint64_t, const Mapping*> dead_; // by start; may overlap each other
  uint64_t dead_max_len_ = 0;                    // bounds the backward scan in find()
};

}  // namespace ukstap::vma
