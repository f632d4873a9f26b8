// The inode the kernel's user-stack walk sees for a file, asked of the kernel itself.
//
// When the VMA mirror lacks a pc (a process's first events after exec or dlopen, before ukstap
// has read its mmap records), the walk takes the mapping's file from bpf_find_vma and finds its
// table by (device, inode) in stp_cfi_inodes. The loader used to key that map by stat() of the
// path, which is not what the walk reads on a stacked filesystem: under overlayfs (containers,
// the 6.1 test bed's root) stat() gives overlayfs's own device while the mapping's file is the
// layer's inode (6.1 guest: libc stat 00:1a, mapped 00:16), so every preloaded file was missed
// and a first event stopped with "unwind table not loaded yet" although its tables were loaded.
// So the loader maps one page of each file it gives a table and asks the kernel
// (bpf/stp_bpf_kvma_cache.h stp_cfi_inode_prog, run with BPF_PROG_TEST_RUN) which inode the
// walk will see, and registers that key (stat()'s only when the kernel cannot be asked).
#pragma once

#include <cstdint>

struct stp_cfi_inode;

namespace ukstap::loader {

// One page of a file mapped read-only into ukstap: the mapping holds the file, no descriptor is
// kept, so the kernel can be asked about the very file whose table was built after the path
// has been replaced and while hundreds of files wait for the module to load.
class FilePage {
 public:
  FilePage() = default;
  // Nothing mapped when fd's file cannot be (fd < 0, a file mmap refuses). The page is never
  // read (an empty file's would SIGBUS): only its address is given to the kernel.
  explicit FilePage(int fd);
  ~FilePage() { reset(); }
  FilePage(FilePage&& o) noexcept : addr_(o.addr_) { o.addr_ = nullptr; }
  FilePage& operator=(FilePage&& o) noexcept;
  FilePage(const FilePage&) = delete;
  FilePage& operator=(const FilePage&) = delete;
  const void* addr() const { return addr_; }
  void reset();

 private:
  void* addr_ = nullptr;
};

// What the kernel said about the file mapped at `page`.
enum class KernelInode {
  kNamed,    // `key` filled: the key the kernel's walk looks the file up by
  kBusy,     // bpf_find_vma's mmap_lock trylock failed every try (a writer held or waited)
  kUnasked,  // no program (prog_fd < 0), no page, the test run failed, or no file mapped there
};
// Asks stp_cfi_inode_prog (its fd). bpf_find_vma only trylocks ukstap's mmap_lock, so a busy
// answer is asked again a few times (yielding, then sleeping 1 ms) before kBusy.
KernelInode kernel_inode_of(int prog_fd, const FilePage& page, stp_cfi_inode& key);

}  // namespace ukstap::loader
