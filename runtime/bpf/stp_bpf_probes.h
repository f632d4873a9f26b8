/* ukstap BPF runtime: probe sections and target-variable readers.
 *
 * Each STP_PROBE_* macro opens `int stp_probe_<id>(ctx)` (the body's `{` follows) and first
 * defines what STP_PROBE_ENTER(id) needs: the context slot, whether this is a return probe and
 * how to tell user mode. The attach target (event, binary/offset, perf event) is the loader's:
 * the sections carry only the program type.
 * Target-variable readers use `ctx`, so they belong in the probe body (not in functions).
 */
#ifndef STP_BPF_PROBES_H
#define STP_BPF_PROBES_H

#include "arch/stp_arch_x86_64.h"

#define STP__PROBE_INFO(id, slot, isret, umode)                                         \
  enum { stp__slot_##id = (slot) };                                                     \
  static __always_inline int stp__isret_##id(void) { return (isret); }                  \
  static __always_inline int stp__umode_##id(void *ctx) { return (umode); }

/* syscalls:sys_exit_* are return probes ($return, is_return()).
 * A tracepoint program shares the event with every perf user of it (perf record/stat,
 * ftrace-perf consumers): the kernel hands the event on to their perf buffers only when the
 * program returns non-zero (perf_trace_run_bpf_submit). The probe's body is an inlined function
 * whatever it returns, and the program always returns 1: ukstap never hides an event from
 * other tools. (Raw tracepoint and tp_btf programs' results are ignored; a uprobe's and a
 * perf_event program's only concern ukstap's own perf event.) */
#define STP_PROBE_TRACEPOINT(id, sys, ev)                                               \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, __builtin_strncmp((ev), "sys_exit", 8) == 0, 0)  \
  static __always_inline int stp__tp_body_##id(void *ctx);                              \
  SEC("tracepoint/" sys "/" ev) int stp_probe_##id(void *ctx)                           \
  {                                                                                     \
    stp__tp_body_##id(ctx);                                                             \
    return 1;                                                                           \
  }                                                                                     \
  static __always_inline int stp__tp_body_##id(void *ctx)

/* syscalls:sys_enter_NAME / sys_exit_NAME, through the syscall dispatcher (docs/DESIGN.md
 * "Syscall probes share one raw tracepoint"): detaching a perf-event tracepoint waits for an
 * RCU tasks-trace grace period (~70 ms here, one at a time), so `probe syscall.* {}` took
 * 12-30 s to exit; raw tracepoints detach at once. The probe is a raw tracepoint program that
 * the dispatcher on sys_enter/sys_exit tail-calls by syscall number; its prologue rebuilds the
 * syscalls:sys_* record (nr at 8, six args or ret from 16) from the task's saved registers,
 * so the tracepoint field readers work unchanged (STP__TPREC). */
#define STP_PROBE_SYSCALL(id, isret)                                                    \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, (isret), 0)                                      \
  SEC("raw_tp") int stp_probe_##id(struct bpf_raw_tracepoint_args *ctx)

/* The dispatched probe's own frame (the stack starts at its call of bpf_get_stack); the
 * kernel's glue frames below it are counted once per session (bpf/stp_bpf_kstack.h). */
#define STP_SYSCALL_KSKIP 1
/* In a foreach body (a bpf_for_each_map_elem callback) the stack has two more frames on top:
 * the callback and the kernel's for-each helper. Returns the skip to restore afterwards. Only
 * where frames are skipped at all: a perf-event tracepoint's stack starts at its saved regs. */
#define STP_KSKIP_CALLBACK_ENTER(c)                                                     \
  ({ uint8_t s__ = (c)->k.kskip; if (s__) (c)->k.kskip = s__ + 2; s__; })
STP_SUBPROG void stp__sysrec_fill(struct stp_common *k,
                                             struct bpf_raw_tracepoint_args *ctx, int is_exit)
{
  struct pt_regs *r = stp__user_regs();  /* sys_enter's regs argument is this very frame */
  /* A raw tracepoint program's kernel stack starts in the tracing glue: the program itself,
   * bpf_trace_run2, __bpf_trace_sys_enter/exit (one of the two on 6.1); then
   * syscall_trace_enter or the exit path, where a syscalls:sys_* probe's stack begins. */
  k->kskip = STP_SYSCALL_KSKIP;
  k->sysrec[0] = 0;
  if (!r) {
    k->sysrec[1] = -1;
    return;
  }
  k->sysrec[1] = STP_X86_64_PT_NR(r);
  if (is_exit) {
    k->sysrec[2] = ctx->args[1];  /* sys_exit(regs, ret) */
    return;
  }
  k->sysrec[2] = STP_X86_64_PT_ARG(r, 0);
  k->sysrec[3] = STP_X86_64_PT_ARG(r, 1);
  k->sysrec[4] = STP_X86_64_PT_ARG(r, 2);
  k->sysrec[5] = STP_X86_64_PT_ARG(r, 3);
  k->sysrec[6] = STP_X86_64_PT_ARG(r, 4);
  k->sysrec[7] = STP_X86_64_PT_ARG(r, 5);
}

#define STP_SYSCALL_PROGS(dir, slots)                                                   \
  struct {                                                                              \
    __uint(type, BPF_MAP_TYPE_PROG_ARRAY);                                              \
    __uint(max_entries, STP_SYS_NR * (slots));                                          \
    __type(key, uint32_t);                                                              \
    __type(value, uint32_t);                                                            \
  } stp_sys_##dir##_progs SEC(".maps");

/* A 32-bit (ia32) task's syscalls have other numbers and no syscalls:sys_* events: skip them,
 * as those events do (x86 thread_info.status & TS_COMPAT). */
static __always_inline int stp__compat_syscall(void)
{
  return (bpf_get_current_task_btf()->thread_info.status & 0x0002) != 0;
}

/* The syscall number: sys_enter(regs, id) passes it; at sys_exit(regs, ret) it is the saved
 * orig_ax. */
static __always_inline uint64_t stp__sys_nr_enter(struct bpf_raw_tracepoint_args *ctx)
{
  return ctx->args[1];
}
static __always_inline uint64_t stp__sys_nr_exit(struct bpf_raw_tracepoint_args *ctx)
{
  struct pt_regs *r = stp__user_regs();
  return r ? (uint64_t)STP_X86_64_PT_NR(r) : ~0ull;
}

/* Dispatcher `slot` of a direction (enter, exit). */
#define STP_SYSCALL_DISPATCHER(dir, slot, slots)                                          \
  SEC("raw_tp/sys_" #dir) int stp_sys_##dir##_##slot(struct bpf_raw_tracepoint_args *ctx) \
  {                                                                                     \
    uint64_t nr = stp__sys_nr_##dir(ctx);                                               \
    if (nr < STP_SYS_NR && !stp__compat_syscall())                                      \
      bpf_tail_call(ctx, &stp_sys_##dir##_progs, (uint32_t)nr * (slots) + (slot));      \
    return 0;                                                                           \
  }

/* timer.profile, perf.*: NMI context, its own slot; user mode from the sample's CS (x86-64; the
 * context only allows 8-byte loads of the registers, hence the u64 read). */
#define STP_PROBE_PERF(id)                                                              \
  STP__PROBE_INFO(id, STP_SLOT_NMI, 0,                                                  \
                  (*(uint64_t *)((char *)ctx + __builtin_offsetof(struct pt_regs, cs)) & 3) != 0) \
  SEC("perf_event") int stp_probe_##id(struct bpf_perf_event_data *ctx)

#define STP_PROBE_UPROBE(id)                                                            \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 0, 1)                                            \
  SEC("uprobe") int stp_probe_##id(struct pt_regs *ctx)

#define STP_PROBE_URETPROBE(id)                                                         \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 1, 1)                                            \
  SEC("uretprobe") int stp_probe_##id(struct pt_regs *ctx)

/* BTF tracepoints (process.begin/end: sched_process_exec/fork/exit); arguments are the
 * tracepoint's C arguments: STP_RAW_ARG(c, n). */
#define STP_PROBE_RAW_TP(id, name)                                                      \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 0, 0)                                            \
  SEC("tp_btf/" name) int stp_probe_##id(unsigned long long *ctx)
#define STP_RAW_ARG(c, n) (((unsigned long long *)ctx)[(n)])

/* Tracepoint record fields (offset/size/signedness from the event's format file). Aligned
 * fields are read directly from the context; anything else with a helper. Each arm of a
 * signedness choice is converted to int64_t on its own: in `s ? int32 : uint32` C's usual
 * arithmetic conversions make both unsigned int, so an int field of -100 read as 4294967196. */
static __always_inline int64_t stp__tp_long(void *ctx, int off, int size, int is_signed)
{
  if (off % size == 0) {
    switch (size) {
    case 1: return is_signed ? *(int8_t *)(ctx + off) : *(uint8_t *)(ctx + off);
    case 2: return is_signed ? *(int16_t *)(ctx + off) : *(uint16_t *)(ctx + off);
    case 4: return is_signed ? (int64_t)*(int32_t *)(ctx + off) : (int64_t)*(uint32_t *)(ctx + off);
    default: return *(int64_t *)(ctx + off);
    }
  } else {
    union { int8_t b; int16_t h; int32_t w; int64_t d; uint8_t ub; uint16_t uh; uint32_t uw; } u;
    u.d = 0;
    bpf_probe_read_kernel(&u, size > 8 ? 8 : size, ctx + off);
    switch (size) {
    case 1: return is_signed ? u.b : u.ub;
    case 2: return is_signed ? u.h : u.uh;
    case 4: return is_signed ? (int64_t)u.w : (int64_t)u.uw;
    default: return u.d;
    }
  }
}
/* The record the readers read: the tracepoint's context, or a dispatched syscall probe's
 * rebuilt record (the generated file redefines it around those probes). */
#define STP__TPREC ctx
#define STP_TP_LONG(c, off, size, is_signed) stp__tp_long(STP__TPREC, (off), (size), (is_signed))
/* char NAME[SIZE]: at most SIZE characters (a full array has no NUL of its own). n is a
 * constant: SIZE + 1 for the NUL, at most STP_MAXSTRINGLEN. */
static __always_inline void stp__tp_fixed_str(void *rec, char *dst, int off, int n)
{
  unsigned long base = stp__launder((uint64_t)(unsigned long)rec);
  if (bpf_probe_read_kernel_str(dst, n, (const void *)(base + off)) < 0)
    dst[0] = '\0';
}
#define STP_TP_STR(c, dst, off, size)                                                         \
  stp__tp_fixed_str(STP__TPREC, (dst), (off),                                                 \
                    (size) < STP_MAXSTRINGLEN ? (size) + 1 : STP_MAXSTRINGLEN)
/* __data_loc char[]: u32 at off = (length << 16) | offset from the record start. */
static __always_inline void stp__tp_dataloc_str(void *ctx, char *dst, int off)
{
  uint32_t loc = *(uint32_t *)(ctx + off);
  /* the record address as a number: variable offsets on a ctx pointer are not allowed */
  unsigned long base = stp__launder((uint64_t)(unsigned long)ctx);
  stp__str_copy(dst, (const void *)(base + (loc & 0xffff)));
}
#define STP_TP_DATALOC_STR(c, dst, off) stp__tp_dataloc_str(STP__TPREC, (dst), (off))

/* uprobe arguments (x86-64 SysV: rdi rsi rdx rcx r8 r9) and the return value. */
static __always_inline int64_t stp__uarg(struct pt_regs *regs, int n)
{
  switch (n) {
  case 1: return PT_REGS_PARM1(regs);
  case 2: return PT_REGS_PARM2(regs);
  case 3: return PT_REGS_PARM3(regs);
  case 4: return PT_REGS_PARM4(regs);
  case 5: return PT_REGS_PARM5(regs);
#ifdef PT_REGS_PARM6
  case 6: return PT_REGS_PARM6(regs);
#endif
  default: return 0;
  }
}
#define STP_UARG(c, n) stp__uarg((struct pt_regs *)ctx, (n))
#define STP_URETVAL(c) ((int64_t)PT_REGS_RC((struct pt_regs *)ctx))

#endif /* STP_BPF_PROBES_H */
