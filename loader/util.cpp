#include "loader/util.h"
#include "loader/interrupt.h"

#include "loader/owned_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ukstap::loader {

int run_command(const std::vector<std::string>& argv, std::string& output) {
  output.clear();
  int pfd[2];
  if (::pipe2(pfd, O_CLOEXEC) != 0) {
    output = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    output = std::string("fork: ") + std::strerror(errno);
    ::close(pfd[0]);
    ::close(pfd[1]);
    return -1;
  }
  if (pid == 0) {
    // Its own process group: on SIGINT/SIGTERM ukstap ends the compiler and whatever it started
    // (gcc's cc1, as, ld) as one (interrupt.h), and the terminal's ^C reaches ukstap only.
    ::setpgid(0, 0);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::signal(sig, SIG_DFL);
    ::dup2(pfd[1], 1);
    ::dup2(pfd[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    std::vector<char*> av;
    for (auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    ::execvp(av[0], av.data());
    std::fprintf(stderr, "cannot run %s: %s\n", av[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: the handler may signal the group before the child runs
  set_waited_child_group(pid);
  ::close(pfd[1]);
  // Read until every process of the group has closed the pipe. Once interrupted, the group had
  // SIGTERM (from the handler, or here when the signal came before the group was known); what
  // is left of it 500 ms later gets SIGKILL.
  char buf[8192];
  bool termed = false;
  std::chrono::steady_clock::time_point kill_at;
  for (;;) {
    if (interrupted() && !termed) {
      ::kill(-pid, SIGTERM);
      termed = true;
      kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    }
    if (termed && std::chrono::steady_clock::now() >= kill_at) ::kill(-pid, SIGKILL);
    struct pollfd p = {pfd[0], POLLIN, 0};
    int r = ::poll(&p, 1, 100);
    if (r <= 0) continue;  // timeout or EINTR: look at the signals again
    ssize_t n = ::read(pfd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buf, n);
  }
  ::close(pfd[0]);
  // A straggler that closed its output; before the reap, while the group's id is still held by
  // its leader (alive or a zombie) and cannot name another group.
  if (termed) ::kill(-pid, SIGKILL);
  // Before the reap: once reaped, the id may name another process group, which a signal
  // arriving then must not reach through the handler.
  set_waited_child_group(0);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status) == 127 && output.find("cannot run ") == 0 ? -1 : WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string quote_command(const std::vector<std::string>& argv) {
  std::string out;
  for (auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=/.,:+@%") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) {
        if (c == '\'') out += "'\\''";
        else out += c;
      }
      out += '\'';
    }
  }
  return out;
}

bool read_file(const std::string& path, std::string& out) {
  out.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = read_all(fd, out);
  ::close(fd);
  return ok;
}

bool read_all(int fd, std::string& out) {
  out.clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf, n);
  }
}

std::string file_identity(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ctim.tv_sec) + "." +
         std::to_string(st.st_ctim.tv_nsec);
}

bool write_file(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    off += n;
  }
  return ::close(fd) == 0;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool make_dirs(const std::string& path) {
  if (path.empty()) return false;
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void remove_tree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    if (DIR* d = ::opendir(path.c_str())) {
      while (struct dirent* e = ::readdir(d)) {
        if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
        remove_tree(path + "/" + e->d_name);
      }
      ::closedir(d);
    }
    ::rmdir(path.c_str());
  } else {
    ::unlink(path.c_str());
  }
}

void Hasher::add(const void* p, size_t n) {
  auto* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; i++) {
    a_ = (a_ ^ c[i]) * 0x100000001b3ULL;
    b_ = (b_ ^ c[i] ^ (i & 0xff)) * 0x100000001b3ULL;
  }
}

void Hasher::add(const std::string& s) {
  uint64_t len = s.size();
  add(&len, sizeof len);  // so "ab"+"c" differs from "a"+"bc"
  add(s.data(), s.size());
}

std::string Hasher::hex() const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a_, (unsigned long long)b_);
  return buf;
}

namespace {
bool g_cache_disabled = false;
}  // namespace

void disable_cache() { g_cache_disabled = true; }
bool cache_disabled() { return g_cache_disabled; }

std::string cache_dir(std::string& why) {
  if (g_cache_disabled) {
    why = "the cache is disabled (--disable-cache)";
    return "";
  }
  std::string base;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') {
    base = x;
  } else {
    const char* home = std::getenv("HOME");
    if (!home || !*home) {
      if (struct passwd* pw = ::getpwuid(::getuid())) home = pw->pw_dir;
    }
    if (!home || !*home) {
      why = "neither XDG_CACHE_HOME nor HOME is set";
      return "";
    }
    base = std::string(home) + "/.cache";
  }
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  // The deepest level that exists must be trusted (owned_files.h: root's or ours, and nobody
  // else may rename what is below it); the levels under it are created 0700 and must be ours
  // and private. Under `sudo -E`, HOME is the invoking user's: their ~/.cache fails here.
  std::string existing = base;
  struct stat st;
  while (existing.size() > 1 && ::stat(existing.c_str(), &st) != 0)
    existing = existing.substr(0, std::max<size_t>(existing.rfind('/'), 1));
  std::string dir = base + "/ukstap";
  std::string rel = base.substr(existing == "/" ? 0 : existing.size()) + "/ukstap";
  std::string real = trusted_real_path(existing, why);
  if (real.empty() || !make_private_dirs(real, rel, why)) {
    why = "not using the cache directory " + dir + ": " + why;
    return "";
  }
  return (real == "/" ? "" : real) + rel;
}

// execvp's search; `found` gets the file it would run.
bool find_program(const std::string& name, std::string& found) {
  auto executable = [&](const std::string& p) {
    struct stat st;
    bool ok = ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
    if (ok) found = p;
    return ok;
  };
  if (name.find('/') != std::string::npos) return executable(name);
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  for (;;) {
    size_t colon = p.find(':', start);
    std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    if (executable(dir + "/" + name)) return true;
    if (colon == std::string::npos) return false;
    start = colon + 1;
  }
}

}  // namespace ukstap::loader
