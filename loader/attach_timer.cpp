// timer.profile: a CPU clock event on every CPU at CONFIG_HZ. (The interval timers are native:
// the runner's event loop calls them; they have no program to attach.)
#include <linux/perf_event.h>

#include <cerrno>
#include <cstring>

#include "loader/attach.h"

namespace ukstap::loader {

bool attach_timer(AttachContext& cx, const probes::TimerPoint& t, const codegen::ProbeInfo&,
                  struct bpf_program* prog) {
  if (t.kind != probes::TimerPoint::Kind::Profile) {
    errno = EINVAL;
    return false;
  }
  struct perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 1000000000ULL / (unsigned long long)cx.kernel_hz();
  return attach_sampling_event(cx, attr, /*per_process=*/false, prog);
}

}  // namespace ukstap::loader
