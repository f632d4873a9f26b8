// `ukstap --profile[=HZ]`: a sampling profiler built from ukstap's own parts. The driver
// generates a script (a perf.sw.cpu_clock.hz(HZ) probe printing the sample's process, its
// kernel stack and its full DWARF user stack), runs it like any other script with the output
// sent to a private file, then folds the samples into a profile and writes it as folded stacks,
// an SVG flame graph or pprof (loader/profile/). Tables for the command and its
// libraries are loaded as for any -c target (no -d needed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/session.h"

namespace ukstap::profile_mode {

// The sampling script for `opts` (-c/-x: that process; neither: every process but ukstap).
std::string script(const Options& opts);

// One sample as the script printed it: the process, then its frames leaf first (kernel frames,
// then user frames).
struct RawFrame {
  uint64_t addr = 0;
  std::string name;    // "" when the address had no symbol
  std::string module;  // path, "kernel", a kernel module, "[vdso]"; "" when unknown
  bool kernel = false;
  bool inexact = false;
};
struct RawSample {
  int pid = 0, tid = 0;
  std::string comm;
  std::vector<RawFrame> frames;
};

// Parses the script's output (the text of print_backtrace()/print_ubacktrace() in SystemTap's
// format after a "@@ukstap-sample PID TID COMM" line). Lines it does not know are skipped.
std::vector<RawSample> parse_samples(const std::string& text);

// The output format: --format, else -o's extension (.folded/.svg/.pb.gz/.pprof), else folded.
std::string format_for(const Options& opts);

// Folds `samples` and writes the profile to `dest` ("" or "-": standard output) in `format`.
// False with a one-line `why` when it cannot be written.
bool write_profile(const std::vector<RawSample>& samples, const Options& opts,
                   const std::string& format, const std::string& dest, double duration_s,
                   std::string& why);

}  // namespace ukstap::profile_mode
