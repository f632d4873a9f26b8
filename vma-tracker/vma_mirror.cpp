// Writing the stp_vmas BPF map (see vma_mirror.h).
#include "vma-tracker/vma_mirror.h"

#include <bpf/bpf.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "common/stp_vma.h"

namespace ukstap::vma {

bool VmaMirror::set_epoch_fd(int epoch_fd) {
  void* p = mmap(nullptr, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, epoch_fd, 0);
  if (p == MAP_FAILED) return false;
  if (epoch_) munmap(epoch_, sizeof(uint64_t));
  epoch_ = static_cast<uint64_t*>(p);
  return true;
}

VmaMirror::~VmaMirror() {
  if (epoch_) munmap(epoch_, sizeof(uint64_t));
}

// After the map's change (a BPF walk reads the epoch before the mirror, with acquire
// ordering: bpf/stp_bpf_vma_mirror.h): atomic, because the kernel adds to it too (at every
// exec), and sequentially consistent, so the add is ordered after the bpf(2) update on every
// architecture (the syscall alone orders it on x86; arm64 needs the release this gives).
void VmaMirror::bump_epoch() {
  if (epoch_) __atomic_fetch_add(epoch_, 1, __ATOMIC_SEQ_CST);
}

void VmaMirror::write(int tgid, const std::vector<const Mapping*>& live, TrackerStats& stats) {
  if (fd_ < 0) return;
  auto v = std::make_unique<stp_proc_vmas>();  // 8 KiB: not on the stack
  std::memset(v.get(), 0, sizeof *v);
  for (const Mapping* m : live) {
    if (!(m->prot & PROT_EXEC)) continue;
    if (v->nr == STP_VMA_MAX) {
      // The kernel then finds no entry for the highest mappings and says so by its own
      // counter; the user sees this one with -v.
      ++stats.mirror_truncated;
      break;
    }
    stp_vma_entry& e = v->e[v->nr++];
    e.start = m->start;
    e.end = m->end;
    e.bias = bias_fn_ ? bias_fn_(*m) : m->start - m->pgoff;
    e.file_id = m->file_id;
    if (m->path == "[vdso]")
      e.flags = STP_VMA_VDSO;
    else if (m->file_id == 0)
      e.flags = STP_VMA_JIT;  // no file behind it: no unwind table can exist
  }
  v->gen = ++gen_;
  const uint32_t key = static_cast<uint32_t>(tgid);
  if (bpf_map_update_elem(fd_, &key, v.get(), BPF_ANY) == 0) {
    bump_epoch();
    written_.insert(tgid);
    ++stats.mirror_updates;
  } else {
    ++stats.mirror_errors;  // typically E2BIG: more than STP_VMA_PROCS processes
  }
}

void VmaMirror::remove(int tgid, TrackerStats& stats) {
  if (fd_ < 0 || written_.erase(tgid) == 0) return;
  const uint32_t key = static_cast<uint32_t>(tgid);
  // ENOENT is no loss: the kernel side drops a process's value itself at exec
  // (stp_rt_exec_seed in bpf/stp_bpf_kvma_cache.h).
  if (bpf_map_delete_elem(fd_, &key) != 0 && errno != ENOENT) ++stats.mirror_errors;
  bump_epoch();
}

}  // namespace ukstap::vma
