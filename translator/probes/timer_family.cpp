// timer.profile(.tick), timer.{s,sec,ms,msec,us,usec,ns,nsec,jiffies}(N)[.randomize(M)],
// timer.hz(N), with SystemTap's checks and messages (tapset-timers.cxx).
#include <string>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/internal.h"

namespace ukstap::probes {

namespace {

constexpr int64_t kMaxNs = 1000000000LL * 60LL * 60LL * 24LL;  // one day
constexpr int64_t kMinNs = 100000LL;                           // 100us

void build_timer(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  const std::string unit = m.pattern->comps[1].name;
  ResolvedPoint rp;
  rp.point = make_point(s, *m.pp, concrete_components(m));
  TimerPoint timer;
  if (unit == "profile") {
    timer.kind = TimerPoint::Kind::Profile;
    rp.family = timer;
    out.push_back(std::move(rp));
    return;
  }
  int64_t period = m.num(unit);
  int64_t rand = m.num("randomize", 0);
  const Token* tok = m.tok(unit);
  if (unit == "jiffies") {
    if (period <= 0 || period > 1000000)
      throw SemanticError("invalid interval for jiffies timer", tok);
    if (rand < 0 || rand > period)
      throw SemanticError("invalid randomize for jiffies timer", m.tok("randomize"));
    timer.kind = TimerPoint::Kind::Jiffies;
    timer.jiffies = period;
    timer.randomize_jiffies = rand;
    rp.family = timer;
    out.push_back(std::move(rp));
    return;
  }
  int64_t scale = 1;
  if (unit == "hz") {
    if (period <= 0) throw SemanticError("frequency must be greater than 0", tok);
    timer.hz = period;
    period = (1000000000 + period - 1) / period;
  } else {
    if (unit == "s" || unit == "sec") scale = 1000000000;
    else if (unit == "ms" || unit == "msec") scale = 1000000;
    else if (unit == "us" || unit == "usec") scale = 1000;
  }
  std::string range = "interval value out of range (" +
                      std::to_string(scale < kMinNs ? kMinNs / scale : 1) + ", " +
                      std::to_string(kMaxNs / scale) + ")";
  if (period < kMinNs / scale || period > kMaxNs / scale) throw SemanticError(range, tok);
  if (rand < 0 || rand > period)
    throw SemanticError("randomization value out of range", m.tok("randomize"));
  period *= scale;
  rand *= scale;
  if (period < kMinNs) throw SemanticError(range, tok);
  timer.kind = TimerPoint::Kind::Hrtimer;
  timer.period_ns = period;
  timer.randomize_ns = rand;
  rp.family = timer;
  out.push_back(std::move(rp));
}

}  // namespace

void add_timer_patterns(std::vector<Pattern>& out) {
  for (const char* u : {"s", "sec", "ms", "msec", "us", "usec", "ns", "nsec", "jiffies"}) {
    out.push_back({{{"timer", ArgKind::None}, {u, ArgKind::Number}}, build_timer});
    out.push_back({{{"timer", ArgKind::None}, {u, ArgKind::Number}, {"randomize", ArgKind::Number}},
                   build_timer});
  }
  out.push_back({{{"timer", ArgKind::None}, {"hz", ArgKind::Number}}, build_timer});
  out.push_back({{{"timer", ArgKind::None}, {"profile", ArgKind::None}}, build_timer});
  out.push_back({{{"timer", ArgKind::None}, {"profile", ArgKind::None}, {"tick", ArgKind::None}},
                 build_timer});
}

}  // namespace ukstap::probes
