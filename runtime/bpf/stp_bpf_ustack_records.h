/* ukstap BPF runtime: user backtraces and user symbols as records (the hooks of ucontext-*.stp,
 * RUNTIME-HOOKS.md).
 *
 * Only return addresses leave the kernel: a walk (bpf/stp_bpf_uwalk.h) fills c->k.uw.pcs, and a
 * USTACK record (common/stp_records.h) carries them with the pid and the time, so user space
 * symbolizes them against the mappings that were live at the event, even after the process has
 * exited.
 *
 * sprint_* forms return a deferred token and emit a record that defines it; user space replaces
 * the token when the string is printed. The token and what each hook hashes into it are
 * common/stp_stack_abi.h's, shared with the native module (native/stp_native_tapset.h).
 * stp__stackrec_begin and stp__stack_str serve the kernel-stack hooks too (KSTACK records,
 * bpf/stp_bpf_kstack.h).
 */
#ifndef STP_BPF_USTACK_RECORDS_H
#define STP_BPF_USTACK_RECORDS_H

#include "bpf/stp_bpf_rec_time.h"

#if STP_REC_CAP < 8 * MAXBACKTRACE + 64
# error "MAXBACKTRACE too large for the record scratch: raise MAXSTRINGLEN"
#endif

/* The record header (USTACK, or KSTACK for kernel stacks) + struct stp_ustack; returns it for
 * the caller to finish. */
static __always_inline struct stp_ustack *stp__stackrec_begin(struct stp_common *k, int type,
                                                              int flags, int kind, uint64_t token)
{
  struct stp_ustack *u = (struct stp_ustack *)&k->rec[STP_REC_BODY];
  uint64_t pt = bpf_get_current_pid_tgid();
  stp__rec_begin(k, type, flags);
  u->pid = (uint32_t)(pt >> 32);
  u->tid = (uint32_t)pt;
  /* which mappings a user address had (bpf/stp_bpf_rec_time.h); kernel stacks read the clock */
  u->time_ns = type == STP_REC_USTACK
                   ? stp__rec_time((struct stp__rec_clock *)k->rec_clock, bpf_get_current_task_btf())
                   : bpf_ktime_get_ns();
  u->token = token;
  u->probe_id = (uint16_t)k->probe_id;
  u->nr = 0;
  u->exact = 0;
  u->kind = (uint8_t)kind;
  u->stop = 0;
  k->rec_pos = STP_REC_BODY + sizeof(struct stp_ustack);
  return u;
}
#define stp__ustack_begin(k, flags, kind, token) \
  stp__stackrec_begin((k), STP_REC_USTACK, (flags), (kind), (token))

/* A stack of at most STP_USTACK_INPLACE frames is written straight into the ring: one reserve of
 * a fixed size (the helper takes a constant), the pcs stored by plain loads and stores, instead
 * of building it in rec[] and copying it twice (bpf_probe_read_kernel, then bpf_ringbuf_output).
 * The record is always that size; `nr` says how many pcs count and user space reads no more.
 * Deeper stacks take the staged path below. */
#if MAXBACKTRACE < 16
# define STP_USTACK_INPLACE MAXBACKTRACE
#else
# define STP_USTACK_INPLACE 16
#endif
struct stp__ustack_inplace {
  struct stp_rec_hdr h;
  struct stp_ustack u;
  uint64_t pcs[STP_USTACK_INPLACE];
};

static __always_inline int stp__ustack_emit_inplace(struct stp_common *k, int flags, int kind,
                                                    uint64_t token, uint32_t n)
{
  struct stp__ustack_inplace *r;
  struct task_struct *t;
  uint64_t wake, ns;
  if (n > STP_USTACK_INPLACE)
    return 0;
  wake = stp__rec_wake(sizeof(*r));
  r = bpf_ringbuf_reserve(&stp_events, sizeof(*r), 0);
  if (!r) {
    struct stp_session *s = stp__session();
    if (s)
      stp__count(&s->drops);
    return 1;
  }
  t = bpf_get_current_task_btf();
  /* a stack copy went just before: the same time pairs the two */
  ns = k->uw.snap_ns ? k->uw.snap_ns
                     : stp__rec_time((struct stp__rec_clock *)k->rec_clock, t);
  r->h.type = STP_REC_USTACK;
  r->h.id = (uint16_t)flags;
  r->h.len = sizeof(*r) - sizeof(r->h);
  r->u.pid = (uint32_t)t->tgid;
  r->u.tid = (uint32_t)t->pid;
  r->u.time_ns = ns;
  r->u.token = token;
  r->u.probe_id = (uint16_t)k->probe_id;
  r->u.nr = (uint16_t)n;
  r->u.exact = (uint16_t)k->uw.exact;
  r->u.kind = (uint8_t)kind;
  r->u.stop = (uint8_t)k->uw.stop;
  for (uint32_t i = 0; i < STP_USTACK_INPLACE; i++) {
    if (i >= n)
      break;
    r->pcs[i] = k->uw.pcs[i];
  }
  bpf_ringbuf_submit(r, wake);
  return 1;
}

/* Emit k->uw as a record (token 0: print it now). */
static __always_inline void stp__ustack_emit(struct stp_common *k, int flags, uint64_t token)
{
  int nouser = k->uw.stop == STP_STOP_NO_USER;
  uint32_t n = k->uw.n;
  if (n > MAXBACKTRACE)
    n = MAXBACKTRACE;
/* bench/walk_cost.sh's stream-staged: the staged path always. Under STP_CTF a record carries its
 * context (stp_rec_ctx, STP_REC_BODY) after the header, which only the staged path writes. */
#if !defined(STP_NO_USTACK_INPLACE) && !defined(STP_CTF)
  if (stp__ustack_emit_inplace(k, flags, nouser ? STP_USTACK_NO_USER : STP_USTACK_PCS, token, n))
    return;
#endif
  struct stp_ustack *u = stp__ustack_begin(k, flags, nouser ? STP_USTACK_NO_USER : STP_USTACK_PCS,
                                           token);
  u->nr = (uint16_t)n;
  u->exact = (uint16_t)k->uw.exact;
  u->stop = (uint8_t)k->uw.stop;
  if (k->uw.snap_ns)  /* a stack copy went just before: the same time pairs the two */
    u->time_ns = k->uw.snap_ns;
  if (n) {
    uint32_t bytes = n * 8;
    STP_CLAMP_REG(bytes, 8 * MAXBACKTRACE);  /* for 6.1's verifier: clang drops the mask */
    bpf_probe_read_kernel(&k->rec[STP_REC_BODY + sizeof(struct stp_ustack)],
                          bytes, k->uw.pcs);
  }
  k->rec_pos += n * 8;
  stp__rec_end(k);
}

#define stp__token_str(buf, token) stp_token_str((buf), (token), STP_TOKEN_USER)

/* print_ubacktrace()'s record after the walk: a global function, as stp_ustack_sprint_rec below
 * (6.1: print_ubacktrace() twice then ubacktrace() in one probe was over the 1M limit). */
STP_RT_FN(stp_ustack_print_rec)
int stp_ustack_print_rec(struct stp_common *k, int flags)
{
  if (!k)
    return 0;
  stp__usnap_if_pending(k);
#ifndef STP_PROF_NO_EMIT  /* profiling (docs/DESIGN.md "What a walk costs"): the walk alone */
  stp__ustack_emit(k, flags, 0);
#endif
  return 0;
}

static __always_inline void stp__ustack_print(struct stp_common *k, int flags)
{
  stp__uwalk(k);
  stp_ustack_print_rec(k, flags);
}

/* sprint_ubacktrace()'s record and token after the walk: a global function, checked once per
 * program, after whose call the probe goes on from one state. Inline, 6.1's verifier carried
 * the record's many states into all the code after it: sprint_ubacktrace() then ubacktrace() in
 * one probe was "BPF program is too large" there (e2e run_stack_token). */
STP_RT_FN(stp_ustack_sprint_rec)
int stp_ustack_sprint_rec(struct stp_common *k, struct stp_strbuf *buf, int flags)
{
  uint64_t token;
  if (!k || !buf)
    return 0;
  stp__usnap_if_pending(k);
  token = stp_stack_token(k->uw.hash, STP_USTACK_PCS, flags);
  stp__ustack_emit(k, flags, token);
  stp__token_str(buf->s, token);
  return 0;
}

static __always_inline void stp__ustack_sprint(struct stp_common *k, char *buf, int flags)
{
  stp__uwalk(k);
  stp_ustack_sprint_rec(k, (struct stp_strbuf *)buf, flags);
}

/* "0x%x " per pc of pcs[0..n) from `skip`, at most `max` of them, into buf (MAXSTRINGLEN):
 * ubacktrace()/ucallers() and backtrace()/callers(). Whole "0x… " entries only: an address cut
 * at MAXSTRINGLEN would read back (strtol, print_stack, print_usyms) as another address.
 * SystemTap's runtime copies its printed stack cut at MAXSTRINGLEN - 1 bytes, mid-address. */
static __always_inline void stp__pcs_hex(char *buf, const uint64_t *pcs, uint32_t n, long skip,
                                         long max)
{
  uint32_t pos = 0;
  for (uint32_t i = 0; i < MAXBACKTRACE; i++) {
    if (i >= n || (long)i >= skip + max || pos >= STP_MAXSTRINGLEN - 1)
      break;
    if ((long)i < skip)
      continue;
    uint32_t start = pos;
    pos = stp_bpf_sfmt_long((struct stp_strbuf *)buf, pos, (int64_t)pcs[i & STP_UW_MASK_BITS],
                            STP_FMT_SPEC('x', STP_FLAG_ALT, 0, -1));
    if (pos >= STP_MAXSTRINGLEN - 1) {
      buf[start & (STP_MAXSTRINGLEN - 1)] = '\0';
      break;
    }
    buf[pos & (STP_MAXSTRINGLEN - 1)] = ' ';
    pos++;
    buf[pos & (STP_MAXSTRINGLEN - 1)] = '\0';
  }
}

/* ubacktrace()/ucallers(): "0x%x " per frame from `skip`, at most `max` frames. */
static __always_inline void stp__ustack_hex(struct stp_common *k, char *buf, long skip, long max)
{
  stp__uwalk(k);
  buf[0] = '\0';
  if (k->uw.stop == STP_STOP_NO_USER) {
    buf[0] = '\n';
    buf[1] = '\0';
    return;
  }
  stp__pcs_hex(buf, k->uw.pcs, k->uw.n, skip, max);
}

/* FNV-1a of a whole MAXSTRINGLEN buffer, 8 bytes at a time. A global function: unrolled inline,
 * the loop spilled past the 512-byte BPF stack at MAXSTRINGLEN=512. */
STP_RT_FN(stp_bpf_buf_hash)
uint64_t stp_bpf_buf_hash(const struct stp_strbuf *b, uint64_t h)
{
  if (!b)
    return h;
  for (int i = 0; i < STP_MAXSTRINGLEN / 8; i++)
    h = stp_fnv_u64(h, *(const uint64_t *)&b->s[i * 8]);
  return h;
}

/* print_ustack/sprint_ustack (print_stack/sprint_stack: type KSTACK, letter STP_TOKEN_KERNEL, no
 * pid in the hash): the hex list travels as a string; user space parses it. */
static __always_inline void stp__stack_str(struct stp_common *k, int type, char letter, char *buf,
                                           const char *stk, int flags)
{
  uint64_t token = 0;
  uint64_t pt = bpf_get_current_pid_tgid();
  if (buf) {
    /* content hash of the string: its first MAXSTRINGLEN bytes, 8 at a time */
    uint64_t h = stp_fnv_u64(STP_FNV_OFFSET, type == STP_REC_USTACK ? pt >> 32 : 0);
    /* zeroed first: the string copy leaves the bytes after its NUL as they were */
    bpf_probe_read_kernel(k->tmpb, STP_MAXSTRINGLEN, stp__zero_area);
    stp__str_copy(k->tmpb, stk);
    h = stp_bpf_buf_hash((const struct stp_strbuf *)k->tmpb, h);
    token = stp_stack_token(h, STP_USTACK_HEXSTR, flags);
  }
  stp__stackrec_begin(k, type, flags, STP_USTACK_HEXSTR, token);
  stp__rec_str(k, stk);
  stp__rec_end(k);
  if (buf)
    stp_token_str(buf, token, letter);
}
#define stp__ustack_str(k, buf, stk, flags) \
  stp__stack_str((k), STP_REC_USTACK, STP_TOKEN_USER, (buf), (stk), (flags))

/* usymname/usymdata/umodname: one address of the current process. */
static __always_inline void stp__usym(struct stp_common *k, char *buf, uint64_t addr, int flags)
{
  uint64_t h = stp_fnv_u64(stp_fnv_u64(STP_FNV_OFFSET, bpf_get_current_pid_tgid() >> 32), addr);
  uint64_t token = stp_stack_token(h, STP_USTACK_SYM, flags);
  struct stp_ustack *u = stp__ustack_begin(k, flags, STP_USTACK_SYM, token);
  u->nr = 1;
  u->exact = 1;
  stp__rec_long(k, (int64_t)addr);
  stp__rec_end(k);
  stp__token_str(buf, token);
}

#define _stp_ustack_print(flags) stp__ustack_print(&c->k, (flags))
#define _stp_ustack_sprint(buf, n, flags) stp__ustack_sprint(&c->k, (buf), (flags))
#define _stp_ustack_hex(buf, n, skip, max) stp__ustack_hex(&c->k, (buf), (skip), (max))
#define _stp_ustack_print_str(stk, flags) stp__ustack_str(&c->k, 0, (stk), (flags))
#define _stp_ustack_sprint_str(buf, n, stk, flags) stp__ustack_str(&c->k, (buf), (stk), (flags))
#define _stp_usym_sprint(buf, n, addr, flags) stp__usym(&c->k, (buf), (uint64_t)(addr), (flags))

#endif /* STP_BPF_USTACK_RECORDS_H */
