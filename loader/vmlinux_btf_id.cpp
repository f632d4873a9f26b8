// The identity of the BTF pass 4 compiles against (vmlinux_btf_id.h).
#include "loader/vmlinux_btf_id.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "driver/session.h"
#include "loader/content_hash.h"
#include "loader/owned_files.h"
#include "loader/util.h"

namespace ukstap::loader {
namespace {

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// SHA-256 of the open file's bytes from offset 0, read in pieces (no 5.5 MB buffer); "" on a
// read error. `copy`, when given, gets the bytes too.
std::string hash_fd(int fd, std::string* copy = nullptr) {
  ContentHash h;  // the bytes alone: the identity is sha256sum(1) of the file
  std::vector<char> buf(1 << 16);
  for (off_t off = 0;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), off);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return "";
    }
    h.add(buf.data(), static_cast<size_t>(n));
    if (copy) copy->append(buf.data(), static_cast<size_t>(n));
    off += n;
  }
  return h.hex();
}

constexpr const char* kSysfsBtf = "/sys/kernel/btf/vmlinux";

}  // namespace

std::string vmlinux_btf_path() {
  const char* f = std::getenv("UKSTAP_VMLINUX_BTF");  // tests: another kernel's BTF
  return f && *f ? f : kSysfsBtf;
}

VmlinuxBtf::~VmlinuxBtf() {
  if (fd_ >= 0) ::close(fd_);
}

bool VmlinuxBtf::open(Session& s, const std::string& cache, std::string& why) {
  path_ = vmlinux_btf_path();
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    why = "the kernel has no BTF (" + path_ + ": " + std::strerror(errno) + ")";
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "the kernel's BTF " + path_ + " is not a regular file";
    return false;
  }
  // The memo's name: this boot and this file. No boot id (no /proc): hashed every run.
  std::string boot, memo;
  if (!cache.empty() && read_file("/proc/sys/kernel/random/boot_id", boot) && !boot.empty()) {
    Hasher k;
    k.add("vmlinux-btf-memo-v1");
    k.add(boot);
    k.add(path_);
    k.add(file_identity(st));
    memo = cache + "/kernels/" + k.hex();
    std::string id, mwhy;
    if (read_private_file(memo, id, mwhy) && is_sha256_hex(id)) {
      id_ = id;
      return true;
    }
    if (!mwhy.empty()) s.diag.warning("not using the cached kernel identity: " + mwhy);
  }
  id_ = hash_fd(fd_);
  if (id_.empty()) {
    why = "cannot read the kernel's BTF (" + path_ + ": " + std::strerror(errno) + ")";
    return false;
  }
  std::string mwhy;
  if (!memo.empty() && make_private_dirs(cache, "kernels", mwhy)) write_private_file(memo, id_, mwhy);
  return true;
}

std::string VmlinuxBtf::dump_source(const std::string& dir, std::string& why) const {
  if (path_ == kSysfsBtf) return path_;
  std::string bytes;
  if (hash_fd(fd_, &bytes) != id_) {
    why = "the kernel's BTF " + path_ + " changed while ukstap compiled against it";
    return "";
  }
  std::string copy = dir + "/vmlinux.btf";
  return write_private_file(copy, bytes, why) ? copy : "";
}

}  // namespace ukstap::loader
