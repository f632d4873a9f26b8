// The inode the kernel's user-stack walk sees for a file (see kernel_inode.h).
#include "loader/kernel_inode.h"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include <bpf/bpf.h>

#include "unwind/stp_cfi.h"

namespace ukstap::loader {

FilePage::FilePage(int fd) {
  if (fd < 0) return;
  void* p = ::mmap(nullptr, (size_t)::sysconf(_SC_PAGESIZE), PROT_READ, MAP_PRIVATE, fd, 0);
  addr_ = p == MAP_FAILED ? nullptr : p;
}

FilePage& FilePage::operator=(FilePage&& o) noexcept {
  if (this != &o) {
    reset();
    addr_ = o.addr_;
    o.addr_ = nullptr;
  }
  return *this;
}

void FilePage::reset() {
  if (addr_) ::munmap(addr_, (size_t)::sysconf(_SC_PAGESIZE));
  addr_ = nullptr;
}

KernelInode kernel_inode_of(int prog_fd, const FilePage& page, stp_cfi_inode& key) {
  if (prog_fd < 0 || !page.addr()) return KernelInode::kUnasked;
  // -EBUSY: a writer held or waited for ukstap's mmap_lock (another thread's mmap/munmap,
  // khugepaged). Such a writer is done within microseconds to a few milliseconds: a few yields
  // first, then 1 ms sleeps, ~10 ms at most per file (and only when contended).
  constexpr int kTries = 12, kYields = 4;
  for (int i = 0; i < kTries; i++) {
    struct stp_cfi_inode_query q {};
    q.addr = (uint64_t)(uintptr_t)page.addr();
    // A syscall program's context is copied back into ctx_in when it returns.
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &q, .ctx_size_in = sizeof q);
    if (bpf_prog_test_run_opts(prog_fd, &opts) != 0) return KernelInode::kUnasked;
    if (q.rc == -EBUSY) {
      if (i < kYields) {
        ::sched_yield();
      } else {
        struct timespec ms = {0, 1000 * 1000};
        ::nanosleep(&ms, nullptr);
      }
      continue;
    }
    if (q.rc != 0 || !q.found || !q.key.ino) return KernelInode::kUnasked;
    key = q.key;
    return KernelInode::kNamed;
  }
  return KernelInode::kBusy;
}

}  // namespace ukstap::loader
