/* Verifier test of the other probe kinds: perf_event (NMI slot), uprobe/uretprobe arguments,
 * tp_btf (process.*), __data_loc strings; and the context hooks. Loaded, not attached. */
#define STP_NPROBES 5
#include "stp_runtime.h"

struct stp_globals { int64_t n; char comm[STP_MAXSTRINGLEN]; };
STP_DEFINE_GLOBALS(struct stp_globals);
struct stp_locals_p { int64_t a, b, c2; char s[STP_MAXSTRINGLEN]; };
struct stp_locals { union { struct stp_locals_p p; } probe; };
STP_DEFINE_CONTEXT(struct stp_locals);

STP_PROBE_PERF(0)
{
  STP_PROBE_ENTER(0);
  g->n += _stp_user_mode() + _stp_user_pc() + _stp_config_hz();
  STP_PROBE_LEAVE();
}

STP_PROBE_UPROBE(1)
{
  STP_PROBE_ENTER(1);
  c->l.probe.p.a = STP_UARG(c, 1) + STP_UARG(c, 6);
  c->l.probe.p.b = _stp_task_pgrp(bpf_get_current_task_btf()) + _stp_task_sid(bpf_get_current_task_btf());
  c->l.probe.p.c2 = _stp_gettimeofday_ns();
  _stp_text_str(c->l.probe.p.s, STP_UARG(c, 2), 50, 50, 1, 1, 1);
  stp_printf_begin(c, 0);
  stp_printf_str(c, c->l.probe.p.s);
  stp_printf_mem(c, STP_UARG(c, 2), 8, 1);
  stp_printf_end(c);
  STP_PROBE_LEAVE();
}

STP_PROBE_URETPROBE(2)
{
  STP_PROBE_ENTER(2);
  g->n += STP_URETVAL(c) + _stp_is_return() + _stp_returnval();
  STP_PROBE_LEAVE();
}

STP_PROBE_RAW_TP(3, "sched_process_exec")
{
  STP_PROBE_ENTER(3);
  {
    struct task_struct *p = (struct task_struct *)STP_RAW_ARG(c, 0);
    g->n += BPF_CORE_READ(p, tgid);
  }
  stp_exit(c);
  STP_PROBE_LEAVE();
}

/* sched:sched_process_exec has `__data_loc char[] filename` at offset 8 */
STP_PROBE_TRACEPOINT(4, "sched", "sched_process_exec")
{
  STP_PROBE_ENTER(4);
  STP_TP_DATALOC_STR(c, g->comm, 8);
  g->n += STP_TP_LONG(c, 12, 4, 1);
  STP_PROBE_LEAVE();
}

char LICENSE[] SEC("license") = "GPL";
