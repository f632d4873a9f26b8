// Compiled modules tied to their source (module_sum.h).
#include "loader/module_sum.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "loader/owned_files.h"
#include "loader/util.h"

namespace ukstap::loader {

namespace {

constexpr const char* kMagic = "ukstap-module-sum-v1";

std::string content_hash(const std::string& bytes) {
  Hasher h;
  h.add(bytes);
  return h.hex();
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
  std::string bytes;
  if (!read_all(fd, bytes)) {
    why = "cannot read " + path + ": " + std::strerror(errno);
  } else if (content_hash(bytes) != want) {
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
    std::string bytes;
    if (!read_private_file(dir + "/" + f, bytes, why)) {
      if (why.empty()) why = "no " + dir + "/" + f;
      return false;
    }
    text += content_hash(bytes) + " " + f + "\n";
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
    ::close(fd);
    if (recorded_key != key) {
      why = dir + "/" + kModuleSumFile + " records another module";
      return false;
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
  fd_ = open_checked(dir, path.substr(slash + 1), nullptr, why);
  if (fd_ < 0 && why.empty()) why = "no " + dir + "/" + kModuleSumFile;
  return fd_ >= 0;
}

std::string VerifiedObject::proc_path() const { return "/proc/self/fd/" + std::to_string(fd_); }

}  // namespace ukstap::loader
