/* ukstap unwinder, arm64 (AArch64 tasks; AArch32 compat tasks are not described): DWARF
 * register numbers, the pt_regs mapping, per-context trust.
 *
 * "DWARF for the Arm 64-bit Architecture": x0-x30 are 0-30, sp is 31. There is no pc column:
 * the CIE's return-address column is 30 (x30, the link register), and its rule is the RA. In a
 * leaf, or before the prologue's `stp x29, x30, [sp, #-N]!` and after the epilogue's `ldp`, the
 * rule is "same value": the RA is still in x30 (row kind STP_RA_LR, stp_uregs.lr). */
#ifndef STP_ARCH_ARM64_H
#define STP_ARCH_ARM64_H

#include "arch/stp_arch_regs.h"

#define STP_ARM64_DWARF_FP 29    /* x29, the frame pointer when one is kept */
#define STP_ARM64_DWARF_LR 30    /* x30 */
#define STP_ARM64_DWARF_RA 30    /* the return-address column is x30 itself */
#define STP_ARM64_DWARF_SP 31
#define STP_ARM64_HAS_LR 1

/* pt_regs -> stp_uregs (BPF: bpf_tracing.h with __TARGET_ARCH_arm64 reads struct
 * user_pt_regs, the head of the kernel's pt_regs):
 *   pc = PT_REGS_IP_CORE(r)   (regs->pc, ELR_EL1 saved at entry)
 *   sp = PT_REGS_SP_CORE(r)   (regs->sp, SP_EL0)
 *   fp = PT_REGS_FP_CORE(r)   (regs->regs[29])
 *   lr = PT_REGS_RET_CORE(r)  (regs->regs[30]: libbpf calls the link register "RET") */
#define STP_ARM64_PT_PC(r) PT_REGS_IP_CORE(r)
#define STP_ARM64_PT_SP(r) PT_REGS_SP_CORE(r)
#define STP_ARM64_PT_FP(r) PT_REGS_FP_CORE(r)
#define STP_ARM64_PT_LR(r) PT_REGS_RET_CORE(r)

/* Trust per context (enum stp_uctx). x30 is caller-saved, so the question for each context is
 * whether the pt_regs we read hold the user's x30 at the moment the user code stopped:
 *   uprobe:        the brk trap enters through el0_sync's kernel_entry, which saves x0-x30,
 *                  sp_el0 and elr: the exact user state at the probed instruction. Trusted.
 *   user sample:   the timer IRQ taken from EL0 runs the same kernel_entry 0: all trusted.
 *   syscall tp:    `svc` also enters through kernel_entry 0, which saves x30 before anything
 *                  runs; the syscall ABI does not clobber x30 (only x0 is written, at exit).
 *                  The pc (elr) is the instruction after svc, the sp and x29 the user's.
 *   kernel sample: task_pt_regs() is the frame saved at the task's last EL0 entry (syscall,
 *                  fault or IRQ) — complete for the same reason, and it stays valid while the
 *                  task is in the kernel (nothing rewrites it before ret_to_user).
 * So all four trust pc, sp, x29 and x30, as on x86_64; the mask exists for contexts that do
 * not (a future probe with partial regs) and so that a trusted value is a user value, not a
 * claim that x29 is a frame pointer (-fomit-frame-pointer code uses it freely). */
#define STP_ARM64_TRUST_ALL (STP_UREG_PC | STP_UREG_SP | STP_UREG_FP | STP_UREG_LR)
#define STP_ARM64_TRUST(ctx) ((ctx) < STP_UCTX_NR ? STP_ARM64_TRUST_ALL : 0)

#endif /* STP_ARCH_ARM64_H */
