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
  // The mirror's epoch (stp_vmas_epoch: one mmap'able word, runtime/bpf/stp_bpf_vma_mirror.h),
  // added to after every write and delete: the kernel's caller-chain cache trusts an entry
  // only while it is unchanged. false: it cannot be mapped.
  bool set_epoch_fd(int epoch_fd);
  ~VmaMirror();
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
  void bump_epoch();
  uint64_t* epoch_ = nullptr;        // the mmap'ed stp_vmas_epoch word
  std::unordered_set<int> written_;  // tgids that have a value in the map
  uint32_t gen_ = 0;                 // one counter for all: never repeats for a reused pid
};

}  // namespace ukstap::vma
