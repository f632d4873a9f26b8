#include "loader/interrupt.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace ukstap::loader {
namespace {

std::atomic<int> g_signal{0};       // the first stop signal
std::atomic<int> g_count{0};        // stop signals so far
std::atomic<pid_t> g_child{0};      // process group a pass waits for
std::atomic<pid_t> g_target{0};     // the -c target's process group
std::atomic<bool> g_exit_now{false};
std::atomic<int> g_switch{0};       // SIGUSR2s not yet acted on (staprun's output switch)
int g_wake[2] = {-1, -1};

// add_emergency_removal's paths. A slot is free (0), being filled (1) or live (2): the handler
// reads only live slots, whose path is complete.
struct EmergencyPath {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
EmergencyPath g_paths[kMaxEmergencyPaths];

static_assert(std::atomic<int>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free &&
              std::atomic<bool>::is_always_lock_free, "used from a signal handler");

void write_all(const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

// The entries of the open directory `dfd`, removed with only async-signal-safe calls (no
// opendir: it allocates). Removing entries while reading can make getdents skip some, so the
// directory is read again from the start until it is empty (bounded: a writer that keeps adding
// files is not waited for).
void remove_entries(int dfd, int depth) {
  alignas(8) char buf[4096];
  for (int pass = 0; pass < 64; ++pass) {
    if (::lseek(dfd, 0, SEEK_SET) != 0) return;
    long n = ::syscall(SYS_getdents64, dfd, buf, sizeof buf);
    if (n <= 0) return;
    bool any = false;
    for (long off = 0; off < n;) {
      struct Dirent64 {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[];
      };
      auto* d = reinterpret_cast<Dirent64*>(buf + off);
      off += d->reclen;
      if (std::strcmp(d->name, ".") == 0 || std::strcmp(d->name, "..") == 0) continue;
      any = true;
      if (::unlinkat(dfd, d->name, 0) == 0 || errno != EISDIR || depth >= 8) continue;
      int sub = ::openat(dfd, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) {
        remove_entries(sub, depth + 1);
        ::close(sub);
      }
      ::unlinkat(dfd, d->name, AT_REMOVEDIR);
    }
    if (!any) return;
  }
}

void remove_emergency_paths() {
  for (auto& p : g_paths) {
    if (p.state.load(std::memory_order_acquire) != 2) continue;
    if (::unlink(p.path) == 0 || errno != EISDIR) continue;
    int fd = ::open(p.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      remove_entries(fd, 0);
      ::close(fd);
    }
    ::rmdir(p.path);
  }
}

[[noreturn]] void exit_now(const char* why, size_t len) {
  if (pid_t t = g_target.load()) ::kill(-t, SIGKILL);
  if (pid_t c = g_child.load()) ::kill(-c, SIGKILL);
  remove_emergency_paths();
  write_all(why, len);
  ::_exit(1);
}

void on_stop_signal(int sig) {
  int saved = errno;  // the interrupted code may be between a call and its errno check
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  int n = ++g_count;
  if (pid_t c = g_child.load()) ::kill(-c, SIGTERM);
  if (n >= 3) {
    static const char msg[] = "ukstap: too many interrupts received, exiting.\n";
    exit_now(msg, sizeof msg - 1);
  }
  if (g_exit_now.load()) {
    static const char msg[] = "ukstap: interrupted.\n";
    exit_now(msg, sizeof msg - 1);
  }
  if (g_wake[1] >= 0) {
    char b = 's';
    (void)!::write(g_wake[1], &b, 1);  // a full pipe is awake already
  }
  errno = saved;
}

void on_switch(int) {
  int saved = errno;
  ++g_switch;
  if (g_wake[1] >= 0) {
    char b = 'u';
    (void)!::write(g_wake[1], &b, 1);
  }
  errno = saved;
}

void on_child(int) {
  int saved = errno;
  if (g_wake[1] >= 0) {
    char b = 'c';
    (void)!::write(g_wake[1], &b, 1);
  }
  errno = saved;
}

}  // namespace

void install_interrupt_handlers() {
  static bool done = false;
  if (done) return;
  done = true;
  if (::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) g_wake[0] = g_wake[1] = -1;
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  // SA_RESTART: library code (libbpf, libdw, iostreams) sees no EINTR; nothing ukstap waits in
  // blocks for ever (traced files are opened O_NONBLOCK, children are killed by the handler,
  // and epoll_wait returns on a signal whatever the flag).
  sa.sa_flags = SA_RESTART;
  sa.sa_handler = on_stop_signal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old {};
    // nohup's ignored SIGHUP stays ignored. SIGINT and SIGQUIT are handled even when ignored
    // at start: a shell script's `ukstap ... &` starts with them ignored, and `kill -INT` is
    // how such scripts end a run (they ended it before, through the blocked signalfd).
    if (sig == SIGHUP && ::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
  sa.sa_handler = on_switch;
  ::sigaction(SIGUSR2, &sa, nullptr);
  sa.sa_handler = on_child;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  ::sigaction(SIGCHLD, &sa, nullptr);
  // Unblocked: a mask inherited from the parent would hold them back.
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR2}) sigaddset(&set, sig);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

bool interrupted() { return g_count.load() > 0; }
int interrupt_signal() { return g_signal.load(); }
int wake_fd() { return g_wake[0]; }
int take_switch_requests() { return g_switch.exchange(0); }

void drain_wake_fd() {
  char buf[64];
  if (g_wake[0] >= 0)
    while (::read(g_wake[0], buf, sizeof buf) > 0) {
    }
}

void add_emergency_removal(const std::string& path) {
  if (path.empty() || path.size() >= PATH_MAX) return;
  for (auto& p : g_paths) {
    int free_slot = 0;
    if (!p.state.compare_exchange_strong(free_slot, 1)) continue;
    std::memcpy(p.path, path.c_str(), path.size() + 1);
    p.state.store(2, std::memory_order_release);
    return;
  }
}

void drop_emergency_removal(const std::string& path) {
  for (auto& p : g_paths) {
    if (p.state.load(std::memory_order_acquire) == 2 && path == p.path) {
      p.state.store(0, std::memory_order_release);
      return;
    }
  }
}

void set_waited_child_group(pid_t pgid) { g_child.store(pgid); }
void set_target_group(pid_t pgid) { g_target.store(pgid); }

void exit_on_interrupt(bool on) {
  g_exit_now.store(on);
  // A signal that came just before is acted on now, as it would have been a moment later.
  if (on && interrupted()) {
    static const char msg[] = "ukstap: interrupted.\n";
    exit_now(msg, sizeof msg - 1);
  }
}

}  // namespace ukstap::loader
