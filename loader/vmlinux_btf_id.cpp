// The identity of the BTF pass 4 compiles against (vmlinux_btf_id.h).
#include "loader/vmlinux_btf_id.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "driver/session.h"
#include "loader/content_hash.h"
#include "loader/owned_files.h"
#include "loader/util.h"

namespace ukstap::loader {
namespace {

std::string stat_identity(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ctim.tv_sec) + "." +
         std::to_string(st.st_ctim.tv_nsec);
}

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// SHA-256 of the open file's bytes, read in pieces (no 5.5 MB buffer); "" on a read error.
std::string hash_fd(int fd) {
  ContentHash h;  // the bytes alone: the identity is sha256sum(1) of the file
  static char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return "";
    }
    h.add(buf, static_cast<size_t>(n));
  }
  return h.hex();
}

}  // namespace

std::string vmlinux_btf_path() {
  const char* f = std::getenv("UKSTAP_VMLINUX_BTF");  // tests: another kernel's BTF
  return f && *f ? f : "/sys/kernel/btf/vmlinux";
}

std::string vmlinux_btf_id(Session& s, const std::string& cache, std::string& why) {
  std::string path = vmlinux_btf_path();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    why = "the kernel has no BTF (" + path + ": " + std::strerror(errno) + ")";
    if (fd >= 0) ::close(fd);
    return "";
  }
  // The memo's name: this boot and this file. No boot id (no /proc): hashed every run.
  std::string boot, memo;
  if (!cache.empty() && read_file("/proc/sys/kernel/random/boot_id", boot) && !boot.empty()) {
    Hasher k;
    k.add("vmlinux-btf-memo-v1");
    k.add(boot);
    k.add(path);
    k.add(stat_identity(st));
    memo = cache + "/kernels/" + k.hex();
    std::string id, mwhy;
    if (read_private_file(memo, id, mwhy) && is_sha256_hex(id)) {
      ::close(fd);
      return id;
    }
    if (!mwhy.empty()) s.diag.warning("not using the cached kernel identity: " + mwhy);
  }
  std::string id = hash_fd(fd);
  int err = errno;
  ::close(fd);
  if (id.empty()) {
    why = "cannot read the kernel's BTF (" + path + ": " + std::strerror(err) + ")";
    return "";
  }
  std::string mwhy;
  if (!memo.empty() && make_private_dirs(cache, "kernels", mwhy)) write_private_file(memo, id, mwhy);
  return id;
}

}  // namespace ukstap::loader
