#include "loader/event_loop.h"

#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "codegen/module_info.h"
#include "loader/interrupt.h"

namespace ukstap::loader {

int64_t now_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

std::vector<NativeTimer> native_timers(const std::vector<codegen::ProbeInfo>& probes, long hz,
                                       int64_t now) {
  std::vector<NativeTimer> timers;
  for (auto& p : probes) {
    auto* timer = p.family.get<probes::TimerPoint>();
    if (!p.native || !timer) continue;
    int64_t period = 0, rand = 0;
    if (timer->kind == probes::TimerPoint::Kind::Hrtimer) {
      period = timer->period_ns;
      rand = timer->randomize_ns;
    } else if (timer->kind == probes::TimerPoint::Kind::Jiffies) {
      period = timer->jiffies * (1000000000LL / hz);
      rand = timer->randomize_jiffies * (1000000000LL / hz);
    } else {
      continue;
    }
    if (period <= 0) continue;
    timers.push_back({&p, period, rand, now + period});
  }
  return timers;
}

void EventLoop::open() {
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  watch_readable(wake_fd());
}

bool EventLoop::watch_readable(int fd) {
  struct epoll_event ev {};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  return ::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

void EventLoop::unwatch(int fd) { ::epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::watch_output_reader(int fd, std::function<void()> gone) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return;
  struct epoll_event ev {};
  ev.events = 0;  // EPOLLERR and EPOLLHUP are always reported
  ev.data.fd = fd;
  ::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
  reader_fd_ = fd;
  reader_gone_ = std::move(gone);
}

int EventLoop::timeout_ms(const std::vector<NativeTimer>& timers, int64_t now) {
  int timeout = 20;
  for (auto& t : timers) {
    int64_t ms = (t.next - now + 999999) / 1000000;
    if (ms < 0) ms = 0;
    if (ms < timeout) timeout = (int)ms;
  }
  return timeout;
}

int64_t EventLoop::next_due(const NativeTimer& t, int64_t jitter, int64_t now) {
  int64_t next = t.next + t.period + jitter;
  return next < now ? now + t.period : next;
}

int64_t EventLoop::jitter(int64_t r) {
  if (r <= 0) return 0;
  return (int64_t)(rng_() % (uint64_t)(2 * r + 1)) - r;
}

void EventLoop::run(const Round& r) {
  while (!r.stopping()) {
    struct epoll_event evs[4];
    int n = ::epoll_wait(epfd_, evs, 4, timeout_ms(timers_, now_ns()));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < n; i++) {
      if (reader_fd_ >= 0 && evs[i].data.fd == reader_fd_ && (evs[i].events & (EPOLLERR | EPOLLHUP)))
        reader_gone_();
      if (evs[i].data.fd == wake_fd()) drain_wake_fd();  // a signal: `woken` looks
    }
    r.woken();
    int64_t now = now_ns();
    for (auto& t : timers_) {
      if (r.stopping()) break;
      if (now >= t.next) {
        r.fire(t);
        t.next = next_due(t, jitter(t.rand), now);
      }
    }
    r.done();
  }
}

void EventLoop::close() {
  if (epfd_ >= 0) ::close(epfd_);
  epfd_ = -1;
}

}  // namespace ukstap::loader
