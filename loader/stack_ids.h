// Stacks the kernel stored under an id (ustack_id()/kstack_id(), bpf/stp_bpf_stackid.h): the
// BPF hash maps "stp_ustacks" and "stp_kstacks", id -> struct stp_ustack + MAXBACKTRACE pcs.
// An id never changes its stack, so each is read from the map once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/stp_records.h"

namespace ukstap::loader {

struct StoredStack {
  stp_ustack h{};               // pid, first event's time, probe id, kind (PCS / NO_USER), exact
  std::vector<uint64_t> pcs;    // h.nr of them
};

class StackIds {
 public:
  // fd of the map and its value size (struct stp_ustack + 8 * MAXBACKTRACE as compiled).
  StackIds(int map_fd, size_t value_size) : fd_(map_fd), value_size_(value_size) {}
  // The stack of an id; null when the map has none (a made-up id, or the map was full).
  const StoredStack* find(uint64_t id) const;
  // Tests: a stack that find() then returns without a map.
  void add(uint64_t id, StoredStack s) { cache_[id] = std::move(s); }

 private:
  int fd_;
  size_t value_size_;
  mutable std::unordered_map<uint64_t, StoredStack> cache_;
};

}  // namespace ukstap::loader
