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
  if (fds.size() > 1) {
    std::sort(fds.begin(), fds.end());
    // The child says when it has its name: whoever waits for "ukstap-detach" to be gone (the
    // robustness tests) must not look before it has one.
    int named[2];
    if (::pipe2(named, O_CLOEXEC) != 0) named[0] = named[1] = -1;
    pid_t pid = ::fork();
    if (pid == 0) {
      // Only async-signal-safe calls here (ukstap may have had threads). Everything but the
      // events goes first: a BPF program fd or the output pipe must not outlive ukstap here.
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_IGN);
      ::prctl(PR_SET_NAME, "ukstap-detach");
      if (named[1] >= 0) (void)!::write(named[1], "n", 1);
      unsigned next = 0;
      for (int fd : fds) {
        if ((unsigned)fd > next) close_fds(next, (unsigned)fd - 1);
        next = (unsigned)fd + 1;
      }
      close_fds(next, UINT_MAX);
      for (int fd : fds) ::close(fd);
      ::_exit(0);
    }
    if (named[1] >= 0) ::close(named[1]);
    if (pid > 0 && named[0] >= 0) {
      char c;
      while (::read(named[0], &c, 1) < 0 && errno == EINTR) {
      }
    }
    if (named[0] >= 0) ::close(named[0]);
    // fork failed: close them here, slowly, as before
  }
  for (int fd : fds) ::close(fd);
  fds.clear();
}

}  // namespace ukstap::loader
