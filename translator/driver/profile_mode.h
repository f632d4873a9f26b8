// `ukstap --profile[=HZ]`: a sampling profiler built from ukstap's own parts. The driver
// generates a script (a perf.sw.cpu_clock.hz(HZ) probe printing a header with the sample's
// process, then its kernel stack and its full DWARF user stack) and runs it like any other
// script; pass 5 collects the samples as structs from the records and writes the profile as
// folded stacks, an SVG flame graph or pprof (loader/profile_run.h). Tables for the command
// and its libraries are loaded as for any -c target (no -d needed).
#pragma once

#include <string>

#include "btf/kernel_features.h"
#include "driver/session.h"

namespace ukstap::profile_mode {

// The first literal of the sampling script's header printf ("@@ukstap-sample PID TID COMM\n"):
// pass 5 knows the header's format by it (loader/output.h: collect_samples).
inline constexpr char kSampleTag[] = "@@ukstap-sample ";

// The sampling script for `opts` (-c/-x: that process; neither: every process but ukstap).
// `exit` says how the family tracking sees a whole process end at sched_process_exit: its
// `group_dead` argument where the kernel has it, the task's live-thread count before (6.1).
std::string script(const Options& opts,
                   kernel_features::GroupExit exit = kernel_features::GroupExit::GroupDeadArg);

// The output format: --format, else -o's extension (.folded/.svg/.pb.gz/.pprof), else folded.
std::string format_for(const Options& opts);

}  // namespace ukstap::profile_mode
