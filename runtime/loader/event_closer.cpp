#include "loader/event_closer.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace ukstap::loader {

void close_events_in_background(std::vector<int>& fds) {
  if (fds.size() > 1) {
    std::sort(fds.begin(), fds.end());
    pid_t pid = ::fork();
    if (pid == 0) {
      // Only async-signal-safe calls here (ukstap may have had threads). Everything but the
      // events goes first: a BPF program fd or the output pipe must not outlive ukstap here.
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_IGN);
      ::prctl(PR_SET_NAME, "ukstap-detach");
      unsigned next = 0;
      for (int fd : fds) {
        if ((unsigned)fd > next) ::close_range(next, (unsigned)fd - 1, 0);
        next = (unsigned)fd + 1;
      }
      ::close_range(next, UINT_MAX, 0);
      for (int fd : fds) ::close(fd);
      ::_exit(0);
    }
    // fork failed: close them here, slowly, as before
  }
  for (int fd : fds) ::close(fd);
  fds.clear();
}

}  // namespace ukstap::loader
