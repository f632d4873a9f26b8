/* ukstap BPF runtime: kernel backtraces and kernel symbols (the hooks of context-unwind.stp).
 *
 * The kernel unwinds its own stack: bpf_get_stack(ctx, buf, size, 0) gives the return addresses
 * of the probe's kernel context (ORC, exact) — at a tracepoint the code that hit it, in a
 * perf_event program (timer.profile) the interrupted kernel code, and nothing when the sample
 * or the uprobe interrupted user mode. Only the pcs leave the kernel, in a KSTACK record
 * (common/stp_records.h, the USTACK layout); user space names them from /proc/kallsyms.
 *
 * The helper needs the program's context pointer, which generated functions receive as their
 * `ctx` parameter (STP_FN_CTX_PARAM in bpf/stp_bpf.h).
 *
 * sprint_* forms return a deferred token "\x1eK" + 16 hex digits + "\x1f", a hash of the
 * content (pcs, kind, flags; no pid: a kernel address means the same in every process), so equal
 * stacks give equal strings and `a[sprint_backtrace()]++` groups them.
 */
#ifndef STP_BPF_KSTACK_H
#define STP_BPF_KSTACK_H

/* FNV-1a of the pcs (one global function: verified once, whatever the number of call sites). */
STP_RT_FN(stp_kwalk_hash)
int stp_kwalk_hash(struct stp_kwalk *kw)
{
  uint64_t h = STP_FNV_OFFSET;
  uint32_t n;
  if (!kw)
    return 0;
  n = kw->n;
  for (uint32_t i = 0; i < MAXBACKTRACE; i++) {
    if (i >= n)
      break;
    h = stp_fnv_u64(h, kw->pcs[i]);
  }
  kw->hash = stp_fnv_u64(h, n);
  return 0;
}

/* A dispatched syscall probe's glue frames below its own (bpf_trace_run2, __bpf_trace_sys_*):
 * how many a stack shows, counted on the first walk of the session (stp_session's
 * syscall_kskip, + 1; 0: not yet). A fixed count was wrong on one kernel or the other: 6.18
 * shows both frames, Debian 12's 6.1 one, and skipping two there cut syscall_trace_enter.
 * One count serves both directions: sys_enter's and sys_exit's glue is made by one macro, and
 * both kernels show as many frames on either side (run_kstack_syscall walks the exit first,
 * then the entry, against tracefs's stacks of the same events). */
static __always_inline uint32_t stp__kglue_count(struct stp_session *s, struct stp_common *k,
                                                 void *ctx, uint32_t skip)
{
  uint32_t learned = s->syscall_kskip, g = 0;
  long r;
  if (learned)
    return learned - 1;
  r = bpf_get_stack(ctx, k->kw.pcs, sizeof(k->kw.pcs), skip & BPF_F_SKIP_FIELD_MASK);
  for (int i = 0; i < 3; i++) {
    uint64_t pc = k->kw.pcs[i];
    if (r < 8 * (i + 1) ||
        !((pc >= s->syscall_glue_fixed[0] && pc < s->syscall_glue_fixed[1]) ||
          (pc >= s->syscall_glue_fixed[2] && pc < s->syscall_glue_fixed[3]) ||
          (pc >= s->syscall_glue_fixed[4] && pc < s->syscall_glue_fixed[5])))
      break;
    g++;
  }
  if (r > 0)
    s->syscall_kskip = g + 1;
  return g;
}

/* The kernel stack of the probe context into k->kw (n = 0: none, e.g. a user-mode sample). */
static __always_inline void stp__kwalk(struct stp_common *k, void *ctx)
{
  long r = -1;
  uint32_t skip = k->kskip;
  struct stp_session *s = skip ? stp__session() : 0;
  if (ctx && s)
    skip += stp__kglue_count(s, k, ctx, skip);
  if (ctx)
    r = bpf_get_stack(ctx, k->kw.pcs, sizeof(k->kw.pcs), skip & BPF_F_SKIP_FIELD_MASK);
  if (s && r > 0) {
    /* Behind the syscall dispatcher, when the raw tracepoint has 2+ programs the kernel calls
     * them through __traceiter_sys_*: one more glue frame (its range from kallsyms). */
    uint64_t pc = k->kw.pcs[0];
    if ((pc >= s->syscall_glue[0] && pc < s->syscall_glue[1]) ||
        (pc >= s->syscall_glue[2] && pc < s->syscall_glue[3]))
      r = bpf_get_stack(ctx, k->kw.pcs, sizeof(k->kw.pcs), (skip + 1) & BPF_F_SKIP_FIELD_MASK);
  }
  k->kw.n = r > 0 ? (uint32_t)((uint64_t)r >> 3) : 0;
  if (k->kw.n > MAXBACKTRACE)
    k->kw.n = MAXBACKTRACE;
  stp_kwalk_hash(&k->kw);
}

/* Emit k->kw as a KSTACK record (token 0: print it now). */
static __always_inline void stp__kstack_emit(struct stp_common *k, int flags, uint64_t token)
{
  uint32_t n = k->kw.n;
  struct stp_ustack *u = stp__stackrec_begin(k, STP_REC_KSTACK, flags,
                                             n ? STP_USTACK_PCS : STP_USTACK_NO_USER, token);
  if (n > MAXBACKTRACE)
    n = MAXBACKTRACE;
  u->nr = (uint16_t)n;
  u->exact = (uint16_t)n;
  if (n) {
    uint32_t bytes = n * 8;
    STP_CLAMP_REG(bytes, 8 * MAXBACKTRACE);  /* for 6.1's verifier: clang drops the mask */
    bpf_probe_read_kernel(&k->rec[STP_REC_BODY + sizeof(struct stp_ustack)],
                          bytes, k->kw.pcs);
  }
  k->rec_pos += n * 8;
  stp__rec_end(k);
}

static __always_inline void stp__kstack_print(struct stp_common *k, void *ctx, int flags)
{
  stp__kwalk(k, ctx);
  stp__kstack_emit(k, flags, 0);
}

static __always_inline void stp__kstack_sprint(struct stp_common *k, void *ctx, char *buf, int flags)
{
  uint64_t token;
  stp__kwalk(k, ctx);
  token = stp_stack_token(k->kw.hash, k->kw.n ? STP_USTACK_PCS : STP_USTACK_NO_USER, flags);
  stp__kstack_emit(k, flags, token);
  stp_token_str(buf, token, STP_TOKEN_KERNEL);
}

/* backtrace()/callers(): "0x%x " per frame from `skip`, at most `max` frames; "\n" when the
 * context has no kernel stack (as ubacktrace() without user registers). */
static __always_inline void stp__kstack_hex(struct stp_common *k, void *ctx, char *buf, long skip,
                                            long max)
{
  stp__kwalk(k, ctx);
  buf[0] = '\0';
  if (!k->kw.n) {
    buf[0] = '\n';
    buf[1] = '\0';
    return;
  }
  stp__pcs_hex(buf, k->kw.pcs, k->kw.n, skip, max);
}

/* symname/symdata: one kernel address. */
static __always_inline void stp__ksym(struct stp_common *k, char *buf, uint64_t addr, int flags)
{
  uint64_t token = stp_value_token(addr, STP_USTACK_SYM, flags);
  struct stp_ustack *u = stp__stackrec_begin(k, STP_REC_KSTACK, flags, STP_USTACK_SYM, token);
  u->nr = 1;
  u->exact = 1;
  stp__rec_long(k, (int64_t)addr);
  stp__rec_end(k);
  stp_token_str(buf, token, STP_TOKEN_KERNEL);
}

#define _stp_kstack_print(flags) stp__kstack_print(&c->k, ctx, (flags))
#define _stp_kstack_sprint(buf, n, flags) stp__kstack_sprint(&c->k, ctx, (buf), (flags))
#define _stp_kstack_hex(buf, n, skip, max) stp__kstack_hex(&c->k, ctx, (buf), (skip), (max))
#define _stp_kstack_print_str(stk, flags) \
  stp__stack_str(&c->k, STP_REC_KSTACK, STP_TOKEN_KERNEL, 0, (stk), (flags))
#define _stp_kstack_sprint_str(buf, n, stk, flags) \
  stp__stack_str(&c->k, STP_REC_KSTACK, STP_TOKEN_KERNEL, (buf), (stk), (flags))
#define _stp_ksym_sprint(buf, n, addr, flags) stp__ksym(&c->k, (buf), (uint64_t)(addr), (flags))

/* _stp_kernel_pc(): the innermost kernel frame of the probe context (addr() in kernel mode: the
 * interrupted pc of a sample, a tracepoint's call site); 0 without a kernel stack. */
static __always_inline long stp__kernel_pc(struct stp_common *k, void *ctx)
{
  stp__kwalk(k, ctx);
  return k->kw.n ? (long)k->kw.pcs[0] : 0;
}
#define _stp_kernel_pc() stp__kernel_pc(&c->k, ctx)

#endif /* STP_BPF_KSTACK_H */
