/* ukstap BPF runtime: the hooks used by the tapsets' embedded C (tapsets/RUNTIME-HOOKS.md).
 *
 * Embedded bodies are compiled inside `static void stp_fn_<name>(struct stp_context *c)`, so
 * every hook here is a macro that uses the `c` in scope. Generated code defines, around each
 * body: STAP_ARG_<param>, STAP_RETVALUE and STAP_FN_LOC (location id of the function's
 * declaration, for STAP_ERROR's "near ..."), and #undefs them after.
 */
#ifndef STP_BPF_HOOKS_H
#define STP_BPF_HOOKS_H

/* ---- function ABI ---------------------------------------------------------------------- */
#define STAP_RETURN(v)        \
  do {                        \
    STAP_RETVALUE = (v);      \
    return;                   \
  } while (0)

/* printf-style message (bpf_snprintf: %d %i %u %x %ld %lx %s %p ..., at most 12 arguments). */
#define STAP_ERROR(fmt, args...)                                                        \
  do {                                                                                  \
    if (!c->k.error && !c->k.abort) {                                                   \
      BPF_SNPRINTF(c->k.errmsg, sizeof(c->k.errmsg), fmt, ##args);                      \
      c->k.error = 1;                                                                   \
      c->k.errloc = (STAP_FN_LOC);                                                      \
    }                                                                                   \
    return;                                                                             \
  } while (0)

#define STAP_ERROR_NOLOC(msg)                                                           \
  do {                                                                                  \
    stp__error(&c->k, (msg), -1);                                                       \
    return;                                                                             \
  } while (0)

/* ---- diagnostics and control ------------------------------------------------------------- */
#define _stp_log(msg) stp_log(c, (msg))
#define _stp_warn(msg) stp_warn(c, (msg))
#define _stp_exit() stp_exit(c)
#define _stp_abort() stp_abort(c)
/* switch_file(): a STP_REC_SWITCH_FILE record; user space moves -o output to the next file. */
#define _stp_switch_file() (stp__rec_begin(&c->k, STP_REC_SWITCH_FILE, 0), stp__rec_end(&c->k))

/* ---- context ----------------------------------------------------------------------------- */
static __always_inline void stp__probe_str(struct stp_common *k, char *buf, int which)
{
  uint32_t id = (uint32_t)k->probe_id;
  const volatile char *src;
  if (id >= STP_NPROBES) {
    buf[0] = '\0';
    return;
  }
  src = which == 0 ? stp_probe_table[id].pp : which == 1 ? stp_probe_table[id].pn
                                                         : stp_probe_table[id].func;
  stp__str_copy(buf, (const void *)src);
}
#define _stp_probe_point(buf, n) stp__probe_str(&c->k, (buf), 0)
#define _stp_probe_name(buf, n) stp__probe_str(&c->k, (buf), 1)
#define _stp_probe_func(buf, n) stp__probe_str(&c->k, (buf), 2)

#define _stp_target_pid() (stp_config.target_pid)
#define _stp_runtime_pid() (stp_config.runtime_pid)
#define _stp_runtime_uid() (stp_config.runtime_uid)
#define _stp_user_mode() ((long)c->k.user_mode)
#define _stp_is_return() ((long)c->k.is_return)

/* The task's saved user registers: the same registers a uprobe sees, and at a syscall
 * tracepoint the syscall's user context (ax holds the return value at sys_exit). */
#define STP__PF_KTHREAD 0x00200000
static __always_inline struct pt_regs *stp__user_regs(void)
{
  struct task_struct *t = bpf_get_current_task_btf();
  if (t->flags & STP__PF_KTHREAD)  /* a trusted BTF pointer: a plain load, no helper */
    return 0;
  return (struct pt_regs *)bpf_task_pt_regs(t);
}
static __always_inline long stp__user_pc(void)
{
  struct pt_regs *r = stp__user_regs();
  return r ? (long)PT_REGS_IP_CORE(r) : 0;
}
static __always_inline long stp__returnval(void)
{
  struct pt_regs *r = stp__user_regs();
  return r ? (long)PT_REGS_RC_CORE(r) : 0;
}
#define _stp_user_pc() stp__user_pc()
#define _stp_returnval() stp__returnval()

static __always_inline long stp__task_pid_nr(struct task_struct *t, int type)
{
  struct pid *p = 0;
  if (!t)
    return 0;
  if (type == PIDTYPE_PGID)
    p = BPF_CORE_READ(t, signal, pids[PIDTYPE_PGID]);
  else
    p = BPF_CORE_READ(t, signal, pids[PIDTYPE_SID]);
  return p ? BPF_CORE_READ(p, numbers[0].nr) : 0;
}
#define _stp_task_pgrp(task) stp__task_pid_nr((task), PIDTYPE_PGID)
#define _stp_task_sid(task) stp__task_pid_nr((task), PIDTYPE_SID)

#define _stp_gettimeofday_ns() ((long)(bpf_ktime_get_boot_ns() + stp_config.realtime_offset_ns))

extern int CONFIG_HZ __kconfig __weak;
#define _stp_config_hz() ((long)(stp_config.config_hz ? stp_config.config_hz : CONFIG_HZ))

#define _stp_tokenize_state() (&c->k.tok)

/* ---- strings ----------------------------------------------------------------------------- */
/* String primitives of string.stp: pointers are MAXSTRINGLEN buffers (STAP_ARG_*, STAP_RETVALUE). */
#define STP__SB(p) ((struct stp_strbuf *)(p))
#define _stp_strlen(s) stp_str_len(c, (s))
#define _stp_substr(out, s, start, len) \
  ((void)stp_bpf_substr(STP__SB(out), STP__SB(s), (int64_t)(start), (int64_t)(len)))
#define _stp_strpos(h, n) stp_bpf_strpos(STP__SB(h), STP__SB(n))
#define _stp_str_replace(out, s, srch, rplc) \
  ((void)stp_bpf_str_replace(STP__SB(out), STP__SB(s), STP__SB(srch), STP__SB(rplc)))
#define _stp_tokenize(out, input, delim) \
  ((void)stp_bpf_tokenize(STP__SB(out), &c->k.tok, STP__SB(input), STP__SB(delim)))
#define _stp_strtol(s, base) stp_bpf_strtol(STP__SB(s), (int64_t)(base))
#define _stp_flags_str(out, v, table) ((void)stp_bpf_flags_str(STP__SB(out), (int64_t)(v), (int)(table)))

static __always_inline void stp__text_str(struct stp_common *k, char *out, unsigned long in,
                                          long inlen, long outlen, int quoted, int user, int buffer)
{
  long n;
  uint32_t len;
  if (inlen < 0)
    inlen = 0;
  if (inlen > STP_MAXSTRINGLEN)
    inlen = STP_MAXSTRINGLEN;
  if (outlen <= 0 || outlen > STP_MAXSTRINGLEN)
    outlen = STP_MAXSTRINGLEN;
  if (!in) {
    n = -1;
  } else if (buffer) {
    len = (uint32_t)inlen & (2 * STP_MAXSTRINGLEN - 1);
    n = len == 0 ? 0
        : user ? bpf_probe_read_user(k->tmpa, len, (const void *)in)
               : bpf_probe_read_kernel(k->tmpa, len, (const void *)in);
    if (n == 0)
      n = len;
  } else {
    n = user ? bpf_probe_read_user_str(k->tmpa, STP_MAXSTRINGLEN, (const void *)in)
             : bpf_probe_read_kernel_str(k->tmpa, STP_MAXSTRINGLEN, (const void *)in);
    if (n > 0 && n - 1 < inlen)
      inlen = n - 1;
  }
  if (n < 0) {
    /* unreadable: the address, unquoted */
    stp_bpf_sfmt_num((struct stp_strbuf *)out, 0, (int64_t)stp__launder(in),
                     STP_NUM_SPEC(STP_CONV_x, STP_FLAG_ALT, 0));
    return;
  }
  stp_bpf_text_escape((struct stp_strbuf *)out, (const struct stp_strbuf *)k->tmpa,
                      (uint32_t)inlen, (uint32_t)outlen, (quoted ? 1 : 0) | (buffer ? 2 : 0));
}
#define _stp_text_str(out, in, inlen, outlen, quoted, user, buffer) \
  stp__text_str(&c->k, (out), (unsigned long)(in), (inlen), (outlen), (quoted), (user), (buffer))

/* ---- backtraces and symbols: user stacks in bpf/stp_bpf_ustack_records.h, kernel stacks in
 * bpf/stp_bpf_kstack.h, stack ids in bpf/stp_bpf_stackid.h. */

#endif /* STP_BPF_HOOKS_H */
