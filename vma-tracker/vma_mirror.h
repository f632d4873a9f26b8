// The kernel mirror of target processes' executable mappings: the BPF hash map whose layout is
// runtime/common/stp_vma.h (tgid -> sorted {start, end, bias, file_id, flags}), read by the
// in-kernel unwinder to turn a pc into (file, file-relative address).
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_set>
#include <vector>

#include "vma-tracker/tracker.h"

namespace ukstap::vma {

class VmaMirror {
 public:
  void set_fd(int map_fd) { fd_ = map_fd; }
  bool active() const { return fd_ >= 0; }
  void set_bias_fn(std::function<uint64_t(const Mapping&)> fn) { bias_fn_ = std::move(fn); }

  // Rewrites process `tgid`'s value from its live mappings (sorted by start, not overlapping;
  // non-executable ones are skipped).
  void write(int tgid, const std::vector<const Mapping*>& live, TrackerStats& stats);
  // Deletes `tgid`'s value if one was written.
  void remove(int tgid, TrackerStats& stats);

 private:
  int fd_ = -1;
  std::function<uint64_t(const Mapping&)> bias_fn_;
  std::unordered_set<int> written_;  // tgids that have a value in the map
  uint32_t gen_ = 0;                 // one counter for all: never repeats for a reused pid
};

}  // namespace ukstap::vma
