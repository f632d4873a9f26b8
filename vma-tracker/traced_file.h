// Opening a file because a traced process maps it or a user named it (-d, process("PATH"),
// --ldd): the one place that does it. Such a path is not ukstap's: another user can rename the
// file away and put a FIFO, a device or a symlink there at any moment (a root session froze in
// a blocking open() of a FIFO put where a dlopen'ed library had been, its probes attached).
//
// The path is resolved once (realpath: symlinked libraries such as /lib64/ld-linux-x86-64.so.2
// keep working; paths from /proc/PID/maps are resolved already), then opened O_NONBLOCK (a FIFO
// without a writer does not block the open) and O_NOFOLLOW (a symlink swapped in after the
// resolution fails instead of being followed), and only a regular file is accepted, by fstat of
// the opened descriptor. Everything after that reads the descriptor, never the path again.
#pragma once

#include <sys/stat.h>

#include <string>

namespace ukstap::vma {

// The descriptor (O_RDONLY, O_CLOEXEC, blocking again for the readers) of the regular file at
// `path`, its stat in `st` when given; -1 with a one-line `why` naming the path otherwise
// ("... is not a regular file (a FIFO)").
int open_traced_file(const std::string& path, std::string& why, struct stat* st = nullptr);

// Whether the file open on `fd` starts with the ELF magic (read with pread: the offset stays).
// A file without it (a #! script run as `-c ./x.sh`, exec'd through its interpreter) is no
// mapping anyone unwinds: callers stay silent about it, while an ELF file they cannot read is
// an error worth a line.
bool has_elf_magic(int fd);

// Owns one such descriptor.
class TracedFile {
 public:
  TracedFile() = default;
  explicit TracedFile(const std::string& path) { open(path); }
  ~TracedFile() { close(); }
  TracedFile(const TracedFile&) = delete;
  TracedFile& operator=(const TracedFile&) = delete;
  bool open(const std::string& path);
  void close();
  int fd() const { return fd_; }
  // Hands the descriptor over (libdwfl's dwfl_report_elf closes what it is given).
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  const struct stat& st() const { return st_; }
  const std::string& why() const { return why_; }

 private:
  int fd_ = -1;
  struct stat st_ {};
  std::string why_;
};

}  // namespace ukstap::vma
