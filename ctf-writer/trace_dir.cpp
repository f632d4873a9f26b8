// --ctf=DIR's checks (trace_dir.h).
#include "ctf-writer/trace_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace ukstap::ctf {

bool is_ukstap_metadata(const std::string& text) {
  return text.find(std::string(kProducerKey) + " = \"" + kTracerName + "\";") != std::string::npos ||
         text.find("tracer_name = \"" + std::string(kTracerName) + "\";") != std::string::npos;
}

namespace {

// The names in the directory `fd` (not . and ..); `foreign` when one is not a regular file
// (lstat's view) other than kTraceSubdir.
bool list_dir(int fd, std::vector<std::string>& names, bool& foreign) {
  int dfd = ::dup(fd);
  DIR* d = dfd >= 0 ? ::fdopendir(dfd) : nullptr;
  if (!d) {
    if (dfd >= 0) ::close(dfd);
    return false;
  }
  ::rewinddir(d);
  foreign = false;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat es {};
    if (::fstatat(fd, n.c_str(), &es, AT_SYMLINK_NOFOLLOW) != 0) foreign = true;
    else if (!S_ISREG(es.st_mode) && !(S_ISDIR(es.st_mode) && n == kTraceSubdir)) foreign = true;
    names.push_back(n);
  }
  ::closedir(d);
  return true;
}

// The first 16 MiB of the regular file `name` in the directory `fd` ("" when unreadable).
std::string read_small(int fd, const char* name) {
  std::string text;
  int mfd = ::openat(fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (mfd < 0) return text;
  char buf[65536];
  ssize_t k;
  while ((k = ::read(mfd, buf, sizeof buf)) > 0 && text.size() < (1u << 24)) text.append(buf, (size_t)k);
  ::close(mfd);
  return text;
}

}  // namespace

bool prepare_trace_dir(const std::string& dir, std::string& why) {
  auto refuse = [&](const std::string& what) {
    why = "cannot write the CTF trace to '" + dir + "': " + what;
    return false;
  };
  if (dir.empty()) return refuse("no directory given");
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return refuse(std::strerror(errno));
    if (::mkdir(dir.c_str(), 0755) != 0) return refuse(std::strerror(errno));
    if (::lstat(dir.c_str(), &st) != 0) return refuse(std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) return refuse("it is a symbolic link");
  if (!S_ISDIR(st.st_mode)) return refuse("it exists and is not a directory");
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return refuse(std::strerror(errno));
  std::string bad;
  if (::fstat(fd, &st) != 0) bad = std::strerror(errno);
  else if (st.st_uid != 0 && st.st_uid != ::geteuid())
    bad = "it is owned by uid " + std::to_string(st.st_uid) + " (who could plant links in it)";
  else if (st.st_mode & (S_IWGRP | S_IWOTH))
    bad = "it is writable by group or others (who could plant links in it)";
  if (!bad.empty()) {
    ::close(fd);
    return refuse(bad);
  }
  if (::faccessat(fd, ".", W_OK, AT_EACCESS) != 0) {
    int e = errno;
    ::close(fd);
    return refuse(std::strerror(e));
  }
  // What is in it: nothing, or a previous ukstap trace (kTraceSubdir: metadata + stream files).
  std::vector<std::string> names, files;
  bool foreign = false, ours = false;
  if (!list_dir(fd, names, foreign)) {
    int e = errno;
    ::close(fd);
    return refuse(std::strerror(e));
  }
  int sub = -1;
  if (names.size() == 1 && names[0] == kTraceSubdir && !foreign) {
    struct stat ss {};
    sub = ::openat(fd, kTraceSubdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    bool sub_foreign = true;
    if (sub >= 0 && ::fstat(sub, &ss) == 0 && ss.st_uid == st.st_uid && !(ss.st_mode & (S_IWGRP | S_IWOTH)) &&
        list_dir(sub, files, sub_foreign) && !sub_foreign)
      ours = is_ukstap_metadata(read_small(sub, "metadata"));
  }
  if (!names.empty() && !ours) {
    if (sub >= 0) ::close(sub);
    ::close(fd);
    return refuse("it is not empty and not a previous ukstap trace");
  }
  std::string err;
  for (const std::string& n : files)
    if (err.empty() && ::unlinkat(sub, n.c_str(), 0) != 0) err = n + "': " + std::strerror(errno);
  if (sub >= 0) ::close(sub);
  if (err.empty() && ours && ::unlinkat(fd, kTraceSubdir, AT_REMOVEDIR) != 0)
    err = std::string(kTraceSubdir) + "': " + std::strerror(errno);
  if (!err.empty()) {
    ::close(fd);
    return refuse("cannot remove the previous trace's '" + err);
  }
  ::close(fd);
  return true;
}

}  // namespace ukstap::ctf
