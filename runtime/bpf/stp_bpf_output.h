/* ukstap BPF runtime: records to user space (layout: common/stp_records.h).
 *
 * A record is built in the context's rec[] scratch and copied with bpf_ringbuf_output: the
 * size is only known at the end, and reserving the worst case (32 strings) in the ring would
 * waste most of it. rec[] is STP_REC_CAP + MAXSTRINGLEN + 16 bytes and every write offset is
 * masked with STP_REC_CAP - 1, so a string of MAXSTRINGLEN at any masked offset stays inside it.
 * A full ring never blocks: the record is dropped and stp_session.drops counts it.
 */
#ifndef STP_BPF_OUTPUT_H
#define STP_BPF_OUTPUT_H

#define STP_REC_MASK (STP_REC_CAP - 1)

static __always_inline void stp__rec_begin(struct stp_common *k, int type, int id)
{
  struct stp_rec_hdr *h = (struct stp_rec_hdr *)k->rec;
  h->type = (uint16_t)type;
  h->id = (uint16_t)id;
  h->len = 0;
#ifdef STP_CTF
  {
    struct stp_rec_ctx *x = (struct stp_rec_ctx *)&k->rec[sizeof(struct stp_rec_hdr)];
    uint64_t pt = bpf_get_current_pid_tgid();
    h->type = (uint16_t)(type | STP_REC_CTX_FLAG);
    x->time_ns = k->hit_ns;
    x->cpu = bpf_get_smp_processor_id() | (k->slot == STP_SLOT_NMI ? STP_REC_CTX_SLOT1 : 0);
    x->probe_id = (uint32_t)k->probe_id;
    x->pid = (uint32_t)(pt >> 32);
    x->tid = (uint32_t)pt;
    bpf_get_current_comm(x->comm, sizeof x->comm);
  }
#endif
  k->rec_pos = STP_REC_BODY;
  k->rec_overflow = 0;
}

static __always_inline void stp__rec_long(struct stp_common *k, int64_t v)
{
  uint32_t pos = k->rec_pos;
  if (pos > STP_REC_CAP - 16) {
    k->rec_overflow = 1;
    return;
  }
  *(int64_t *)&k->rec[pos & STP_REC_MASK & ~7u] = v;
  k->rec_pos = pos + 8;
}

/* u32 length + bytes; the helper copies at most MAXSTRINGLEN-1 characters and a NUL. */
STP_SUBPROG void stp__rec_str(struct stp_common *k, const void *s)
{
  uint32_t pos = k->rec_pos, off, len;
  long n;
  if (pos > STP_REC_CAP - STP_MAXSTRINGLEN - 16) {
    k->rec_overflow = 1;
    return;
  }
  off = pos & STP_REC_MASK & ~7u;
  n = bpf_probe_read_kernel_str(&k->rec[off + 4], STP_MAXSTRINGLEN, s);
  len = n > 0 ? (uint32_t)(n - 1) : 0;
  *(uint32_t *)&k->rec[off] = len;
  k->rec_pos = pos + STP_REC_STR_SIZE(len & STP_STR_MASK);
}

/* Raw bytes as a string element (%m/%M arguments: formatted in user space). */
static __always_inline void stp__rec_mem(struct stp_common *k, int64_t addr, int64_t prec, int user)
{
  uint32_t pos = k->rec_pos, off, n;
  long rc;
  if (pos > STP_REC_CAP - STP_MAXSTRINGLEN - 16) {
    k->rec_overflow = 1;
    return;
  }
  n = prec < 0 ? 1 : prec > STP_MAXSTRINGLEN ? STP_MAXSTRINGLEN : (uint32_t)prec;
  n &= (2 * STP_MAXSTRINGLEN - 1);
  off = pos & STP_REC_MASK & ~7u;
  if (n)
    rc = user ? bpf_probe_read_user(&k->rec[off + 4], n, (const void *)addr)
              : bpf_probe_read_kernel(&k->rec[off + 4], n, (const void *)addr);
  else
    rc = 0;
  if (rc < 0) {
    stp__error(k, "memory copy fault [man error::fault]", STP_LOC_CURRENT);
    n = 0;
  }
  *(uint32_t *)&k->rec[off] = n;
  k->rec_pos = pos + STP_REC_STR_SIZE(n);
}

/* The wake-up flag for a record of `size` bytes about to be written. Waking the reader costs
 * microseconds per record when it keeps up; it polls every 20 ms anyway, so wake it only when
 * this record makes a quarter, a half or three quarters of the ring wait. Only then: a woken
 * reader drains the ring until it is empty, and a wake-up for every record past the quarter
 * (an irq_work each, while the reader was busy) cost ~300 ns of each record once it fell
 * behind (bench/walk_cost.sh). Each quarter, not the first only: a record that crossed one
 * without waking (a stack copy, bpf/stp_bpf_usnap.h, or two CPUs at once) is made up for by
 * the next crossing, not left to the 20 ms poll. */
static __always_inline uint64_t stp__rec_wake(uint32_t size)
{
#ifdef STP_PROF_NO_QUERY  /* profiling (docs/DESIGN.md "What a walk costs"): never wake */
  return BPF_RB_NO_WAKEUP;
#else
  uint64_t avail = bpf_ringbuf_query(&stp_events, BPF_RB_AVAIL_DATA);
  return (avail + size) / (STP_RINGBUF_SIZE / 4) != avail / (STP_RINGBUF_SIZE / 4)
             ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
#endif
}

#ifdef STP_CTF
/* --ctf/--lttng: the record about to be written and the hit's trace events. The loader makes
 * one event of a statement and the stacks printed with it (loader/ctf_output.cpp): a statement,
 * a user stack or a kernel stack starts a new event unless the hit's current one has none of
 * its kind yet. 1: this record starts an event; 0: it joins the current one; -1: it joins an
 * event whose first record was dropped (not written: a stack without its statement would be
 * an event of its own, and the trace would hold more events than the probes made). So a
 * dropped record counts as a discarded event (stp_session.drop_events) only when it started
 * one: "Tracer discarded N events" then counts events, not records. */
#define STP_CTF_EV_OPEN 8u
#define STP_CTF_EV_LOST 16u
static __always_inline int stp__ctf_event(struct stp_common *k)
{
  struct stp_rec_hdr *h = (struct stp_rec_hdr *)k->rec;
  uint32_t type = h->type & ~STP_REC_CTX_FLAG, bit;
  if (type == STP_REC_PRINTF || type == STP_REC_LOG || type == STP_REC_HIST) {
    bit = 1;
  } else if (type == STP_REC_USTACK || type == STP_REC_KSTACK) {
    struct stp_ustack *u = (struct stp_ustack *)&k->rec[STP_REC_BODY];
    if (u->token || u->kind == STP_USTACK_SYM || (h->id & _STP_SYM_LIST))
      return 0;  /* a deferred string or a symbol list: text, no event's stack */
    bit = type == STP_REC_USTACK ? 2 : 4;
  } else {
    return 0;
  }
  if ((k->ctf_event & STP_CTF_EV_OPEN) && !(k->ctf_event & bit)) {
    k->ctf_event |= bit;
    return (k->ctf_event & STP_CTF_EV_LOST) ? -1 : 0;
  }
  k->ctf_event = STP_CTF_EV_OPEN | bit;
  return 1;
}
#endif

/* A record not written: a user stack whose walk waited for a table is then no stack "cut short"
 * (the exit report counts waits not finished in user space), it was lost with its record. */
static __always_inline void stp__rec_unwritten(struct stp_common *k, struct stp_session *s)
{
  struct stp_rec_hdr *h = (struct stp_rec_hdr *)k->rec;
  struct stp_ustack *u = (struct stp_ustack *)&k->rec[STP_REC_BODY];
  if (s && (h->type & ~STP_REC_CTX_FLAG) == STP_REC_USTACK &&
      (u->stop & STP_STOP_MASK) == STP_STOP_NO_TABLE_YET)
    stp__count(&s->ustack_unwritten_waits);
}

STP_SUBPROG void stp__rec_end(struct stp_common *k)
{
  struct stp_rec_hdr *h = (struct stp_rec_hdr *)k->rec;
  uint32_t size = k->rec_pos;
  if (size > STP_REC_CAP)
    size = STP_REC_CAP;
  size = STP_REC_ALIGN(size);
  if (size < sizeof(struct stp_rec_hdr))
    size = sizeof(struct stp_rec_hdr);
  h->len = size - sizeof(struct stp_rec_hdr);
#ifdef STP_CTF
  int ev = stp__ctf_event(k);
  if (ev < 0) {
    struct stp_session *s = stp__session();
    if (s)
      stp__count(&s->drops);
    stp__rec_unwritten(k, s);
    return;
  }
#endif
  if (bpf_ringbuf_output(&stp_events, k->rec, size & (2 * STP_REC_CAP - 1), stp__rec_wake(size)) < 0) {
    struct stp_session *s = stp__session();
    if (s)
      stp__count(&s->drops);
    stp__rec_unwritten(k, s);
#ifdef STP_CTF
    if (s && ev) {
      stp__count(&s->drop_events);
      k->ctf_event |= STP_CTF_EV_LOST;
    }
#endif
  }
}

#define stp_printf_begin(c, fmt_id) stp__rec_begin(&(c)->k, STP_REC_PRINTF, (fmt_id))
#define stp_printf_long(c, v) stp__rec_long(&(c)->k, (v))
#define stp_printf_str(c, s) stp__rec_str(&(c)->k, (s))
/* %m/%M argument: prec bytes at addr (user memory when the '#' flag was given). */
#define stp_printf_mem(c, addr, prec, user) stp__rec_mem(&(c)->k, (addr), (prec), (user))
#define stp_printf_end(c) stp__rec_end(&(c)->k)

static __always_inline void stp__rec_text(struct stp_common *k, int type, int id, const void *msg)
{
  stp__rec_begin(k, type, id);
  stp__rec_str(k, msg);
  stp__rec_end(k);
}
#define stp_log(c, msg) stp__rec_text(&(c)->k, STP_REC_LOG, 0, (msg))
#define stp_warn(c, msg) stp__rec_text(&(c)->k, STP_REC_WARN, 0, (msg))

STP_SUBPROG void stp__emit_error(struct stp_common *k)
{
  stp__rec_text(k, STP_REC_ERROR, k->errloc < 0 ? STP_LOC_NONE : k->errloc, k->errmsg);
}

/* exit(): the handler goes on; no more kernel probes start; end probes will run. */
static __always_inline void stp__exit(struct stp_common *k, int how)
{
  struct stp_session *s = stp__session();
  if (s) {
    s->exit_requested = 1;
    if (how == STP_EXIT_ABORT)
      s->state = STP_SESSION_ERROR;
    else
      __sync_val_compare_and_swap(&s->state, STP_SESSION_RUNNING, STP_SESSION_STOPPING);
  }
  stp__rec_begin(k, STP_REC_EXIT, how);
  stp__rec_end(k);
}
#define stp_exit(c) stp__exit(&(c)->k, STP_EXIT_NORMAL)
/* abort(): stop the handler now (uncatchable), no end probes. */
#define stp_abort(c) (stp__exit(&(c)->k, STP_EXIT_ABORT), (c)->k.abort = 1)

#endif /* STP_BPF_OUTPUT_H */
