// kernel.function("F")[.return] (probes/kernel_function_family.cpp): an fentry/fexit program
// (a BPF trampoline on F) or a kprobe/kretprobe, both named by their section
// (runtime/bpf/stp_bpf_kfunc.h), which libbpf attaches from the name: fentry through F's BTF
// id (vmlinux's or its module's), kprobes through a perf kprobe event on the symbol.
#include <bpf/libbpf.h>

#include "loader/attach.h"

namespace ukstap::loader {

bool attach_kernel_function(AttachContext& cx, const probes::KernelFunctionPoint&,
                            const codegen::ProbeInfo&, struct bpf_program* prog) {
  return keep_link(cx, bpf_program__attach(prog));
}

}  // namespace ukstap::loader
