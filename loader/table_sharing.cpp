// One unwind table for every file of the same content (see table_sharing.h).
#include "loader/table_sharing.h"

#include <sys/sysmacros.h>

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

#include "unwind/stp_cfi.h"

namespace ukstap::loader {

bool share_table(int files_fd, uint32_t twin_id, uint32_t file_id, std::string& why) {
  // The twin's entry as written, whatever it holds (base, rows, page index, delta: all the
  // same for the same content), under this file's id.
  struct stp_cfi_file f {};
  if (bpf_map_lookup_elem(files_fd, &twin_id, &f) != 0) {
    why = std::string("its twin's table is not loaded: ") + std::strerror(errno);
    return false;
  }
  if (bpf_map_update_elem(files_fd, &file_id, &f, BPF_ANY) != 0) {
    why = std::strerror(errno);
    return false;
  }
  return true;
}

void register_inode(int inodes_fd, uint64_t dev, uint64_t ino, uint32_t file_id, uint64_t flags) {
  if (!ino || inodes_fd < 0) return;
  struct stp_cfi_inode k {};
  k.ino = ino;
  k.dev = (uint32_t)((major(dev) << 20) | minor(dev));  // the kernel's dev_t: major << 20 | minor
  bpf_map_update_elem(inodes_fd, &k, &file_id, flags);
}

}  // namespace ukstap::loader
