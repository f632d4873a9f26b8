// Closing perf events without waiting for the kernel's tear-down.
//
// The last close of a tracepoint perf event waits for an RCU grace period under the kernel's
// event_mutex (perf_trace_event_unreg): ~35 ms each, one after another whatever the number of
// threads. A script with 360 perf-event tracepoints (`probe syscall.*` with
// -D STP_SYSCALL_DISPATCH=0) took 12-13 s to exit after SIGINT. ukstap keeps one extra
// reference to each such event; its BPF link is destroyed first (the program leaves the event
// at once: nothing runs any more, the programs are freed), and the extra references are handed
// to a forked child that holds nothing else and closes them, while ukstap goes on and exits.
#pragma once

#include <vector>

namespace ukstap::loader {

// Closes `fds` (their last references to perf events) in a background child process; ukstap's
// copies are closed before this returns, without waiting. With one fd or none, closes here.
void close_events_in_background(std::vector<int>& fds);

}  // namespace ukstap::loader
