/* ukstap unwinder, x86_64: DWARF register numbers, the pt_regs mapping, per-context trust.
 * (psABI "DWARF Register Number Mapping"; the table compiler and stp_cfi.h rows use these.) */
#ifndef STP_ARCH_X86_64_H
#define STP_ARCH_X86_64_H

#include "arch/stp_arch_regs.h"

#define STP_X86_64_DWARF_BX 3    /* rbx (an rbx-based CFA: stp_cfi.h STP_CFA_BX) */
#define STP_X86_64_DWARF_FP 6    /* rbp */
#define STP_X86_64_DWARF_SP 7    /* rsp */
#define STP_X86_64_DWARF_RA 16   /* the return-address column (a pseudo register: "rip") */
#define STP_X86_64_HAS_LR 0      /* the RA is in memory at CFA-8 after a call; except: */
#define STP_X86_64_DWARF_DI 5    /* glibc's vfork pops its RA into rdi (the child must not
                                    leave it on the stack it shares with the parent): the
                                    walk's "lr" on x86_64 is the leaf's rdi, for that row */

/* pt_regs -> stp_uregs: pc = regs->ip, sp = regs->sp, fp = regs->bp, bx = regs->bx. The walk's
 * pt_regs comes from bpf_task_pt_regs(), a BTF pointer the verifier lets the program load from
 * directly (fault-safe, CO-RE relocated, no helper call: ~20 ns less per walk than
 * PT_REGS_*_CORE's bpf_probe_read_kernel each). */
#define STP_X86_64_PT_PC(r) ((r)->ip)
#define STP_X86_64_PT_SP(r) ((r)->sp)
#define STP_X86_64_PT_FP(r) ((r)->bp)
#define STP_X86_64_PT_BX(r) ((r)->bx)
#define STP_X86_64_PT_LR(r) ((r)->di)  /* an RA_LR row's RA (vfork), at the leaf only */
/* The syscall's number and arguments in the saved frame (the syscall ABI: rdi rsi rdx r10 r8
 * r9), what syscall_get_nr()/syscall_get_arguments() return. */
#define STP_X86_64_PT_NR(r) ((r)->orig_ax)
#define STP_X86_64_PT_ARG(r, n)                                                          \
  ((n) == 0 ? (r)->di : (n) == 1 ? (r)->si : (n) == 2 ? (r)->dx : (n) == 3 ? (r)->r10    \
   : (n) == 4 ? (r)->r8 : (r)->r9)

/* Trust per context (enum stp_uctx). Every context reads a complete user register frame:
 * syscall entry (entry_SYSCALL_64 pushes all of pt_regs), the interrupt/NMI entry of a
 * user-mode sample, the uprobe's int3 trap, and for a kernel-mode sample task_pt_regs(), the
 * frame saved when the task entered the kernel — rbp included (it is callee-saved, pushed by
 * PUSH_AND_CLEAR_REGS at every entry). So pc, sp and fp are trusted in all four. */
#define STP_X86_64_TRUST_ALL (STP_UREG_PC | STP_UREG_SP | STP_UREG_FP)
#define STP_X86_64_TRUST(ctx) ((ctx) < STP_UCTX_NR ? STP_X86_64_TRUST_ALL : 0)

#endif /* STP_ARCH_X86_64_H */
