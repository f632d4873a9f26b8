// loader/event_loop: which probes are native interval timers and when they run. Truth: periods
// worked out by hand from the probe parameters (timer.ms(N) is N*1e6 ns; timer.jiffies(N) is
// N/HZ s), the 20 ms upper bound the loop documents, and "missed ticks are not caught up on".
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "codegen/module_info.h"
#include "probes/family_point.h"
#include "loader/event_loop.h"

using ukstap::codegen::ProbeInfo;
using ukstap::loader::EventLoop;
using ukstap::loader::NativeTimer;
using ukstap::loader::native_timers;
using ukstap::probes::TimerPoint;

namespace {

ProbeInfo probe(int id, bool native, ukstap::probes::FamilyPoint family) {
  ProbeInfo p;
  p.id = id;
  p.native = native;
  p.family = std::move(family);
  return p;
}

// A timer point of `kind` with its periods.
TimerPoint timer(TimerPoint::Kind kind, int64_t period_ns, int64_t randomize_ns = 0,
                 int64_t jiffies = 0, int64_t randomize_jiffies = 0) {
  TimerPoint t;
  t.kind = kind;
  t.period_ns = period_ns;
  t.randomize_ns = randomize_ns;
  t.jiffies = jiffies;
  t.randomize_jiffies = randomize_jiffies;
  return t;
}

}  // namespace

TEST_CASE("native timers: interval timers only, periods in ns", "[event_loop]") {
  std::vector<ProbeInfo> probes = {
      probe(0, true, ukstap::probes::BeginPoint{}),
      probe(1, true, timer(TimerPoint::Kind::Hrtimer, 5000000, 1000)),
      probe(2, true, timer(TimerPoint::Kind::Jiffies, 0, 0, 25, 2)),
      probe(3, false, timer(TimerPoint::Kind::Profile, 0)),  // a perf event, not the loop's
      probe(4, true, timer(TimerPoint::Kind::Hrtimer, 0)),   // no period: never
  };
  std::vector<NativeTimer> t = native_timers(probes, 250, 1000);
  REQUIRE(t.size() == 2);
  CHECK(t[0].probe == &probes[1]);
  CHECK(t[0].period == 5000000);
  CHECK(t[0].rand == 1000);
  CHECK(t[0].next == 1000 + 5000000);
  CHECK(t[1].probe == &probes[2]);
  CHECK(t[1].period == 100000000);  // 25 jiffies at 250 Hz: 100 ms
  CHECK(t[1].rand == 8000000);      // 2 jiffies: 8 ms
  // The same probe at another HZ.
  CHECK(native_timers(probes, 1000, 0)[1].period == 25000000);
}

TEST_CASE("event loop: wait at most 20 ms, less when a timer is due", "[event_loop]") {
  CHECK(EventLoop::timeout_ms({}, 0) == 20);
  std::vector<NativeTimer> t = {{nullptr, 1, 0, 5500000}};  // due in 5.5 ms
  CHECK(EventLoop::timeout_ms(t, 0) == 6);                 // rounded up: never early
  CHECK(EventLoop::timeout_ms(t, 6000000) == 0);           // overdue: no wait
  t[0].next = 100000000;
  CHECK(EventLoop::timeout_ms(t, 0) == 20);
}

TEST_CASE("event loop: a timer's next run", "[event_loop]") {
  NativeTimer t{nullptr, 10, 0, 100};
  CHECK(EventLoop::next_due(t, 0, 100) == 110);
  CHECK(EventLoop::next_due(t, 3, 100) == 113);   // with its jitter
  CHECK(EventLoop::next_due(t, 0, 500) == 510);   // far behind: one period from now, no burst
}
