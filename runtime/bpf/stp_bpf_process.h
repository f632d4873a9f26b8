/* ukstap BPF runtime: the process family (stapprobes "USER-SPACE"): which processes a probe is
 * about, and SystemTap's task-finder events made of kernel events.
 *
 * Filter (every process-family probe, uprobes included): process(PID) is that tgid,
 * process("PATH") a process whose mm->exe_file is that file (device and inode, as pass 2
 * stat()ed it), and with -c/-x only the target and its descendants (SystemTap: "process probes
 * are restricted to the process hierarchy associated with the target process"; the real_parent
 * chain, at most 64 levels: a child reparented to init after its parent died is no longer seen).
 *
 * Events, each running the probe's body in the context of the process it is about:
 *   process.begin       a new process at its return from fork/vfork/clone/clone3 (raw
 *                       sys_exit, return value 0, pid == tgid); every exec (tp_btf
 *                       sched_process_exec, the new image); a process that existed before the
 *                       probe was attached, the first time it is switched out (tp_btf
 *                       sched_switch: current is prev), once (an LRU set of tgids, which an
 *                       exec also enters). A process asleep all along gets its begin when it
 *                       next runs.
 *   process.thread.begin  a new thread at its return from clone (pid != tgid)
 *   process.end         sched_process_exit with group_dead (the last thread)
 *   process.thread.end  sched_process_exit of a thread other than the group leader
 *   process.syscall[.return]  raw sys_enter/sys_exit: $syscall, $arg1..6 (the syscall ABI's
 *                       registers), $return
 */
#ifndef STP_BPF_PROCESS_H
#define STP_BPF_PROCESS_H

static __always_inline int stp__in_target_tree(struct task_struct *t)
{
  int64_t target = stp_config.target_pid;
  if (!target)
    return 1;
  for (int i = 0; i < 64 && t; i++) {
    int tgid = BPF_CORE_READ(t, tgid);
    if (tgid == target)
      return 1;
    if (tgid <= 1)
      return 0;
    t = BPF_CORE_READ(t, real_parent);
  }
  return 0;
}

static __always_inline int stp__proc_filter(int64_t pid, uint64_t kdev, uint64_t ino)
{
  struct task_struct *t = bpf_get_current_task_btf();
  if (pid && BPF_CORE_READ(t, tgid) != pid)
    return 0;
  if (ino) {
    struct inode *in = BPF_CORE_READ(t, mm, exe_file, f_inode);
    if (!in || BPF_CORE_READ(in, i_ino) != ino || BPF_CORE_READ(in, i_sb, s_dev) != kdev)
      return 0;
  }
  return stp__in_target_tree(t);
}

/* The syscalls that create a task (x86-64 numbers): their return is a new task's first event. */
static __always_inline int stp__is_clone_nr(uint64_t nr)
{
  return nr == 56 || nr == 57 || nr == 58 || nr == 435; /* clone fork vfork clone3 */
}
/* At raw sys_exit: this task has just been created (its first return to user space). */
static __always_inline int stp__new_task_return(struct bpf_raw_tracepoint_args *ctx, int thread)
{
  struct pt_regs *r = stp__user_regs();
  struct task_struct *t = bpf_get_current_task_btf();
  if (!r || (long)ctx->args[1] != 0 || !stp__is_clone_nr(STP_X86_64_PT_NR(r)))
    return 0;
  return thread ? t->pid != t->tgid : t->pid == t->tgid;
}

#define STP__PROC_BODY(id) static __always_inline int stp__pb_##id(void *ctx)
#define STP__PROC_RUN(id, fpid, fdev, fino)                                             \
  do {                                                                                  \
    if (stp__proc_filter((fpid), (fdev), (fino)))                                       \
      stp__pb_##id(ctx);                                                                \
  } while (0)

/* process.begin: three programs, the loader attaches stp_probe_ID, _fork and _seen. */
#define STP_PROBE_PROC_BEGIN(id, fpid, fdev, fino)                                      \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 0, 0)                                            \
  STP__PROC_BODY(id);                                                                   \
  struct {                                                                              \
    __uint(type, BPF_MAP_TYPE_LRU_HASH);                                                \
    __uint(max_entries, 32768);                                                         \
    __type(key, uint32_t);                                                              \
    __type(value, uint8_t);                                                             \
  } stp__proc_seen_##id SEC(".maps");                                                   \
  uint64_t stp__proc_t0_##id = 0;                                                       \
  SEC("tp_btf/sched_process_exec") int stp_probe_##id(unsigned long long *ctx)          \
  {                                                                                     \
    uint32_t tgid = bpf_get_current_task_btf()->tgid;                                   \
    uint8_t one = 1;                                                                    \
    /* a process that existed before: its begin is this one, not a later switch-out */  \
    bpf_map_update_elem(&stp__proc_seen_##id, &tgid, &one, BPF_ANY);                    \
    STP__PROC_RUN(id, fpid, fdev, fino);                                                \
    return 0;                                                                           \
  }                                                                                     \
  SEC("raw_tp/sys_exit") int stp_probe_##id##_fork(struct bpf_raw_tracepoint_args *ctx) \
  {                                                                                     \
    if (stp__new_task_return(ctx, 0))                                                   \
      STP__PROC_RUN(id, fpid, fdev, fino);                                              \
    return 0;                                                                           \
  }                                                                                     \
  SEC("tp_btf/sched_switch") int stp_probe_##id##_seen(unsigned long long *ctx)         \
  {                                                                                     \
    struct task_struct *t = bpf_get_current_task_btf();                                 \
    uint64_t now = bpf_ktime_get_ns();                                                  \
    uint32_t tgid;                                                                      \
    uint8_t one = 1;                                                                    \
    if (!stp__proc_t0_##id)                                                             \
      __sync_val_compare_and_swap(&stp__proc_t0_##id, 0, now);                          \
    if ((t->flags & STP__PF_KTHREAD) || t->pid == 0)                                    \
      return 0;                                                                         \
    /* created after the first run: its fork return or exec was seen */                 \
    if (BPF_CORE_READ(t, group_leader, start_time) >= stp__proc_t0_##id)                \
      return 0;                                                                         \
    tgid = t->tgid;                                                                     \
    if (bpf_map_lookup_elem(&stp__proc_seen_##id, &tgid))                               \
      return 0;                                                                         \
    if (bpf_map_update_elem(&stp__proc_seen_##id, &tgid, &one, BPF_NOEXIST))            \
      return 0;                                                                         \
    STP__PROC_RUN(id, fpid, fdev, fino);                                                \
    return 0;                                                                           \
  }                                                                                     \
  STP__PROC_BODY(id)

#define STP_PROBE_PROC_THREAD_BEGIN(id, fpid, fdev, fino)                               \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 0, 0)                                            \
  STP__PROC_BODY(id);                                                                   \
  SEC("raw_tp/sys_exit") int stp_probe_##id(struct bpf_raw_tracepoint_args *ctx)        \
  {                                                                                     \
    if (stp__new_task_return(ctx, 1))                                                   \
      STP__PROC_RUN(id, fpid, fdev, fino);                                              \
    return 0;                                                                           \
  }                                                                                     \
  STP__PROC_BODY(id)

/* sched_process_exit(struct task_struct *p, bool group_dead); before group_dead (6.1) the
 * last thread is the one that finds signal->live at 0 (do_exit decrements it first). */
#define STP_PROBE_PROC_END(id, thread, fpid, fdev, fino)                                \
  STP__PROBE_PROC_END(id, thread, 0, fpid, fdev, fino)
#define STP_PROBE_PROC_END_BY_LIVE(id, fpid, fdev, fino)                                \
  STP__PROBE_PROC_END(id, 0, 1, fpid, fdev, fino)
#define STP__PROBE_PROC_END(id, thread, by_live, fpid, fdev, fino)                      \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 0, 0)                                            \
  STP__PROC_BODY(id);                                                                   \
  SEC("tp_btf/sched_process_exit") int stp_probe_##id(unsigned long long *ctx)          \
  {                                                                                     \
    struct task_struct *t = bpf_get_current_task_btf();                                 \
    int last = (by_live) ? BPF_CORE_READ(t, signal, live.counter) == 0                  \
                         : (ctx[1] & 0xff) != 0;                                        \
    if ((thread) ? t->pid != t->tgid : last)                                            \
      STP__PROC_RUN(id, fpid, fdev, fino);                                              \
    return 0;                                                                           \
  }                                                                                     \
  STP__PROC_BODY(id)

#define STP__PROBE_PROC_SYS(id, isret, sec, fpid, fdev, fino)                           \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, (isret), 0)                                      \
  STP__PROC_BODY(id);                                                                   \
  SEC(sec) int stp_probe_##id(struct bpf_raw_tracepoint_args *ctx)                      \
  {                                                                                     \
    STP__PROC_RUN(id, fpid, fdev, fino);                                                \
    return 0;                                                                           \
  }                                                                                     \
  STP__PROC_BODY(id)
#define STP_PROBE_PROC_SYSCALL(id, fpid, fdev, fino)                                    \
  STP__PROBE_PROC_SYS(id, 0, "raw_tp/sys_enter", fpid, fdev, fino)
#define STP_PROBE_PROC_SYSCALL_RETURN(id, fpid, fdev, fino)                             \
  STP__PROBE_PROC_SYS(id, 1, "raw_tp/sys_exit", fpid, fdev, fino)

/* $syscall, $arg1..6, $return of process.syscall[.return]: the task's saved registers (the
 * syscall ABI: rdi rsi rdx r10 r8 r9; at sys_exit ax holds the return value). */
static __always_inline int64_t stp__proc_sysreg(int which)
{
  struct pt_regs *r = stp__user_regs();
  if (!r)
    return 0;
  switch (which) {
  case 0: return (int64_t)STP_X86_64_PT_NR(r);
  case 1: return (int64_t)STP_X86_64_PT_ARG(r, 0);
  case 2: return (int64_t)STP_X86_64_PT_ARG(r, 1);
  case 3: return (int64_t)STP_X86_64_PT_ARG(r, 2);
  case 4: return (int64_t)STP_X86_64_PT_ARG(r, 3);
  case 5: return (int64_t)STP_X86_64_PT_ARG(r, 4);
  case 6: return (int64_t)STP_X86_64_PT_ARG(r, 5);
  default: return (int64_t)PT_REGS_RC_CORE(r);
  }
}
#define STP_PROC_SYSCALL(c) stp__proc_sysreg(0)
#define STP_PROC_SYSARG(c, n) stp__proc_sysreg(n)
#define STP_PROC_SYSRET(c) stp__proc_sysreg(7)

/* Uprobes of the process family, with the filter (process(PID) is also the attach's pid). */
#define STP__PROBE_UPROBE_IN(id, isret, sec, fpid, fdev, fino)                          \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, (isret), 1)                                      \
  static __always_inline int stp__ub_##id(struct pt_regs *ctx);                         \
  SEC(sec) int stp_probe_##id(struct pt_regs *ctx)                                      \
  {                                                                                     \
    if (stp__proc_filter((fpid), (fdev), (fino)))                                       \
      stp__ub_##id(ctx);                                                                \
    return 0;                                                                           \
  }                                                                                     \
  static __always_inline int stp__ub_##id(struct pt_regs *ctx)
#define STP_PROBE_UPROBE_IN(id, fpid, fdev, fino)                                       \
  STP__PROBE_UPROBE_IN(id, 0, "uprobe", fpid, fdev, fino)
#define STP_PROBE_URETPROBE_IN(id, fpid, fdev, fino)                                    \
  STP__PROBE_UPROBE_IN(id, 1, "uretprobe", fpid, fdev, fino)

/* An SDT marker's argument (.note.stapsdt's text "SIZE@OPERAND", parsed in pass 3): a register
 * (reg >= 0, mem 0), a register plus displacement in user memory (mem 1), or a constant
 * (reg < 0: disp is the value). size: bytes, negative when signed. Registers are numbered as
 * pt_regs names them: 0 ax 1 bx 2 cx 3 dx 4 si 5 di 6 bp 7 sp 8..15 r8..r15 16 ip. */
static __always_inline uint64_t stp__sdt_reg(struct pt_regs *r, int reg)
{
  switch (reg) {
  case 0: return r->ax;
  case 1: return r->bx;
  case 2: return r->cx;
  case 3: return r->dx;
  case 4: return r->si;
  case 5: return r->di;
  case 6: return r->bp;
  case 7: return r->sp;
  case 8: return r->r8;
  case 9: return r->r9;
  case 10: return r->r10;
  case 11: return r->r11;
  case 12: return r->r12;
  case 13: return r->r13;
  case 14: return r->r14;
  case 15: return r->r15;
  default: return r->ip;
  }
}
static __always_inline int64_t stp__sdt_arg(struct pt_regs *r, int reg, int mem, int64_t disp,
                                            int size)
{
  uint64_t v;
  int n = size < 0 ? -size : size;
  if (reg < 0)
    return disp;
  v = stp__sdt_reg(r, reg);
  if (mem) {
    uint64_t m = 0;
    if (bpf_probe_read_user(&m, n > 8 || n == 0 ? 8 : n, (void *)(v + disp)) < 0)
      return 0;
    v = m;
  }
  switch (size) {
  case 1: return (uint8_t)v;
  case -1: return (int8_t)v;
  case 2: return (uint16_t)v;
  case -2: return (int16_t)v;
  case 4: return (uint32_t)v;
  case -4: return (int32_t)v;
  default: return (int64_t)v;
  }
}
#define STP_SDT_ARG(c, reg, mem, disp, size) \
  stp__sdt_arg((struct pt_regs *)ctx, (reg), (mem), (disp), (size))

#endif /* STP_BPF_PROCESS_H */
