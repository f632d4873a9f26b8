// Files ukstap writes then reads back: the trust checks (owned_files.h).
#include "loader/owned_files.h"
#include "loader/interrupt.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "loader/util.h"

namespace ukstap::loader {

namespace {

std::string errno_text() { return std::strerror(errno); }

// Why `st` (of `path`) is not ours and private; "" when it is.
std::string not_private(const std::string& path, const struct stat& st) {
  if (st.st_uid != ::geteuid())
    return path + " is owned by uid " + std::to_string(st.st_uid) + ", not by uid " +
           std::to_string(::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return path + " is writable by group or others";
  return "";
}

}  // namespace

std::string trusted_real_path(const std::string& path, std::string& why) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf)) {
    why = "cannot resolve " + path + ": " + errno_text();
    return "";
  }
  std::string real = buf;
  // Every prefix of the resolved path, "/" first: a directory another user owns or may write
  // (without the sticky bit) lets that user rename what lies below it.
  std::vector<std::string> prefixes = {"/"};
  for (size_t i = 1; i < real.size(); ++i)
    if (real[i] == '/') prefixes.push_back(real.substr(0, i));
  if (real != "/") prefixes.push_back(real);
  for (const std::string& prefix : prefixes) {
    struct stat st;
    if (::lstat(prefix.c_str(), &st) != 0) {
      why = "cannot stat " + prefix + ": " + errno_text();
      return "";
    }
    if (S_ISLNK(st.st_mode)) {
      why = prefix + " changed into a symbolic link";
      return "";
    }
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
      why = prefix + " is owned by uid " + std::to_string(st.st_uid) + ", neither root nor uid " +
            std::to_string(::geteuid());
      return "";
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX) && S_ISDIR(st.st_mode)) {
      why = prefix + " is writable by group or others";
      return "";
    }
  }
  return real;
}

bool private_dir(const std::string& path, std::string& why) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    why = "cannot stat " + path + ": " + errno_text();
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    why = path + (S_ISLNK(st.st_mode) ? " is a symbolic link" : " is not a directory");
    return false;
  }
  why = not_private(path, st);
  return why.empty();
}

bool make_private_dirs(const std::string& root, const std::string& rel, std::string& why) {
  std::string cur = root == "/" ? "" : root;
  for (size_t pos = 0; pos < rel.size();) {
    size_t slash = std::min(rel.find('/', pos), rel.size());
    std::string part = rel.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      why = "'..' in " + rel;
      return false;
    }
    cur += "/" + part;
    if (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) {
      why = "cannot create " + cur + ": " + errno_text();
      return false;
    }
    if (!private_dir(cur, why)) return false;
  }
  return true;
}

int open_private_file(const std::string& path, std::string& why) {
  why.clear();
  // O_NONBLOCK: a FIFO planted under the name must not hang the open.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) why = path + " is a symbolic link";
    else if (errno != ENOENT) why = "cannot open " + path + ": " + errno_text();
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) why = "cannot stat " + path + ": " + errno_text();
  else if (!S_ISREG(st.st_mode)) why = path + " is not a regular file";
  else why = not_private(path, st);
  if (!why.empty()) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool read_private_file(const std::string& path, std::string& out, std::string& why) {
  out.clear();
  int fd = open_private_file(path, why);
  if (fd < 0) return false;
  bool ok = read_all(fd, out);
  if (!ok) why = "cannot read " + path + ": " + errno_text();
  ::close(fd);
  return ok;
}

bool write_private_file(const std::string& path, const std::string& data, std::string& why) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  ::unlink(tmp.c_str());  // a leftover of a killed run of this pid number
  // Not left in the cache by an exit from the signal handler while it is written (interrupt.h).
  add_emergency_removal(tmp);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    why = "cannot create " + tmp + ": " + errno_text();
    drop_emergency_removal(tmp);
    return false;
  }
  size_t off = 0;
  bool ok = true;
  while (ok && off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ok = false;
    else off += n;
  }
  if (!ok) why = "cannot write " + tmp + ": " + errno_text();
  if (::close(fd) != 0 && ok) {
    why = "cannot write " + tmp + ": " + errno_text();
    ok = false;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    why = "cannot rename " + tmp + " to " + path + ": " + errno_text();
    ok = false;
  }
  if (!ok) ::unlink(tmp.c_str());
  drop_emergency_removal(tmp);
  return ok;
}

std::string make_private_tmpdir(const std::string& prefix, std::string& why,
                                std::string& passed_over) {
  std::string base = "/tmp";
  passed_over.clear();
  if (const char* t = std::getenv("TMPDIR"); t && *t) {
    std::string real = trusted_real_path(t, passed_over);
    if (!real.empty()) base = real;
    else passed_over = std::string("not using TMPDIR=") + t + ": " + passed_over + "; using /tmp";
  }
  std::string tmpl = base + "/" + prefix + "XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    why = "cannot create a temporary directory in " + base + ": " + errno_text();
    return "";
  }
  return tmpl;
}

int make_anonymous_file(const char* name, std::string& proc_path, std::string& why) {
  int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) {
    why = std::string("cannot create a memory file: ") + errno_text();
    return -1;
  }
  proc_path = "/proc/self/fd/" + std::to_string(fd);
  return fd;
}

}  // namespace ukstap::loader
