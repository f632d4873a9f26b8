// Pass 2: what the handlers of each side reach. A function is compiled once for each side
// whose probes call it (directly or through other functions). Pass 5 starts the user-stack machinery (VMA tracker,
// symbolizer) or reads /proc/kallsyms only when a reachable function emits such stacks.
#pragma once

#include <set>

#include "passes/call_graph.h"
#include "passes/probe_placement.h"

namespace ukstap::passes {

struct Reachability {
  std::set<const ast::Function*> kernel_functions, native_functions;
  // Some reachable embedded-C function emits user stacks or symbols (_stp_ustack_*,
  // _stp_usym_*), or kernel ones (_stp_kstack_*, _stp_ksym_*).
  bool uses_user_stacks = false;
  bool uses_kernel_stacks = false;
  // Some reachable embedded-C function walks the probe context's kernel stack (_stp_kstack_*,
  // _stp_kernel_pc): the syscall dispatch policy needs it (passes/syscall_dispatch.h).
  bool walks_kernel_stack = false;

  bool reaches(const ast::Function* f, ProbeSide side) const;
};

Reachability compute_reachability(const Session& s, const CallGraph& calls,
                                  const ProbePlacement& placement);

}  // namespace ukstap::passes
