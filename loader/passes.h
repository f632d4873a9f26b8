// Passes 4 and 5, the loader's entry points, called by the driver (driver/main.cpp) after
// passes 1-3 (driver/passes.h). Each returns 0 on success; on failure it has already reported
// through s.diag.
#pragma once

#include <vector>

#include "driver/session.h"

namespace ukstap {
namespace loader {
struct Sample;
}

// Pass 4 (compile.cpp): compiles s.module->source into module.bpf.o and
// module.so in the cache (by content hash), unless already there; sets s.module_paths.
int pass4_compile(Session& s);

// Pass 5 (run.cpp): load, attach, run, format output, detach. With `samples` (--profile,
// profile_run.h) nothing is printed: the samples are collected there (Output::collect_samples).
int pass5_run(Session& s, std::vector<loader::Sample>* samples = nullptr);

}  // namespace ukstap
