/* ukstap BPF runtime, user-stack walk: the per-CPU cache of (process, pc) -> unwind row, read
 * and filled by stp__cfi_row (bpf/stp_bpf_frame_row.h): a program's walks pass the same call
 * sites again and again.
 */
#ifndef STP_BPF_ROW_CACHE_H
#define STP_BPF_ROW_CACHE_H

/* Per-CPU cache of (process, pc) -> row, direct-mapped: a call site seen before skips the
 * mapping search, the file and page lookups and the row search. An entry is valid only for the
 * mirror generation it was filled under (stp_proc_vmas.gen changes on every rewrite of the
 * process's mappings) and rows never move once written, so a hit is always the row the full
 * search would find (a rule never changes once written either). Frames resolved through the kernel's VMA (mirror lagging) are not cached. */
#define STP_ROWCACHE 256  /* entries per CPU (power of two) */
struct stp_rowcache_ent {
  uint64_t pc;
  uint32_t tgid, gen;
  uint32_t row;    /* the row's rule: index in stp_cfi_rules */
  uint32_t exact;  /* exact_pc of the lookup (pc or pc - 1 was searched) */
};
struct stp_rowcache {
  struct stp_rowcache_ent e[STP_ROWCACHE];
};
/* One cache per context slot: a perf_event (NMI slot) walk that interrupts a tracepoint's walk
 * on the same CPU must not meet an entry that walk is halfway through writing, nor rewrite one
 * it is reading. Within a slot the context's busy flag makes the walks exclusive. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 2);
  __type(key, uint32_t);
  __type(value, struct stp_rowcache);
} stp_rowcache SEC(".maps");

static __always_inline uint32_t stp__rowcache_slot(uint64_t pc)
{
  return (uint32_t)((pc ^ (pc >> 9) ^ (pc >> 17)) & (STP_ROWCACHE - 1));
}

#endif /* STP_BPF_ROW_CACHE_H */
