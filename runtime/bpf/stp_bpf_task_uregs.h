/* ukstap BPF runtime: the current task's saved user registers for the user-stack walk, without
 * a helper call where the kernel allows it.
 *
 * bpf_task_pt_regs() is a helper call (~20-25 ns an event on the 6.18 KVM guest of
 * bench/walk_cost.sh: every call and return pays the retpoline/return-thunk mitigations), and
 * what it returns is task_pt_regs(t): the top of the task's kernel stack page(s) minus a
 * pt_regs, an offset from t->stack that is the same for every task of the running kernel
 * (THREAD_SIZE and the top padding are build constants). So the first walk of a context asks
 * the helper and keeps that offset (k->uregs_off, learnt from the kernel's own answer, never
 * assumed), and later walks add it to t->stack and type the result with the bpf_rdonly_cast
 * kfunc (Linux 6.2; the verifier rewrites it to a move: no call). Loads through it are
 * fault-safe (PROBE_MEM), as through the helper's pointer. The loader passes
 * -DSTP_HAVE_RDONLY_CAST=1 when the kernel's BTF has the kfunc and the verifier takes a call
 * of it made as here, in each program type a walk runs in (kernel_features.h
 * rdonly_cast_callable); older kernels (Debian 12's 6.1), kernels that refuse the call and
 * `-D STP_NO_UREGS_CAST=1` (bench/walk_cost.sh id_uregs_helper) call the helper every time.
 */
#ifndef STP_BPF_TASK_UREGS_H
#define STP_BPF_TASK_UREGS_H

#if defined(STP_HAVE_RDONLY_CAST) && !defined(STP_NO_UREGS_CAST)
# define STP__UREGS_CAST 1
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#endif

/* t: a user task (the caller checked PF_KTHREAD). */
static __always_inline struct pt_regs *stp__task_uregs(struct stp_common *k, struct task_struct *t)
{
#ifdef STP__UREGS_CAST
  uint64_t off = k->uregs_off, stack = (uint64_t)t->stack;
  struct pt_regs *r;
  if (off && stack)
    return bpf_rdonly_cast((void *)(stack + off), bpf_core_type_id_kernel(struct pt_regs));
  r = (struct pt_regs *)bpf_task_pt_regs(t);
  if (stack)
    k->uregs_off = stp__launder((uint64_t)r) - stack;
  return r;
#else
  (void)k;
  return (struct pt_regs *)bpf_task_pt_regs(t);
#endif
}

#endif /* STP_BPF_TASK_UREGS_H */
