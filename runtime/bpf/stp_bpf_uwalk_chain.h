/* ukstap BPF runtime, user-stack walk: the caller-chain cache.
 *
 * A syscall or uprobe probe meets the same stack event after event (a loop calling read(), a
 * function called from one place). A walk is a function of its inputs only: the leaf's
 * registers, the unwind rows (fixed for one version of the process's VMA mirror: rows never
 * change once written) and the stack words the CFI steps read. So the walk records what it read
 * (address and value) and which of the leaf's registers it used; a later walk from the same
 * leaf (process, mirror version, pc, sp, and those registers) reads the stack once, compares
 * every recorded word, and when all are equal takes the recorded pcs: the very walk, not a
 * guess (an unwinder never invents a frame). One word differs and it walks as before.
 *
 * Kept only for walks whose outcome depends on nothing else: task context (slot 0, as the leaf
 * row), every frame's row found through the mirror (no kernel VMA answer, no file without a
 * table, no frame-pointer frame), ended by the tables (end of stack) or MAXBACKTRACE, at most
 * STP_CHAIN_READS aligned words read, all within one window (STP_UWIN bytes). A walk that
 * failed a read, met a pending table or a frame it could not unwind is walked every time.
 * `-D STP_NO_CHAIN_CACHE` turns it off (profiling: bench/walk_cost.sh id_nochain).
 */
#ifndef STP_BPF_UWALK_CHAIN_H
#define STP_BPF_UWALK_CHAIN_H

#ifndef STP_CHAIN_WAYS
# define STP_CHAIN_WAYS 4  /* entries per CPU (a power of two), direct-mapped by (pc, sp) */
#endif

/* The leaf's registers a walk's steps used (beyond pc and sp, which are the key). */
#if STP_CHAIN_READS & (STP_CHAIN_READS - 1) || STP_CHAIN_WAYS & (STP_CHAIN_WAYS - 1)
# error "STP_CHAIN_READS and STP_CHAIN_WAYS must be powers of two"
#endif

#define STP_CHAIN_USED_FP 1u  /* a CFA = fp rule while fp was still the leaf's value */
#define STP_CHAIN_USED_BX 2u  /* a CFA = rbx rule while rbx was still the leaf's value */
#define STP_CHAIN_USED_LR 4u  /* the leaf's RA in its link register (arm64; x86_64's vfork) */

struct stp_chain_ent {
  uint64_t pc, sp, fp, bx, lr;
  uint32_t tgid, gen;          /* the mirror version + 1 it was walked under; 0: empty */
  uint32_t used;               /* STP_CHAIN_USED_* */
  uint32_t n, stop, nreads;
  uint64_t hash;               /* the walk's hash (tgid and pcs) */
  uint64_t phash;              /* and over the pcs alone */
  uint64_t lo;                 /* the stack words read lie in [lo, lo + span) */
  uint32_t span;
  uint32_t own;                /* walked with the process's own mirror: `epoch` may vouch for it */
  uint64_t epoch;              /* the mirror epoch (stp_vmas_epoch) read before that walk */
  uint64_t val[STP_CHAIN_READS];
  uint16_t off[STP_CHAIN_READS];  /* their word index from lo */
  uint64_t pcs[MAXBACKTRACE];
};
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, STP_CHAIN_WAYS);
  __type(key, uint32_t);
  __type(value, struct stp_chain_ent);
} stp_chaincache SEC(".maps");

static __always_inline uint32_t stp__chain_way(uint64_t pc, uint64_t sp)
{
  return (uint32_t)((pc ^ (pc >> 12) ^ (sp >> 4) ^ (sp >> 11)) & (STP_CHAIN_WAYS - 1));
}

/* Every read a DWARF step makes goes through here (stp__uread): 8 bytes, the value read. */
static __always_inline void stp__chain_note(struct stp_uwalk *uw, uint64_t addr, uint32_t size,
                                            long rc, const void *dst)
{
  uint32_t i = uw->ch_n;
  if (rc != 0 || size != 8 || (addr & 7) || i >= STP_CHAIN_READS) {
    uw->ch_n = STP_CHAIN_READS + 1;  /* not cacheable */
    return;
  }
  if (!i || addr < uw->ch_lo)
    uw->ch_lo = addr;
  if (!i || addr > uw->ch_hi)
    uw->ch_hi = addr;
  uw->ch_addr[i & (STP_CHAIN_READS - 1)] = addr;
  uw->ch_val[i & (STP_CHAIN_READS - 1)] = *(const uint64_t *)dst;
  uw->ch_n = i + 1;
}

/* Before a step with `row`: which of the leaf's registers it reads. A register's value is the
 * leaf's or was read from the stack (a recorded word); equal to the leaf's, it counts as used
 * (a stricter key, never a wrong hit). */
static __always_inline void stp__chain_uses(struct stp_uwalk *uw, const struct stp_cfi_row *row)
{
  uint32_t ck = STP_ROW_CFA_KIND(row);
  if (ck == STP_CFA_FP && uw->regs.fp == uw->ch_fp0)
    uw->ch_used |= STP_CHAIN_USED_FP;
  if (ck == STP_CFA_BX && uw->regs.bx == uw->ch_bx0)
    uw->ch_used |= STP_CHAIN_USED_BX;
  if (STP_ROW_RA_KIND(row) == STP_RA_LR && uw->regs.lr_valid)
    uw->ch_used |= STP_CHAIN_USED_LR;
}

/* The recorded words against the stack now (read into the window). A global function: its
 * loop is checked once per program. 1: all equal. */
STP_RT_FN(stp_chain_check)
int stp_chain_check(struct stp_uwalk *uw, struct stp_chain_ent *e)
{
  uint32_t i, nr;
  if (!uw || !e)
    return 0;
  nr = e->nreads;
  for (i = 0; i < STP_CHAIN_READS; i++) {
    if (i >= nr)
      break;
    if (uw->winq[e->off[i] & (STP_UWIN / 8 - 1)] != e->val[i])
      return 0;
  }
  return 1;
}

/* The entry for the leaf in uw->regs, if one was kept for it (process, pc, sp and the leaf's
 * registers its walk used); its validity for the mirror is the caller's to check. */
static __always_inline struct stp_chain_ent *stp__chain_find(struct stp_uwalk *uw, uint32_t *way)
{
  struct stp_chain_ent *e;
  *way = stp__chain_way(uw->regs.pc, uw->regs.sp);
  e = bpf_map_lookup_elem(&stp_chaincache, way);
  if (!e || !e->gen || e->pc != uw->regs.pc || e->sp != uw->regs.sp || e->tgid != uw->tgid)
    return 0;
  if (((e->used & STP_CHAIN_USED_FP) && e->fp != uw->regs.fp) ||
      ((e->used & STP_CHAIN_USED_BX) && e->bx != uw->regs.bx) ||
      ((e->used & STP_CHAIN_USED_LR) && e->lr != uw->regs.lr))
    return 0;
  return e;
}

/* Whether entry e's walk still holds: the mirror unchanged since (the epoch it was kept under,
 * when it came from the process's own mirror: no lookup; else the mirror version `vm`), then
 * every recorded stack word equal. 1: uw filled. With `lazy_pcs` (ustack_id() and the
 * ubacktrace() key token, which need the pcs only to store an id not stored yet) the pcs stay
 * in the entry: uw->ch_pcs_way names it, stp__chain_pcs reads them. Only a walk of this context
 * (slot 0, busy while the probe runs) rewrites the entry. */
static __always_inline int stp__chain_take(struct stp_uwalk *uw, struct stp_chain_ent *e,
                                           uint32_t way, int lazy_pcs)
{
  uint64_t len;
  uint32_t n, bytes;
  len = e->span;
  if (len < 8 || len > STP_UWIN)
    return 0;
  if (stp__uread_win(uw, len, e->lo) != 0)
    return 0;
  /* The window now holds [lo, lo + span): a walk that goes on (not here) must not trust it. */
  uw->win_ok = 0;
  if (!stp_chain_check(uw, e))
    return 0;
  n = e->n;
  if (n < 1 || n > MAXBACKTRACE)
    return 0;
  if (lazy_pcs) {
    uw->ch_pcs_way = way + 1;
  } else {
    bytes = n * 8;
    STP_CLAMP_REG(bytes, 8 * MAXBACKTRACE);
    if (bpf_probe_read_kernel(uw->pcs, bytes, e->pcs) != 0)
      return 0;
  }
  uw->n = n;
  uw->exact = n;
  uw->stop = e->stop;
  uw->hash = e->hash;
  uw->phash = e->phash;
  return 1;
}

/* Where the pcs of the last walk are: uw->pcs, or the chain-cache entry a lazy hit left them in
 * (checked to be that walk's: same hash and depth); 0 if neither (never expected). */
static __always_inline const uint64_t *stp__chain_pcs(struct stp_uwalk *uw)
{
  uint32_t way = uw->ch_pcs_way;
  struct stp_chain_ent *e;
  if (!way)
    return uw->pcs;
#ifdef STP_TEST_NO_PCS_COPY  /* testing (run_chain_cache): the stale pcs[], as if never copied */
  return uw->pcs;
#endif
  way = (way - 1) & (STP_CHAIN_WAYS - 1);
  e = bpf_map_lookup_elem(&stp_chaincache, &way);
  if (!e || !e->gen || e->hash != uw->hash || e->n != uw->n)
    return 0;
  return e->pcs;
}

/* After a full walk that recorded its reads: keep it when its outcome depended on nothing but
 * them (see the top of this file). */
static __always_inline void stp__chain_keep(struct stp_uwalk *uw, struct stp_proc_vmas *vm,
                                            int own, uint64_t epoch, uint64_t pc, uint64_t sp,
                                            uint64_t lr)
{
  uint32_t way, i, nr = uw->ch_n, n = uw->n;
  uint64_t span;
  struct stp_chain_ent *e;
  if (!vm || nr > STP_CHAIN_READS || uw->mirror_miss || uw->inexact || uw->exact != n || n < 1 ||
      n > MAXBACKTRACE || (uw->stop != STP_STOP_END && uw->stop != STP_STOP_DEPTH))
    return;
  span = nr ? uw->ch_hi + 8 - uw->ch_lo : 8;
  if (span > STP_UWIN)
    return;
  way = stp__chain_way(pc, sp);
  e = bpf_map_lookup_elem(&stp_chaincache, &way);
  if (!e)
    return;
  e->gen = 0;  /* invalid while it is rewritten */
  e->pc = pc;
  e->sp = sp;
  e->fp = uw->ch_fp0;
  e->bx = uw->ch_bx0;
  e->lr = lr;
  e->tgid = uw->tgid;
  e->used = uw->ch_used;
  e->n = n;
  e->stop = uw->stop;
  e->hash = uw->hash;
  e->phash = uw->phash;
  e->lo = nr ? uw->ch_lo : sp & ~7ull;
  e->span = (uint32_t)span;
  e->own = own;
  e->epoch = epoch;
  for (i = 0; i < STP_CHAIN_READS; i++) {
    if (i >= nr)
      break;
    e->off[i] = (uint16_t)((uw->ch_addr[i] - e->lo) >> 3);
    e->val[i] = uw->ch_val[i];
  }
  e->nreads = nr;
  uint32_t bytes = n * 8;
  STP_CLAMP_REG(bytes, 8 * MAXBACKTRACE);
  if (bpf_probe_read_kernel(e->pcs, bytes, uw->pcs) != 0)
    return;
  e->gen = vm->gen + 1;
}

#endif /* STP_BPF_UWALK_CHAIN_H */
