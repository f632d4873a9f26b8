#include "vma-tracker/traced_file.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace ukstap::vma {
namespace {

const char* kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

// Opens `real`, a path realpath() gave (no symbolic link left in it). O_NOFOLLOW guards only its
// last component: whoever owns a directory on the path could swap that directory for a link
// between realpath() and the open. openat2's RESOLVE_NO_SYMLINKS refuses a link anywhere on
// the path (Linux 5.6); where openat2 is missing, the plain open is what older kernels give.
int open_resolved(const char* real, int flags, bool no_links) {
  if (no_links) {
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags);
    how.resolve = RESOLVE_NO_SYMLINKS;
    int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, real, &how, sizeof how));
    if (fd >= 0 || errno != ENOSYS) return fd;
  }
  return ::open(real, flags);
}

}  // namespace

int open_traced_file(const std::string& path, std::string& why, struct stat* out) {
  // "[vdso]"-like names and relative paths are resolved like any other: realpath fails on what
  // does not exist, which is the error to report.
  // /proc/self/fd/N names a descriptor of ukstap's own (a memfd copy of the vDSO): nobody else
  // can swap it, and it resolves to no path ("/memfd:... (deleted)"), so it is opened as is.
  int nofollow = O_NOFOLLOW;
  char real[PATH_MAX];
  if (path.rfind("/proc/self/fd/", 0) == 0 && path.size() < sizeof real) {
    std::strcpy(real, path.c_str());
    nofollow = 0;
  } else if (!::realpath(path.c_str(), real)) {
    why = "cannot open " + path + ": " + std::strerror(errno);
    return -1;
  }
  int fd = open_resolved(real, O_RDONLY | O_NONBLOCK | nofollow | O_CLOEXEC | O_NOCTTY, nofollow != 0);
  if (fd < 0) {
    int err = errno;
    why = "cannot open " + path + ": " +
          (err == ELOOP ? std::string("it was replaced by a symbolic link") : std::strerror(err));
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    why = "cannot stat " + path + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "cannot read " + path + ": it is " + kind_of(st.st_mode) + ", not a regular file";
    ::close(fd);
    return -1;
  }
  // Reads of a regular file never wait for a writer; the readers (libelf, libdw) expect a
  // blocking descriptor all the same.
  int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  if (out) *out = st;
  return fd;
}

bool TracedFile::open(const std::string& path) {
  close();
  fd_ = open_traced_file(path, why_, &st_);
  return fd_ >= 0;
}

void TracedFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool has_elf_magic(int fd) {
  unsigned char magic[SELFMAG];
  return fd >= 0 && ::pread(fd, magic, SELFMAG, 0) == SELFMAG && std::memcmp(magic, ELFMAG, SELFMAG) == 0;
}

}  // namespace ukstap::vma
