// Compiled modules tied to their source (module_sum.h).
#include "loader/module_sum.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "loader/content_hash.h"
#include "loader/owned_files.h"

namespace ukstap::loader {

namespace {

constexpr const char* kMagic = "ukstap-module-sum-v1-sha256";

// SHA-256 of all of `fd` from offset 0, read in 256 KiB steps; "" when it cannot be read.
std::string content_hash(int fd) {
  ContentHash h;
  static thread_local std::vector<char> buf(256 * 1024);
  for (off_t off = 0;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return "";
    if (n == 0) return h.hex();
    h.add(buf.data(), n);
    off += n;
  }
}

// Objects pass 4 checked in this process, by path: pass 5 loads these descriptors without
// hashing the bytes again (the files are private: nobody else can have changed them since).
std::map<std::string, int>& checked_fds() {
  static std::map<std::string, int> fds;
  return fds;
}

// The recorded hash of `file` in `dir`'s record, and the record's key.
bool recorded(const std::string& dir, const std::string& file, std::string& key, std::string& hash,
              std::string& why) {
  std::string text;
  std::string path = dir + "/" + kModuleSumFile;
  if (!read_private_file(path, text, why)) return false;  // `why` empty: there is none
  std::istringstream in(text);
  std::string magic;
  if (!(in >> magic >> key) || magic != kMagic) {
    why = path + " is not a module record";
    return false;
  }
  std::string h, f;
  while (in >> h >> f)
    if (f == file) {
      hash = h;
      return true;
    }
  why = path + " does not record " + file;
  return false;
}

// Opens `dir`/`file` when private and its bytes hash as recorded; the fd or -1 with `why`.
int open_checked(const std::string& dir, const std::string& file, std::string* key_out,
                 std::string& why) {
  std::string key, want;
  if (!recorded(dir, file, key, want, why)) return -1;
  std::string path = dir + "/" + file;
  int fd = open_private_file(path, why);
  if (fd < 0) {
    if (why.empty()) why = "no " + path;
    return -1;
  }
  std::string got = content_hash(fd);
  if (got.empty()) {
    why = "cannot read " + path + ": " + std::strerror(errno);
  } else if (got != want) {
    why = path + " does not match the hash recorded when it was compiled";
  } else {
    if (key_out) *key_out = key;
    return fd;
  }
  ::close(fd);
  return -1;
}

}  // namespace

bool write_module_sum(const std::string& dir, const std::string& key,
                      const std::vector<std::string>& objects, std::string& why) {
  std::string text = std::string(kMagic) + " " + key + "\n";
  for (const std::string& f : objects) {
    int fd = open_private_file(dir + "/" + f, why);
    if (fd < 0) {
      if (why.empty()) why = "no " + dir + "/" + f;
      return false;
    }
    std::string h = content_hash(fd);
    ::close(fd);
    if (h.empty()) {
      why = "cannot read " + dir + "/" + f + ": " + std::strerror(errno);
      return false;
    }
    text += h + " " + f + "\n";
  }
  return write_private_file(dir + "/" + kModuleSumFile, text, why);
}

bool check_module_sum(const std::string& dir, const std::string& key,
                      const std::vector<std::string>& objects, std::string& why) {
  why.clear();
  for (const std::string& f : objects) {
    struct stat st;
    if (::lstat((dir + "/" + f).c_str(), &st) != 0) return false;  // not cached (yet)
    std::string recorded_key;
    int fd = open_checked(dir, f, &recorded_key, why);
    if (fd < 0) return false;
    if (recorded_key != key) {
      ::close(fd);
      why = dir + "/" + kModuleSumFile + " records another module";
      return false;
    }
    auto [it, fresh] = checked_fds().try_emplace(dir + "/" + f, fd);
    if (!fresh) {
      ::close(it->second);
      it->second = fd;
    }
  }
  return true;
}

VerifiedObject::~VerifiedObject() {
  if (fd_ >= 0) ::close(fd_);
}

bool VerifiedObject::open(const std::string& path, std::string& why) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  auto it = checked_fds().find(path);
  if (it != checked_fds().end()) {  // checked by pass 4 a moment ago
    fd_ = it->second;
    checked_fds().erase(it);
    return true;
  }
  fd_ = open_checked(dir, path.substr(slash + 1), nullptr, why);
  if (fd_ < 0 && why.empty()) why = "no " + dir + "/" + kModuleSumFile;
  return fd_ >= 0;
}

std::string VerifiedObject::proc_path() const { return "/proc/self/fd/" + std::to_string(fd_); }

}  // namespace ukstap::loader
