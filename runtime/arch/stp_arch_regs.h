/* ukstap unwinder: what every arch header shares — the probe contexts a user stack is walked
 * from, and the trust mask bits saying which user registers a context gives reliably.
 *
 * A register outside a context's mask is scrubbed (value 0, *_valid 0) before the walk, so a
 * CFI rule that needs it stops with STP_STOP_UNTRUSTED instead of unwinding from a stale or
 * kernel value (SystemTap's "regflags" / _stp_task_pt_regs_valid). Portable C: BPF and native.
 */
#ifndef STP_ARCH_REGS_H
#define STP_ARCH_REGS_H

enum stp_uctx {
  STP_UCTX_SYSCALL = 0,      /* syscall tracepoint: the task's pt_regs saved at syscall entry */
  STP_UCTX_TIMER_USER = 1,   /* timer/perf sample that interrupted user mode: the sample's regs */
  STP_UCTX_TIMER_KERNEL = 2, /* sample in kernel mode: task_pt_regs(), the state saved when the
                                task last entered the kernel from user mode */
  STP_UCTX_UPROBE = 3,       /* uprobe/uretprobe: the breakpoint trap's pt_regs */
  STP_UCTX_NR = 4,
};

enum stp_ureg_bit {
  STP_UREG_PC = 1,
  STP_UREG_SP = 2,
  STP_UREG_FP = 4,
  STP_UREG_LR = 8,   /* arm64 only (x86_64 has no link register) */
};

/* Fill a struct stp_uregs from raw user register values under trust mask `m`: untrusted values
 * are scrubbed. Without a trusted pc and sp there is no walk (the caller reports
 * STP_STOP_NO_USER); that check is the caller's, as is exact_pc (1 for the leaf). */
#define STP_UREGS_FILL(r, m, pc_, sp_, fp_, lr_)                              \
  do {                                                                        \
    (r)->pc = ((m) & STP_UREG_PC) ? (pc_) : 0;                                \
    (r)->sp = ((m) & STP_UREG_SP) ? (sp_) : 0;                                \
    (r)->sp0 = (r)->sp;                                                       \
    (r)->fp = ((m) & STP_UREG_FP) ? (fp_) : 0;                                \
    (r)->fp_valid = ((m) & STP_UREG_FP) ? 1 : 0;                              \
    (r)->lr = ((m) & STP_UREG_LR) ? (lr_) : 0;                                \
    (r)->lr_valid = ((m) & STP_UREG_LR) ? 1 : 0;                              \
    (r)->bx = 0;  /* x86_64's rbx: not a register of this (arm64) fill */      \
    (r)->bx_valid = 0;                                                        \
    (r)->exact_pc = 1;                                                        \
  } while (0)

#endif /* STP_ARCH_REGS_H */
