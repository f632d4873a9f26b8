#include "loader/procfs_files.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "codegen/module_info.h"
#include "loader/event_loop.h"
#include "loader/owned_files.h"

namespace ukstap::loader {

namespace {

std::string errno_text() { return std::strerror(errno); }

// The effective user's name (stap's USER in /var/tmp/systemtap-USER), else the uid.
std::string user_name() {
  if (struct passwd* pw = ::getpwuid(::geteuid())) return pw->pw_name;
  return std::to_string(::geteuid());
}

// A reader that stops reading must not stop the run: $value goes out within this long.
constexpr int64_t kWriteDeadlineNs = 1000000000LL;

void write_with_deadline(int fd, const std::string& data) {
  int64_t deadline = now_ns() + kWriteDeadlineNs;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return;  // EPIPE: the reader left
    int64_t left = deadline - now_ns();
    if (left <= 0) return;
    struct pollfd p {fd, POLLOUT, 0};
    ::poll(&p, 1, static_cast<int>(left / 1000000 + 1));
  }
}

}  // namespace

bool ProcfsFiles::make_fifo(const File& f, std::string& why) {
  // A fresh pipe under a temporary name, renamed over the file: the directory is ours alone.
  std::string tmp = dir_ + "/.new." + f.path.substr(dir_.size() + 1);
  ::unlink(tmp.c_str());
  if (::mkfifo(tmp.c_str(), 0600) != 0 || ::chmod(tmp.c_str(), f.mode) != 0 ||
      ::rename(tmp.c_str(), f.path.c_str()) != 0) {
    why = "cannot create the procfs file " + f.path + ": " + errno_text();
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool ProcfsFiles::create(const codegen::ModuleInfo& m, const std::string& module_name,
                         std::string& why) {
  std::vector<File> files;
  for (auto& p : m.probes) {
    auto* pf = p.family.get<probes::ProcfsPoint>();
    if (!pf) continue;
    for (auto& f : files)
      if (f.path == pf->path) {
        why = "procfs file '" + pf->path + "' has more than one probe";
        return false;
      }
    unsigned all = pf->is_write ? 0222u : 0444u;
    unsigned mode = pf->umask >= 0 ? all & ~static_cast<unsigned>(pf->umask) : all & 0600u;
    files.push_back({&p, pf->path, mode, pf->is_write});
  }
  if (files.empty()) return true;
  std::string base = trusted_real_path("/var/tmp", why);
  if (base.empty()) return false;
  std::string user_dir = "systemtap-" + user_name();
  if (!make_private_dirs(base, user_dir, why)) return false;
  std::string dir = base + "/" + user_dir + "/" + module_name;
  // Never a directory that already exists: another run of the same -m name owns it, or one
  // that was killed left it, or someone else made it; either way it is not ours to use.
  if (::mkdir(dir.c_str(), 0700) != 0) {
    why = errno == EEXIST ? "the procfs directory " + dir +
                                " already exists (another run of module " + module_name +
                                ", or left by one that was killed: remove it)"
                          : "cannot create the procfs directory " + dir + ": " + errno_text();
    return false;
  }
  dir_ = dir;
  if (!private_dir(dir_, why)) {
    dir_.clear();
    return false;
  }
  for (auto& f : files) {
    f.path = dir_ + "/" + f.path;
    files_.push_back(f);
    if (!make_fifo(files_.back(), why)) return false;
    if (f.write) {
      files_.back().fd =
          ::open(files_.back().path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
      if (files_.back().fd < 0) {
        why = "cannot open the procfs file " + files_.back().path + ": " + errno_text();
        return false;
      }
    }
  }
  return true;
}

void ProcfsFiles::serve_write(
    File& f, const std::function<std::string(const codegen::ProbeInfo&, const std::string&)>& run) {
  struct pollfd p {f.fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(f.fd, buf, sizeof buf)) > 0) run(*f.probe, std::string(buf, (size_t)n));
  if (n == 0 && (p.revents & POLLHUP)) {
    // The writer left: a fresh read end, or poll would report the hang-up forever.
    ::close(f.fd);
    f.fd = ::open(f.path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  }
}

void ProcfsFiles::serve(
    const std::function<std::string(const codegen::ProbeInfo&, const std::string&)>& run) {
  for (auto& f : files_) {
    if (f.write) {
      if (f.fd >= 0) serve_write(f, run);
      continue;
    }
    // Succeeds only while someone has the FIFO open for reading (ENXIO otherwise).
    int fd = ::open(f.path.c_str(), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) {
      ::close(fd);
      continue;
    }
    std::string value = run(*f.probe, "");
    std::string why;
    make_fifo(f, why);  // the next reader meets a new pipe (procfs_files.h)
    write_with_deadline(fd, value);
    ::close(fd);  // the reader sees EOF
  }
}

void ProcfsFiles::remove() {
  for (auto& f : files_) {
    if (f.fd >= 0) ::close(f.fd);
    f.fd = -1;
    // A reader still waiting in open() gets EOF rather than waiting forever on a pipe that no
    // writer will open again.
    int fd = ::open(f.path.c_str(), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    ::unlink(f.path.c_str());
  }
  files_.clear();
  if (!dir_.empty()) ::rmdir(dir_.c_str());
  dir_.clear();
}

}  // namespace ukstap::loader
