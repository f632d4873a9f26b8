// The inode the kernel's user-stack walk sees for a file (see kernel_inode.h).
#include "loader/kernel_inode.h"

#include <sys/mman.h>
#include <unistd.h>

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

bool kernel_inode_of(int prog_fd, const FilePage& page, stp_cfi_inode& key) {
  if (prog_fd < 0 || !page.addr()) return false;
  struct stp_cfi_inode_query q {};
  q.addr = (uint64_t)(uintptr_t)page.addr();
  // A syscall program's context is copied back into ctx_in when it returns.
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &q, .ctx_size_in = sizeof q);
  if (bpf_prog_test_run_opts(prog_fd, &opts) != 0 || !q.found || !q.key.ino) return false;
  key = q.key;
  return true;
}

}  // namespace ukstap::loader
