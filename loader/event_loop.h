// Pass 5's event loop: one epoll set over the ring buffer's descriptor, the signal wake pipe
// (interrupt.h) and the output's reader, woken at least every 20 ms (exit() in a BPF probe only
// sets a flag in the shared session page: no record wakes the loop) and at the next native
// interval timer (timer.ms/us/ns/hz and timer.jiffies probes run in ukstap's own thread).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace ukstap {
namespace codegen {
struct ProbeInfo;
}

namespace loader {

int64_t now_ns();  // CLOCK_MONOTONIC

// A native interval timer: `period` ± up to `rand` (uniform) between runs.
struct NativeTimer {
  const codegen::ProbeInfo* probe;
  int64_t period, rand, next;
};

// The native timer probes among `probes` (timer.ms/us/ns/hz as "hrtimer", timer.jiffies in
// jiffies of `hz`), the first run one period from `now`. Others (timer.profile: a perf event)
// are not here.
std::vector<NativeTimer> native_timers(const std::vector<codegen::ProbeInfo>& probes, long hz,
                                       int64_t now);

class EventLoop {
 public:
  EventLoop() = default;
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;
  ~EventLoop() { close(); }

  // The epoll set, with the signal wake pipe in it.
  void open();
  // Wakes the loop when `fd` is readable (the ring buffer's epoll fd, stdin). False when epoll
  // cannot watch it (a regular file, /dev/null: always readable, looked at every round).
  bool watch_readable(int fd);
  // No longer wakes the loop for `fd` (stdin at its end: a hung-up pipe stays "readable").
  void unwatch(int fd);
  // A pipe's or socket's reader closing (`| head -1`) shows as EPOLLERR/EPOLLHUP on our end
  // even when nothing is being written: polled with the signals, the run ends at once instead of
  // at the next write. (Regular files and terminals cannot be polled that way: epoll refuses
  // them or they never report it; their writes are checked.) `gone` runs when it happens.
  void watch_output_reader(int fd, std::function<void()> gone);
  void set_timers(std::vector<NativeTimer> timers) { timers_ = std::move(timers); }

  struct Round {
    std::function<bool()> stopping;          // checked before each round and each timer
    std::function<void()> woken;             // after the wait: signals, the target, the rings
    std::function<void(const NativeTimer&)> fire;  // a timer is due
    std::function<void()> done;              // end of the round: the target again, a flush
  };
  // Rounds until `stopping` says so or epoll fails.
  void run(const Round& r);
  void close();

  // How long the next wait may be (ms): 20, or less when a timer is due sooner.
  static int timeout_ms(const std::vector<NativeTimer>& timers, int64_t now);
  // The next due time of a timer that ran at `now`: one period on, ± its jitter, never in the
  // past (missed ticks are not caught up on).
  static int64_t next_due(const NativeTimer& t, int64_t jitter, int64_t now);

 private:
  int64_t jitter(int64_t r);

  int epfd_ = -1;
  int reader_fd_ = -1;
  std::function<void()> reader_gone_;
  std::vector<NativeTimer> timers_;
  std::mt19937_64 rng_{(uint64_t)now_ns()};
};

}  // namespace loader
}  // namespace ukstap
