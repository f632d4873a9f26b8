/* ukstap BPF runtime, user-stack walk: the kernel's own view of the mapping at a pc, for pcs the
 * VMA mirror (bpf/stp_bpf_vma_mirror.h) lacks, and a cache of its answers.
 *
 * Asking the kernel (bpf_find_vma) is not always possible: in interrupt context only the first
 * call of an interrupt gets the mmap lock. So its answers are kept per process for the next
 * walks, and a program on sched_process_exec seeds them with the new image's mappings, in
 * process context where the kernel answers (its mmap_lock trylock fails only while a writer
 * holds or waits for the lock, rare for a new mm), before the first sample of the image.
 */
#ifndef STP_BPF_KVMA_CACHE_H
#define STP_BPF_KVMA_CACHE_H

#include "arch/stp_arch_x86_64.h"

/* The kernel's own view of the mapping at pc (bpf_find_vma), for pcs the mirror lacks (it lags
 * an exec, fork or mmap until ukstap drains the side-band: the walk asks for that at once, see
 * stp__uwalk). In task context (syscalls, uprobes) every frame can ask; in interrupt context
 * (timer samples) only the first call of an interrupt gets the mmap lock (its unlock is
 * deferred to a per-CPU irq_work), and the kernel's VMA iterator is refused there outright, so
 * a later frame whose pc the mirror lacks stops as "mappings unknown". */
struct stp__kvma {
  uint64_t start, end, pgoff, ino;
  uint32_t dev, vdso, found, exec;
};
#define STP__VM_EXEC 0x4  /* VM_EXEC of linux/mm.h (vmlinux.h has types, not macros) */
#define STP__EBUSY 16     /* bpf_find_vma: the mmap lock is taken (interrupt context) */

static long stp__kvma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
  struct stp__kvma *d = data;
  struct file *file = BPF_CORE_READ(vma, vm_file);
  d->start = BPF_CORE_READ(vma, vm_start);
  d->end = BPF_CORE_READ(vma, vm_end);
  d->pgoff = BPF_CORE_READ(vma, vm_pgoff);
  d->exec = (BPF_CORE_READ(vma, vm_flags) & STP__VM_EXEC) != 0;
  if (file) {
    d->ino = BPF_CORE_READ(file, f_inode, i_ino);
    d->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
    d->found = 1;
  } else if ((uint64_t)BPF_CORE_READ(task, mm, context.vdso) == d->start) {
    d->vdso = 1;
    d->found = 1;
  }
  return 0;
}

/* What the kernel told earlier walks of a process (and its exec, below), for the next ones: a
 * timer sample gets one bpf_find_vma answer per interrupt, so a new process's stacks that cross
 * files (libc -> the program) would stop at the second file until the mirror catches up, and a
 * coreutils process lives 1-2 ms, less than that. An entry is trusted only by the process
 * (tgid) and address space (mm: an exec starts afresh) that wrote it, while the process's own
 * mirror is the version it was (a rewritten mirror knows better: an munmap it has seen must not
 * be undone by the cache), and for STP_KVMA_TTL_NS at most. `check`, a hash of the entry with
 * those, rejects a torn entry (two CPUs writing one slot) and a slot another process wrote.
 * An array indexed by tgid, written in place: no map-update locks, which an NMI (a perf.hw
 * probe's walk) must not take. Entries keep the kernel's description (inode), not a file id: a
 * table the loader adds later is found through them. */
#define STP_KVMA_WAYS 4
#ifndef STP_KVMA_TTL_NS
# define STP_KVMA_TTL_NS 50000000ull
#endif
struct stp__kvma_ent {
  struct stp__kvma kv;
  uint64_t time_ns, check;
  uint32_t gen, pad;   /* the process's own mirror version when written (gen + 1; 0: none) */
};
struct stp__kvma_cache {
  uint32_t next, pad;
  struct stp__kvma_ent e[STP_KVMA_WAYS];
};
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, STP_PROC_SLOTS);
  __type(key, uint32_t);
  __type(value, struct stp__kvma_cache);
} stp_kvma_cache SEC(".maps");

static __always_inline uint64_t stp__kvma_check(const struct stp__kvma *kv, uint64_t time_ns,
                                                uint32_t gen, uint32_t tgid, uint64_t mm)
{
  uint64_t h = stp_fnv_u64(STP_FNV_OFFSET, kv->start);
  h = stp_fnv_u64(h, kv->end);
  h = stp_fnv_u64(h, kv->pgoff);
  h = stp_fnv_u64(h, kv->ino);
  h = stp_fnv_u64(h, ((uint64_t)kv->dev << 32) | kv->vdso);
  h = stp_fnv_u64(h, time_ns);
  h = stp_fnv_u64(h, ((uint64_t)tgid << 32) | gen);
  return stp_fnv_u64(h, mm);
}

/* The cached mapping at pc of the current process (tgid) into *kv; 0 when there is none (*kv
 * then all zero). Each entry is copied (its mapping into *kv, the rest into locals: no second
 * copy of an entry on the BPF stack, which the walk's call chain has little of) before it is
 * checked: a copy torn by a writer on another CPU fails its hash. */
static __always_inline int stp__kvma_cached(uint32_t tgid, uint64_t pc, uint32_t own_gen,
                                            struct stp__kvma *kv)
{
  uint32_t slot = STP_PROC_SLOT(tgid);
  struct stp__kvma_cache *c = bpf_map_lookup_elem(&stp_kvma_cache, &slot);
  uint64_t mm, now;
  if (!c)
    return 0;
  mm = (uint64_t)BPF_CORE_READ(bpf_get_current_task_btf(), mm);
  now = bpf_ktime_get_ns();
  for (int i = 0; i < STP_KVMA_WAYS; i++) {
    *kv = c->e[i].kv;
    uint64_t time_ns = c->e[i].time_ns, check = c->e[i].check;
    uint32_t gen = c->e[i].gen;
    if (kv->found && pc >= kv->start && pc < kv->end && gen == own_gen &&
        now - time_ns < STP_KVMA_TTL_NS && check == stp__kvma_check(kv, time_ns, gen, tgid, mm))
      return 1;
  }
  __builtin_memset(kv, 0, sizeof(*kv));
  return 0;
}

static __always_inline void stp__kvma_remember(struct task_struct *t, uint32_t tgid,
                                               uint32_t own_gen, const struct stp__kvma *kv)
{
  uint32_t slot = STP_PROC_SLOT(tgid);
  struct stp__kvma_cache *c = bpf_map_lookup_elem(&stp_kvma_cache, &slot);
  struct stp__kvma_ent *e;
  if (!c)
    return;
  e = &c->e[c->next++ & (STP_KVMA_WAYS - 1)];
  e->check = 0;  /* invalid while being written */
  e->kv = *kv;
  e->time_ns = bpf_ktime_get_ns();
  e->gen = own_gen;
  e->check = stp__kvma_check(&e->kv, e->time_ns, e->gen, tgid, (uint64_t)BPF_CORE_READ(t, mm));
}

/* A new program image: its executable mappings (the program's text at mm->start_code, the
 * interpreter's where the task will start, its entry pc) are known here, in process context
 * where bpf_find_vma answers (it only trylocks the mmap_lock, but the new mm is the task's
 * alone so far; a miss costs the seed only), before its first sample. Attached only when the script
 * walks user stacks. The interpreter maps the libraries later (those come from the samples).
 * The mirror of the image before the exec is dropped: its addresses mean nothing now (the
 * tracker writes the new one when it reads the exec). */
static __always_inline void stp__kvma_seed(struct task_struct *t, uint32_t tgid, uint64_t addr)
{
  struct stp__kvma kv = {};
  if (bpf_find_vma(t, addr, stp__kvma_cb, &kv, 0) == 0 && kv.found && kv.exec)
    stp__kvma_remember(t, tgid, 0, &kv);
}

/* The inode the walk's bpf_find_vma answer carries for a file, for the loader (struct
 * stp_cfi_inode_query): it maps a page of every file it gives a table and registers this key in
 * the inode map (stat()'s only when it cannot ask), which a stacked filesystem makes differ
 * from stat()'s. Never attached: run with BPF_PROG_TEST_RUN in ukstap's own process. Task
 * context, but bpf_find_vma only trylocks the mmap_lock: it answers -EBUSY while a writer holds
 * or waits for ukstap's (another ukstap thread's mmap, khugepaged), so its return goes back to
 * the loader, which asks again (loader/kernel_inode.cpp). */
SEC("syscall") int stp_cfi_inode_prog(struct stp_cfi_inode_query *q)
{
  struct stp__kvma kv = {};
  q->found = 0;
#ifdef STP_TEST_REFUSE_INODE_PROG  /* testing (run_first_event_mirror): a kernel refusing it */
  q->rc = *(volatile int32_t *)(long)q->addr;  /* a load through a scalar: the verifier refuses */
#endif
  q->rc = (int32_t)bpf_find_vma(bpf_get_current_task_btf(), q->addr, stp__kvma_cb, &kv, 0);
  if (q->rc == 0 && kv.found && !kv.vdso) {
    q->key.ino = kv.ino;
    q->key.dev = kv.dev;
    q->key.pad = 0;
    q->found = 1;
  }
  return 0;
}

SEC("raw_tp/sched_process_exec")
int stp_rt_exec_seed(struct bpf_raw_tracepoint_args *ctx)
{
  struct task_struct *t = bpf_get_current_task_btf();
  struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);
  uint64_t code = BPF_CORE_READ(t, mm, start_code);
  uint64_t entry = r ? STP_X86_64_PT_PC(r) : 0;
  uint32_t tgid = (uint32_t)(bpf_get_current_pid_tgid() >> 32);
  uint64_t *epoch = stp__vmas_epoch();
  /* A deleted mirror changes the epoch, after the delete: a chain entry kept from it is never
   * taken again (bpf/stp_bpf_vma_mirror.h). No mirror, no change: execs of other processes do
   * not disturb the targets' entries. */
  if (bpf_map_delete_elem(&stp_vmas, &tgid) == 0 && epoch)
    stp__vmas_epoch_bump(epoch);  /* ordered after the delete (bpf/stp_bpf_vma_mirror.h) */
  stp__kvma_seed(t, tgid, code);
  if (entry)
    stp__kvma_seed(t, tgid, entry);
  return 0;
}

#endif /* STP_BPF_KVMA_CACHE_H */
