/* ukstap BPF runtime, user-stack walk: the VMA tracker's mirror of a process's executable
 * mappings, as the walk reads it (which file a pc is in, and its load bias).
 *
 * User space (vma-tracker/) writes the mirror (common/stp_vma.h) from its side-band and so lags
 * the process a little: an exec, a fork or an mmap is mirrored when ukstap drains its record.
 * Here are the search, the parent's mirror for a child forked a moment ago, and the wake-up
 * that asks ukstap to catch up at once. What the mirror lacks, the kernel's own VMA answers
 * (bpf/stp_bpf_kvma_cache.h).
 */
#ifndef STP_BPF_VMA_MIRROR_H
#define STP_BPF_VMA_MIRROR_H

#include "common/stp_vma.h"

/* The VMA tracker's mirror of the targets' executable mappings (common/stp_vma.h): filled by
 * user space; the DWARF walk finds a pc's file and load bias here. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, STP_VMA_PROCS);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, uint32_t);
  __type(value, struct stp_proc_vmas);
} stp_vmas SEC(".maps");

/* The mirror's epoch: a counter that changes whenever stp_vmas does (the VMA tracker adds 1
 * after each value it writes or deletes, stp_rt_exec_seed after it deletes one at an exec). A
 * caller-chain cache entry found valid under epoch E with the process's own mirror stays valid
 * while the epoch is E: a hit then needs no lookup of the mirror (bpf/stp_bpf_uwalk_chain.h).
 * Entries from a parent's mirror (a child forked a moment ago) are not vouched for by it: the
 * child's exec or its own mirror would change what its walk uses without always changing the
 * map. One word, mmap'ed by user space (vma-tracker/vma_mirror.cpp). */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, uint32_t);
  __type(value, uint64_t);
} stp_vmas_epoch SEC(".maps");

static __always_inline uint64_t *stp__vmas_epoch(void)
{
  uint32_t zero = 0;
  return bpf_map_lookup_elem(&stp_vmas_epoch, &zero);
}

/* The epoch protocol is a publication: a writer changes stp_vmas, then adds to the epoch; a
 * walk reads the epoch, then the mirror, and keeps its answer under that epoch. Were the
 * mirror's loads satisfied before the epoch's, a walk could see the new epoch and the old
 * mirror, and vouch for the old mirror under an epoch that never changes again: so the epoch's
 * read is an acquire, and a writer's add is ordered after its change (a release at least).
 * - Read: x86 never reorders a load with a later load (TSO), so a plain load is an acquire
 *   there. Elsewhere (arm64) it is not; BPF has a load-acquire instruction only from 6.15, so a
 *   fully ordered read-modify-write that changes nothing (fetch-add of 0: BPF_FETCH atomics are
 *   fully ordered) is the acquire, at the cost of an atomic on a shared word per walk.
 * - Add (stp_rt_exec_seed, after its delete): the fetch form, fully ordered. Without the
 *   result used clang emits BPF_ADD without BPF_FETCH, which the kernel's BPF memory model
 *   leaves unordered (arm64 JITs it as a relaxed STADD): the empty asm keeps the result used.
 * User space adds with a sequentially consistent fetch-add after its bpf(2) update
 * (vma-tracker/vma_mirror.cpp). */
static __always_inline uint64_t stp__vmas_epoch_acquire(uint64_t *epp)
{
#if defined(__TARGET_ARCH_x86)
  return *(volatile uint64_t *)epp;
#else
  return __sync_fetch_and_add(epp, 0);
#endif
}

static __always_inline void stp__vmas_epoch_bump(uint64_t *epp)
{
  uint64_t old = __sync_fetch_and_add(epp, 1);
  asm volatile("" : : "r"(old));
}

/* The executable mapping holding pc: binary search over the entries (sorted by start), one
 * halving per bpf_loop iteration (see stp__rowsearch, bpf/stp_bpf_cfi_tables.h). */
struct stp__vmasearch {
  struct stp_proc_vmas *vm;
  uint64_t pc;
  uint32_t lo, hi;
};

static long stp__vmasearch_cb(uint32_t i, void *ctx)
{
  struct stp__vmasearch *vs = ctx;
  uint32_t mid;
  if (vs->lo >= vs->hi || !vs->vm)
    return 1;
  mid = (vs->lo + vs->hi) / 2;
  if (vs->vm->e[mid & (STP_VMA_MAX - 1)].start <= vs->pc)
    vs->lo = mid + 1;
  else
    vs->hi = mid;
  return 0;
}

static __always_inline struct stp_vma_entry *stp__vma_find(struct stp_proc_vmas *vm, uint64_t pc,
                                                           uint64_t *hint)
{
  struct stp_vma_entry *e;
  uint32_t nr;
  if (!vm)
    return 0;
  /* Consecutive frames are mostly in one file: try the last frame's mapping first. */
  e = &vm->e[*hint & (STP_VMA_MAX - 1)];
  if (*hint < vm->nr && e->start <= pc && pc < e->end)
    return e;
  nr = vm->nr;
  struct stp__vmasearch vs = { vm, pc, 0, nr > STP_VMA_MAX ? STP_VMA_MAX : nr };
  bpf_loop(16, stp__vmasearch_cb, &vs, 0);
  if (vs.lo == 0)
    return 0;
  e = &vm->e[(vs.lo - 1) & (STP_VMA_MAX - 1)];
  *hint = vs.lo - 1;
  return pc < e->end ? e : 0;
}

/* A walk met a pc the VMA mirror lacks (a process that exec'd, forked or mapped code a moment
 * ago): wake the reader now, so it drains the side-band and rewrites the mirror before the next
 * event, instead of at its next 20 ms poll (a timer sample's walk cannot ask the kernel for
 * more than one mapping). A header-only record, at most one per STP_WAKE_GAP_NS. */
#ifndef STP_WAKE_GAP_NS
# define STP_WAKE_GAP_NS 100000
#endif
/* Each process asks once per version of its mirror (gen + 1; 0: none): a process the tracker
 * does not mirror (not a target, or ukstap itself) asks once, not at every walk. */
struct stp__wake_asked {
  uint32_t tgid, ver;
};
struct {  /* an array by tgid slot, written in place: no update locks in NMI context */
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, STP_PROC_SLOTS);
  __type(key, uint32_t);
  __type(value, struct stp__wake_asked);
} stp_wake_asked SEC(".maps");

static __always_inline void stp__wake_for_mirror(struct stp_session *s, uint32_t tgid,
                                                 struct stp_proc_vmas *vm)
{
  uint64_t now = bpf_ktime_get_ns();
  uint32_t ver = vm ? vm->gen + 1 : 0, slot = STP_PROC_SLOT(tgid);
  struct stp__wake_asked *asked = bpf_map_lookup_elem(&stp_wake_asked, &slot);
  struct stp_rec_hdr h = { STP_REC_WAKE, 0, 0 };
  if (!s || !asked)
    return;
  if (asked->tgid == tgid && asked->ver == ver)
    return;
  if (now - s->mirror_wake_ns < STP_WAKE_GAP_NS)
    return;  /* another process asked a moment ago: the drain it caused will come */
  s->mirror_wake_ns = now;
  asked->tgid = tgid;  /* two processes of one slot: at worst one asks again */
  asked->ver = ver;
  bpf_ringbuf_output(&stp_events, &h, sizeof h, BPF_RB_FORCE_WAKEUP);
}

/* A process forked a moment ago has its parent's mappings until it execs or maps more, and the
 * tracker mirrors it only when it drains the fork record: a shell's command substitutions and
 * pipelines live a few ms, often less than that lag. Until then the walk uses the parent's
 * mirror, when neither has exec'd since the fork (the child's self_exec_id is still the
 * parent's at fork, parent_exec_id, and so is the parent's). A pc the child mapped itself since
 * is not in the parent's mirror: it is a miss, as before. */
static __always_inline struct stp_proc_vmas *stp__parent_mirror(void)
{
  struct task_struct *t = bpf_get_current_task_btf();
  struct task_struct *p = BPF_CORE_READ(t, real_parent);
  uint64_t at_fork = BPF_CORE_READ(t, parent_exec_id);
  uint32_t ptgid;
  if (!p || BPF_CORE_READ(t, self_exec_id) != at_fork || BPF_CORE_READ(p, self_exec_id) != at_fork)
    return 0;
  /* exec ids are small per-lineage counters: a reaper that adopted the child may match by
   * chance. The same program file too, then. */
  if (BPF_CORE_READ(t, mm, exe_file) != BPF_CORE_READ(p, mm, exe_file))
    return 0;
  ptgid = (uint32_t)BPF_CORE_READ(p, tgid);
  return bpf_map_lookup_elem(&stp_vmas, &ptgid);
}

#endif /* STP_BPF_VMA_MIRROR_H */
