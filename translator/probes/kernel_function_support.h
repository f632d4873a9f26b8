// What the running kernel offers kernel.function probes: BPF trampolines (fentry/fexit) and/or
// kprobes (kprobe/kretprobe), found out once per process, and which of the two a probe uses.
// Only pass 5 needs either: resolution, -l/-L and passes 2-4 need nothing but BTF, so a kernel
// with neither still elaborates and compiles the probes, and pass 5 fails with the reason. The
// choice is made at pass 3 (the code differs): passes 1-2 make no bpf() call.
#pragma once

#include <string>

#include "probes/family_point.h"

namespace ukstap {
class Session;
}

namespace ukstap::probes {

struct KernelFunctionSupport {
  bool fentry = false;
  bool kprobes = false;
  std::string fentry_why;  // when !fentry: what failed
  std::string kprobes_why;  // when !kprobes
};

// Probed once: kprobes from tracefs's kprobe_events or the kprobe perf PMU; trampolines by
// btf/kernel_features.h (Running::fentry_failure: one program load and link), so pass 3 on.
const KernelFunctionSupport& kernel_function_support(const std::string& probe_function);

// The mechanism of a point, from the support and -D KERNEL_FUNCTION_MECHANISM=fentry|kprobe
// (forces one: both are tested on a kernel that has both). Sets `unavailable` to the one-line
// reason when the kernel has neither (or lacks the forced one). Throws SemanticError on a bad
// -D value.
KernelFunctionPoint::Mechanism choose_kernel_function_mechanism(Session& s,
                                                                 const std::string& function,
                                                                 std::string& unavailable);

// -D KERNEL_FUNCTION_MECHANISM's value ("", "fentry" or "kprobe"), with no kernel probing: pass
// 2 refuses a bad value and applies a forced one. Throws SemanticError on a bad value.
std::string forced_kernel_function_mechanism(Session& s);

// Pass 3, before any code: every kernel.function probe's mechanism (and unavailable reason).
void choose_kernel_function_mechanisms(Session& s);

}  // namespace ukstap::probes
