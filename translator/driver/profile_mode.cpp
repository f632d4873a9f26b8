// `ukstap --profile`: the sampling script and the output format (profile_mode.h).
#include "driver/profile_mode.h"

#include <sstream>

namespace ukstap::profile_mode {

namespace {

// Live processes and threads of a -c/-x target's family the sampler can follow at once.
constexpr int kMaxFamily = 65536;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string script(const Options& opts, kernel_features::GroupExit exit) {
  // -c/-x: the target process (all its threads) and the processes it forks, as perf record
  // follows children: profiling `make` or a shell script means profiling what they run. The
  // family is a kernel-side set, joined at fork (in the parent's context) and left when the
  // whole process is gone (group_dead: a leader that exits before its threads stays). The
  // tracepoint does not say whether the child is a thread: a thread's tid joins too (harmless,
  // samples are matched by tgid) and leaves when that thread exits. System-wide: everything but
  // ukstap itself (its reader would otherwise profile its own symbolization).
  bool targeted = !opts.target_cmd.empty() || opts.target_pid;
  std::string filter = targeted ? "pid() == target() || [pid()] in __ukstap_family"
                                : "pid() != stp_pid()";
  // Before group_dead existed (6.1), do_exit had already decremented signal->live when the
  // tracepoint fired, as it does now to compute group_dead: 0 means the last thread is leaving.
  std::string last = exit == kernel_features::GroupExit::GroupDeadArg
                         ? "$group_dead"
                         : "@cast(task_current(), \"task_struct\")->signal->live->counter == 0";
  std::ostringstream s;
  if (targeted)
    s << "global __ukstap_family[" << kMaxFamily << "]\n"
      << "probe kernel.trace(\"sched:sched_process_fork\") {\n"
      << "  if (pid() == target() || [pid()] in __ukstap_family) __ukstap_family[$child_pid] = 1\n"
      << "}\n"
      << "probe kernel.trace(\"sched:sched_process_exit\") {\n"
      << "  if (tid() != pid()) delete __ukstap_family[tid()]\n"
      << "  if (" << last << ") delete __ukstap_family[pid()]\n"
      << "}\n";
  s << "probe perf.sw.cpu_clock.hz(" << opts.profile_hz << ") {\n"
    << "  if (" << filter << ") {\n"
    << "    printf(\"" << kSampleTag << "%d %d %s\\n\", pid(), tid(), execname())\n"
    << "    if (!user_mode()) print_backtrace()\n"
    << "    print_ubacktrace()\n"
    << "  }\n"
    << "}\n";
  return s.str();
}

std::string format_for(const Options& opts) {
  if (!opts.profile_format.empty()) return opts.profile_format;
  const std::string& o = opts.output_file;
  if (ends_with(o, ".svg")) return "svg";
  if (ends_with(o, ".pb.gz") || ends_with(o, ".pprof") || ends_with(o, ".pb")) return "pprof";
  return "folded";
}

}  // namespace ukstap::profile_mode
