/* ukstap BPF runtime: the event time a USTACK record carries, without reading the clock at
 * every event where that can be done exactly.
 *
 * User space needs a stack record's time for one thing: which of the process's mappings were
 * live at the event (the VMA tracker's histories, vma-tracker/process_history.h), to symbolize
 * its pcs against them. bpf_ktime_get_ns() costs ~60 ns an event in the KVM guest the project is
 * measured on (rdtsc_ordered; a counting probe that reads it takes 155 ns instead of 95), half of a
 * streamed stack's record.
 *
 * Every mapping change the tracker knows is stamped inside an mmap write-locked section of the
 * process's address space (perf's MMAP2 side-band record is written from mmap_region and
 * mprotect under mmap_write_lock; exec and fork bring another mm). On kernels where
 * mm->mm_lock_seq is a seqcount_t (checked by its BTF type; CONFIG_PER_VMA_LOCK), it is one
 * that mmap_write_lock and mmap_write_unlock both increment (odd while a writer holds it).
 * So if this context read an even mm_lock_seq s and then took the time t0, and a later event of the same address space reads s again, no write-locked
 * section began or ended between the two reads and none was running at the first: no mapping
 * change lies between t0 and now, and every mapping was live at t0 exactly when it is live now.
 * The record then carries t0 (lookups at t0 and at now give the same mappings, the reader's
 * side-band drain for it is already done); otherwise the clock is read. Kept per context (one
 * CPU, one slot) with the tgid and the task's self_exec_id (an mm freed by exec and another
 * allocated at the same address), for at most STP_REC_TIME_JIFFIES jiffies.
 *
 * Kernels whose mm_lock_seq is not a seqcount (none before 6.4, a plain int bumped at unlock
 * only after that, or no CONFIG_PER_VMA_LOCK) read the clock at every event, as does
 * -D STP_NO_REC_TIME_REUSE=1 (bench/walk_cost.sh stream-clock).
 */
#ifndef STP_BPF_REC_TIME_H
#define STP_BPF_REC_TIME_H

#ifndef STP_REC_TIME_JIFFIES
# define STP_REC_TIME_JIFFIES 64
#endif

/* mm_struct as of 6.12 (CO-RE flavor): the field matches only where it is a seqcount, a
 * struct; the int of 6.4-6.11 does not (libbpf: a struct and an int are not compatible). */
struct stp__seqcount {
  unsigned int sequence;
} __attribute__((preserve_access_index));
struct mm_struct___stp_lockseq {
  struct stp__seqcount mm_lock_seq;
} __attribute__((preserve_access_index));

/* k->rec_clock: the last time this context read the clock and what it holds for. */
struct stp__rec_clock {
  uint64_t ns;
  uint64_t mm;
  uint64_t exec_id;
  uint64_t jiffies;
  uint32_t tgid;
  uint32_t seq;  /* even: a valid entry */
};

_Static_assert(sizeof(struct stp__rec_clock) <= sizeof(((struct stp_common *)0)->rec_clock),
               "stp_common.rec_clock holds a struct stp__rec_clock");

/* The time for a record of the current task (t), whose address space is mm. */
static __always_inline uint64_t stp__rec_time(struct stp__rec_clock *c, struct task_struct *t)
{
#if !defined(STP_NO_REC_TIME_REUSE)
  if (bpf_core_field_exists(((struct mm_struct___stp_lockseq *)0)->mm_lock_seq)) {
    struct mm_struct___stp_lockseq *mm = (void *)t->mm;
    uint64_t now_j, ns, exec_id;
    uint32_t seq, tgid;
    if (!mm)
      return bpf_ktime_get_ns();
    seq = mm->mm_lock_seq.sequence;  /* before the clock (rdtsc_ordered fences the load) */
    tgid = t->tgid;
    exec_id = t->self_exec_id;
    now_j = bpf_jiffies64();
    if (c->ns && !(seq & 1) && c->seq == seq && c->mm == (uint64_t)mm && c->tgid == tgid &&
        c->exec_id == exec_id && now_j - c->jiffies < STP_REC_TIME_JIFFIES)
      return c->ns;
    ns = bpf_ktime_get_ns();
    c->ns = (seq & 1) ? 0 : ns;
    c->seq = seq;
    c->mm = (uint64_t)mm;
    c->tgid = tgid;
    c->exec_id = exec_id;
    c->jiffies = now_j;
    return ns;
  }
#endif
  return bpf_ktime_get_ns();
}

#endif /* STP_BPF_REC_TIME_H */
