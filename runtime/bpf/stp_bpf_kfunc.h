/* ukstap BPF runtime: kernel.function probes (translator/probes/kernel_function_family.cpp).
 * Two programs serve them, chosen in pass 2 by what the kernel has:
 *  - fentry/fexit (BPF trampolines): the context is the function's arguments, one u64 each,
 *    typed by BTF; at fexit the return value follows the arguments.
 *  - kprobe/kretprobe: the context is pt_regs; arguments in the x86-64 argument registers at
 *    entry, the return value in rax at return.
 * The section names the function: libbpf finds it in vmlinux's or a module's BTF (fentry), or
 * kallsyms (kprobe), and attaches it from the name (loader/attach_kernel_function.cpp). */
#ifndef STP_BPF_KFUNC_H
#define STP_BPF_KFUNC_H

#define STP_PROBE_FENTRY(id, fn)                                                         \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 0, 0)                                             \
  SEC("fentry/" fn) int stp_probe_##id(unsigned long long *ctx)
#define STP_PROBE_FEXIT(id, fn)                                                          \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 1, 0)                                             \
  SEC("fexit/" fn) int stp_probe_##id(unsigned long long *ctx)
#define STP_PROBE_KPROBE(id, fn)                                                         \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 0, 0)                                             \
  SEC("kprobe/" fn) int stp_probe_##id(struct pt_regs *ctx)
#define STP_PROBE_KRETPROBE(id, fn)                                                      \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 1, 0)                                             \
  SEC("kretprobe/" fn) int stp_probe_##id(struct pt_regs *ctx)

/* The n-th (from 0) argument of an fentry/fexit program; at fexit, n = nargs is the return.
 * Copied out of the context rather than loaded: the verifier types a loaded pointer argument
 * by BTF (ptr_file), and such a register cannot be passed where the runtime's functions take
 * a number; the copy is a plain scalar. */
static __always_inline int64_t stp__kf_arg(unsigned long long *ctx, int n)
{
  uint64_t v = 0;
  bpf_probe_read_kernel(&v, sizeof v, &ctx[n]);
  return (int64_t)v;
}
#define STP_KF_ARG(c, n) stp__kf_arg((unsigned long long *)ctx, (n))
/* The n-th (from 1) argument register of a kprobe (stp__uarg: rdi rsi rdx rcx r8 r9), rax. */
#define STP_KP_ARG(c, n) stp__uarg((struct pt_regs *)ctx, (n))
#define STP_KP_RET(c) ((int64_t)PT_REGS_RC((struct pt_regs *)ctx))

#endif /* STP_BPF_KFUNC_H */
