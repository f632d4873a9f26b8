#include "probes/kernel_function_support.h"

#include "btf/kernel_features.h"
#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/internal.h"

namespace ukstap::probes {

const KernelFunctionSupport& kernel_function_support(const std::string& probe_function) {
  static KernelFunctionSupport sup;
  static bool probed = false;
  if (probed) return sup;
  probed = true;
  sup.kprobes = kprobes_available();
  if (!sup.kprobes)
    sup.kprobes_why = "no kprobes (CONFIG_KPROBES: tracefs has no kprobe_events, no kprobe perf PMU)";
  sup.fentry_why = kernel_features::Running::get().fentry_failure(probe_function);
  sup.fentry = sup.fentry_why.empty();
  if (!sup.fentry)
    sup.fentry_why = "no BPF trampolines (fentry/fexit need CONFIG_FUNCTION_TRACER and "
                     "CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS: " + sup.fentry_why + ")";
  return sup;
}

std::string forced_kernel_function_mechanism(Session& s) {
  std::string forced = s.define("KERNEL_FUNCTION_MECHANISM", "");
  if (!forced.empty() && forced != "fentry" && forced != "kprobe")
    throw SemanticError("-D KERNEL_FUNCTION_MECHANISM=" + forced +
                            ": expected fentry or kprobe",
                        nullptr);
  return forced;
}

KernelFunctionPoint::Mechanism choose_kernel_function_mechanism(Session& s,
                                                                 const std::string& function,
                                                                 std::string& unavailable) {
  using M = KernelFunctionPoint::Mechanism;
  std::string forced = forced_kernel_function_mechanism(s);
  const KernelFunctionSupport& sup = kernel_function_support(function);
  unavailable.clear();
  // -v: one line per run saying which programs kernel.function probes are, and why.
  static bool said = false;
  if (s.opts.verbose > 0 && !said) {
    said = true;
    std::string line = "kernel.function probes: ";
    if (forced == "fentry" || (forced.empty() && sup.fentry))
      line += "fentry/fexit (BPF trampolines)";
    else if (forced == "kprobe" || sup.kprobes)
      line += "kprobe/kretprobe";
    else
      line += "none can attach";
    if (!forced.empty()) line += ", forced by -D KERNEL_FUNCTION_MECHANISM=" + forced;
    else if (!sup.fentry) line += "; " + sup.fentry_why;
    s.diag.stream() << line << "\n";
  }
  if (forced == "fentry") {
    if (!sup.fentry) unavailable = "this kernel has " + sup.fentry_why;
    return M::Fentry;
  }
  if (forced == "kprobe") {
    if (!sup.kprobes) unavailable = "this kernel has " + sup.kprobes_why;
    return M::Kprobe;
  }
  if (sup.fentry) return M::Fentry;
  if (sup.kprobes) return M::Kprobe;
  unavailable = "this kernel has " + sup.kprobes_why + " and " + sup.fentry_why;
  return M::Fentry;
}

void choose_kernel_function_mechanisms(Session& s) {
  for (auto* p : s.probes)
    if (auto* kf = p ? p->family.get<KernelFunctionPoint>() : nullptr) {
      kf->mechanism = choose_kernel_function_mechanism(s, kf->function, kf->unavailable_reason);
      kf->mechanism_chosen = true;
    }
}

}  // namespace ukstap::probes
