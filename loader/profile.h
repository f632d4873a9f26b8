// A sampling profile (ukstap --profile) and its three output formats: folded stacks (the input
// of FlameGraph, inferno and speedscope), an interactive SVG flame graph ukstap draws itself,
// and pprof's profile.proto (gzipped; proto/profile.proto).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loader/stack_frame.h"

namespace ukstap::profile {

// The frames and samples the record decoders produce (stack_frame.h), as they are.
using Frame = loader::Frame;
using Sample = loader::Sample;

struct Profile {
  std::vector<Sample> samples;  // equal stacks may repeat: every writer adds them up
  int hz = 0;                   // sampling frequency
  int64_t start_ns = 0;         // wall-clock start, ns since the epoch
  int64_t duration_ns = 0;
  std::string title = "ukstap profile";
};

// A frame as folded stacks and the flame graph name it: the function, else "[module]" (the
// file's base name) or "[unknown]"; kernel frames get FlameGraph's "_[k]" suffix.
std::string frame_label(const Frame& f);
// The same without the "_[k]" suffix: pprof tells kernel frames by their mapping
// ("[kernel.kallsyms]", as perf's converters name it) and the function's file ("kernel").
std::string frame_name(const Frame& f);

// "comm;root;...;leaf COUNT\n" per distinct stack, sorted.
std::string to_folded(const Profile& p);

// A standalone SVG flame graph: click a frame to zoom (click "Reset Zoom" to undo), search by
// regular expression (highlights matches and prints their share), a tooltip per frame with its
// samples and percentage. Frames narrower than 0.1 px are left out (and counted in a note).
std::string to_svg(const Profile& p);

// pprof profile.proto, gzip-compressed. Values: samples/count and cpu/nanoseconds (1e9/hz per
// sample). False with `why` when encoding fails.
bool to_pprof(const Profile& p, std::string& out, std::string& why);

}  // namespace ukstap::profile
