#include "probes/kernel_function_support.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "btf/kernel_btf.h"
#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/internal.h"

namespace ukstap::probes {

namespace {

// Loads `r0 = 0; exit` as an fentry program on `function` and links it; "" when both work,
// else what failed.
std::string try_fentry(const std::string& function) {
  std::string why;
  const btf::KernelBtf* k = btf::KernelBtf::get(why);
  if (!k) return why;
  // bpf_fentry_test1 exists for BPF's own tests and is never called otherwise: attaching to
  // it briefly disturbs nothing. Else the function the script probes.
  int id = btf__find_by_name_kind(k->raw(), "bpf_fentry_test1", BTF_KIND_FUNC);
  if (id <= 0) id = btf__find_by_name_kind(k->raw(), function.c_str(), BTF_KIND_FUNC);
  if (id <= 0) return "no BTF function to try a trampoline on";
  struct bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = 0
  insns[1].code = BPF_JMP | BPF_EXIT;
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
              .attach_btf_id = (__u32)id);
  int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "ukstap_fentry", "GPL", insns, 2, &opts);
  if (fd < 0) return std::string("the kernel refuses to load an fentry program (") + std::strerror(errno) + ")";
  int link = bpf_link_create(fd, 0, BPF_TRACE_FENTRY, nullptr);
  int err = errno;
  ::close(fd);
  if (link < 0) return std::string("the kernel refuses to attach a BPF trampoline (") + std::strerror(err) + ")";
  ::close(link);
  return "";
}

}  // namespace

const KernelFunctionSupport& kernel_function_support(const std::string& probe_function) {
  static KernelFunctionSupport sup;
  static bool probed = false;
  if (probed) return sup;
  probed = true;
  sup.kprobes = kprobes_available();
  if (!sup.kprobes)
    sup.kprobes_why = "no kprobes (CONFIG_KPROBES: tracefs has no kprobe_events, no kprobe perf PMU)";
  sup.fentry_why = try_fentry(probe_function);
  sup.fentry = sup.fentry_why.empty();
  if (!sup.fentry)
    sup.fentry_why = "no BPF trampolines (fentry/fexit need CONFIG_FUNCTION_TRACER and "
                     "CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS: " + sup.fentry_why + ")";
  return sup;
}

KernelFunctionPoint::Mechanism choose_kernel_function_mechanism(Session& s,
                                                                 const std::string& function,
                                                                 std::string& unavailable) {
  using M = KernelFunctionPoint::Mechanism;
  std::string forced = s.define("KERNEL_FUNCTION_MECHANISM", "");
  if (!forced.empty() && forced != "fentry" && forced != "kprobe")
    throw SemanticError("-D KERNEL_FUNCTION_MECHANISM=" + forced +
                            ": expected fentry or kprobe",
                        nullptr);
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

}  // namespace ukstap::probes
