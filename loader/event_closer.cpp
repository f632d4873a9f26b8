#include "loader/event_closer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace ukstap::loader {
namespace {

// close_range, else one by one (kernels before 5.9).
void close_fds(unsigned lo, unsigned hi) {
  if (::close_range(lo, hi, 0) == 0) return;
  long max = ::sysconf(_SC_OPEN_MAX);
  unsigned top = max > 0 && max < 1 << 20 ? (unsigned)max - 1 : (1u << 16) - 1;
  for (unsigned fd = lo; fd <= hi && fd <= top; ++fd) ::close((int)fd);
}

}  // namespace

void close_events_in_background(std::vector<int>& fds) {
  // Two pipes order the hand-over. `named`: the child has its name before ukstap goes on
  // (whoever waits for "ukstap-detach" to be gone, the robustness tests, must not look before
  // it has one). `go`: the child closes the events only after ukstap has closed its copies.
  // Otherwise, on a loaded machine, the child could close first, and ukstap's own close would
  // be the last reference and wait for the kernel's tear-down (14 s for 360 events).
  int named[2] = {-1, -1}, go[2] = {-1, -1};
  if (fds.size() > 1 && ::pipe2(named, O_CLOEXEC) == 0 && ::pipe2(go, O_CLOEXEC) == 0) {
    std::sort(fds.begin(), fds.end());
    pid_t pid = ::fork();
    if (pid == 0) {
      // Only async-signal-safe calls here (ukstap may have had threads).
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_IGN);
      ::prctl(PR_SET_NAME, "ukstap-detach");
      (void)!::write(named[1], "n", 1);
      ::close(go[1]);
      char c;
      while (::read(go[0], &c, 1) < 0 && errno == EINTR) {  // EOF: ukstap closed its copies
      }
      // Everything but the events goes first: a BPF program fd or the output pipe must not
      // outlive ukstap here.
      unsigned next = 0;
      for (int fd : fds) {
        if ((unsigned)fd > next) close_fds(next, (unsigned)fd - 1);
        next = (unsigned)fd + 1;
      }
      close_fds(next, UINT_MAX);
      for (int fd : fds) ::close(fd);
      ::_exit(0);
    }
    ::close(named[1]);
    ::close(go[0]);
    if (pid > 0) {
      char c;
      while (::read(named[0], &c, 1) < 0 && errno == EINTR) {
      }
    }
    ::close(named[0]);
    for (int fd : fds) ::close(fd);  // not the last references while the child holds them
    ::close(go[1]);                  // now the child closes them
    fds.clear();
    return;  // (fork failed: the events were closed above, slowly, as before)
  }
  for (int p : {named[0], named[1], go[0], go[1]})
    if (p >= 0) ::close(p);
  for (int fd : fds) ::close(fd);
  fds.clear();
}

}  // namespace ukstap::loader
