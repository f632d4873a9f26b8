/* ukstap BPF runtime: user backtraces and user symbols (the hooks of ucontext-*.stp).
 *
 * Only return addresses leave the kernel: a walk fills c->k.uw.pcs, and a USTACK record
 * (common/stp_records.h) carries them with the pid and the time, so user space symbolizes them
 * against the mappings that were live at the event, even after the process has exited.
 *
 * sprint_* forms return a deferred token ("\x1eU" + 16 hex digits + "\x1f") and emit a record
 * that defines it; user space replaces the token when the string is printed. The token is a
 * hash of the content (pid, kind, flags, addresses), so equal stacks give equal strings and
 * aggregations over sprint_ubacktrace() keys still group them.
 */
#ifndef STP_BPF_USTACK_H
#define STP_BPF_USTACK_H

#include "arch/stp_arch_x86_64.h"
#include "common/stp_vma.h"
#include "unwind/stp_cfi_step.h"

#if STP_REC_CAP < 8 * MAXBACKTRACE + 64
# error "MAXBACKTRACE too large for the record scratch: raise MAXSTRINGLEN"
#endif
#define STP_UW_MASK_BITS 1023  /* pcs index mask (MAXBACKTRACE <= 1024) */

/* The VMA tracker's mirror of the targets' executable mappings (common/stp_vma.h): filled by
 * user space; the DWARF walk finds a pc's file and load bias here. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, STP_VMA_PROCS);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, uint32_t);
  __type(value, struct stp_proc_vmas);
} stp_vmas SEC(".maps");

/* The unwind tables (unwind/stp_cfi.h): rows of every loaded file in one pool, sized by the
 * loader before load; files by the tracker's file_id. */
#ifndef STP_CFI_ROWS
# define STP_CFI_ROWS (1 << 20)
#endif
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, STP_CFI_ROWS);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, uint32_t);
  __type(value, struct stp_cfi_row);
} stp_cfi_rows SEC(".maps");

/* An array (file ids are dense, from 1): its lookups are inlined by the verifier, no helper
 * call per frame. An entry with nr == 0 has no table. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, STP_CFI_FILES);
  __type(key, uint32_t);
  __type(value, struct stp_cfi_file);
} stp_cfi_files SEC(".maps");

#ifndef STP_CFI_PAGES
# define STP_CFI_PAGES (1 << 16)
#endif
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, STP_CFI_PAGES);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, uint32_t);
  __type(value, uint32_t);
} stp_cfi_pages SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, STP_CFI_FILES);
  __type(key, struct stp_cfi_inode);
  __type(value, uint32_t);
} stp_cfi_inodes SEC(".maps");

/* Per-CPU cache of (process, pc) -> row, direct-mapped: a call site seen before skips the
 * mapping search, the file and page lookups and the row search. An entry is valid only for the
 * mirror generation it was filled under (stp_proc_vmas.gen changes on every rewrite of the
 * process's mappings) and rows never move once written, so a hit is always the row the full
 * search would find. Frames resolved through the kernel's VMA (mirror lagging) are not cached. */
#define STP_ROWCACHE 256  /* entries per CPU (power of two) */
struct stp_rowcache_ent {
  uint64_t pc;
  uint32_t tgid, gen;
  uint32_t row;    /* index in stp_cfi_rows */
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

/* A read of user stack memory for a DWARF step, served from the walk's window of the stack
 * (refilled at the address on a miss: frames lie above each other, so one 512-byte read covers
 * several). `r` is &uw->regs, the walk's first member. A window that cannot be filled (the top
 * of the stack is nearer than 512 bytes) falls back to reading just the bytes asked for. */
static __always_inline long stp__uread(struct stp_uregs *r, void *dst, uint32_t size, uint64_t addr)
{
  struct stp_uwalk *uw = (struct stp_uwalk *)r;
  uint64_t off = addr - uw->win_lo;
  if (size > 16)
    return -1;
  if (!uw->win_ok || addr < uw->win_lo || off + size > STP_UWIN) {
    if (bpf_probe_read_user(uw->win, STP_UWIN, (const void *)addr) != 0) {
      uw->win_ok = 0;
      return bpf_probe_read_user(dst, size, (const void *)addr);
    }
    uw->win_lo = addr;
    uw->win_ok = 1;
    off = 0;
  }
  if (size == 8) {  /* every DWARF step reads 8 bytes: a plain load, no helper call */
    *(uint64_t *)dst = *(uint64_t *)&uw->win[off & (STP_UWIN - 1)];
    return 0;
  }
  return bpf_probe_read_kernel(dst, size & 31, &uw->win[off & (STP_UWIN - 1)]);
}

/* bpf_loop's ctx must point to the stack: it carries the context pointer. */
struct stp__uwalk_ctx {
  struct stp_common *k;
  struct stp_proc_vmas *vm;  /* the task's mappings, looked up once per walk */
  struct stp_rowcache *rc;   /* this CPU's row cache */
};

/* The executable mapping holding pc: binary search over the entries (sorted by start), one
 * halving per bpf_loop iteration (see stp__rowsearch). */
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

/* Binary search of a file's rows, one halving per bpf_loop iteration: an open-coded loop whose
 * two branches carry different lo/hi makes the verifier walk every path (2^steps). */
struct stp__rowsearch {
  uint64_t rel;
  int64_t lo, hi, ans;
  uint32_t first;
};

static long stp__rowsearch_cb(uint32_t i, void *ctx)
{
  struct stp__rowsearch *rs = ctx;
  struct stp_cfi_row *row;
  int64_t mid;
  uint32_t key;
  if (rs->lo > rs->hi)
    return 1;
  mid = rs->lo + ((rs->hi - rs->lo) >> 1);
  key = rs->first + (uint32_t)mid;
  row = bpf_map_lookup_elem(&stp_cfi_rows, &key);
  if (!row)
    return 1;
  if (row->pc <= rs->rel) {
    rs->ans = mid;
    rs->lo = mid + 1;
  } else {
    rs->hi = mid - 1;
  }
  return 0;
}

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
#define STP__VM_EXEC 0x4
#define STP__EBUSY 16

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
/* Per-process state kept in arrays (no map-update locks): slot of a tgid. */
#define STP_PROC_SLOTS 1024  /* power of two */
#define STP_PROC_SLOT(tgid) ((tgid) & (STP_PROC_SLOTS - 1))
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

static __always_inline uint64_t stp__kvma_check(const struct stp__kvma_ent *e, uint32_t tgid,
                                                uint64_t mm)
{
  uint64_t h = stp_fnv_u64(STP_FNV_OFFSET, e->kv.start);
  h = stp_fnv_u64(h, e->kv.end);
  h = stp_fnv_u64(h, e->kv.pgoff);
  h = stp_fnv_u64(h, e->kv.ino);
  h = stp_fnv_u64(h, ((uint64_t)e->kv.dev << 32) | e->kv.vdso);
  h = stp_fnv_u64(h, e->time_ns);
  h = stp_fnv_u64(h, ((uint64_t)tgid << 32) | e->gen);
  return stp_fnv_u64(h, mm);
}

/* The cached mapping at pc of the current process (tgid) into *kv; 0 when there is none. Each
 * entry is copied before it is checked: a copy torn by a writer on another CPU fails its hash. */
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
    struct stp__kvma_ent e = c->e[i];
    if (e.kv.found && pc >= e.kv.start && pc < e.kv.end && e.gen == own_gen &&
        now - e.time_ns < STP_KVMA_TTL_NS && e.check == stp__kvma_check(&e, tgid, mm)) {
      *kv = e.kv;
      return 1;
    }
  }
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
  e->check = stp__kvma_check(e, tgid, (uint64_t)BPF_CORE_READ(t, mm));
}

/* A new program image: its executable mappings (the program's text at mm->start_code, the
 * interpreter's where the task will start, its entry pc) are known here, in process context
 * where bpf_find_vma always answers, before its first sample. Attached only when the script
 * walks user stacks. The interpreter maps the libraries later (those come from the samples).
 * The mirror of the image before the exec is dropped: its addresses mean nothing now (the
 * tracker writes the new one when it reads the exec). */
static __always_inline void stp__kvma_seed(struct task_struct *t, uint32_t tgid, uint64_t addr)
{
  struct stp__kvma kv = {};
  if (bpf_find_vma(t, addr, stp__kvma_cb, &kv, 0) == 0 && kv.found && kv.exec)
    stp__kvma_remember(t, tgid, 0, &kv);
}

SEC("raw_tp/sched_process_exec")
int stp_rt_exec_seed(struct bpf_raw_tracepoint_args *ctx)
{
  struct task_struct *t = bpf_get_current_task_btf();
  struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);
  uint64_t code = BPF_CORE_READ(t, mm, start_code);
  uint64_t entry = r ? STP_X86_64_PT_PC(r) : 0;
  uint32_t tgid = (uint32_t)(bpf_get_current_pid_tgid() >> 32);
  bpf_map_delete_elem(&stp_vmas, &tgid);
  stp__kvma_seed(t, tgid, code);
  if (entry)
    stp__kvma_seed(t, tgid, entry);
  return 0;
}

/* File id and load bias of pc: the VMA mirror first, else the kernel's VMA and the inode map.
 * 1: a table; 2: executable memory without a table (JIT code, or a file not loaded yet: the
 * frame-pointer fallback may try); 0: pc is in no executable mapping (the walk must stop);
 * 3: what is mapped at pc is unknown (the mmap lock was busy: the walk must stop). */
static __always_inline int stp__pc_file(struct stp_uwalk *uw, struct stp_proc_vmas *vm,
                                        uint64_t pc, uint32_t *file_id, uint64_t *bias,
                                        struct stp_cfi_file **fp, int *from_mirror)
{
  struct stp_vma_entry *e = stp__vma_find(vm, pc, &uw->vma_hint);
  struct stp_cfi_file *f;
  uint32_t key;
  long err;
  if (e) {
    key = e->file_id;
    f = bpf_map_lookup_elem(&stp_cfi_files, &key);
    if (!f || !f->nr)
      return 2;
    *file_id = key;
    *bias = e->bias;
    *fp = f;
    *from_mirror = 1;
    return 1;
  }
  uw->mirror_miss = 1;
  /* What the kernel said of pc before (to this walk's earlier frames too: consecutive frames
   * are mostly in one file, and in interrupt context a second bpf_find_vma would fail), else
   * ask it. */
  struct stp__kvma kv = {};
  if (!stp__kvma_cached(uw->tgid, pc, uw->own_gen, &kv)) {
    struct task_struct *t = bpf_get_current_task_btf();
    err = bpf_find_vma(t, pc, stp__kvma_cb, &kv, 0);
    if (err == -STP__EBUSY)
      return 3;
    if (err != 0 || !kv.exec)
      return 0;
    if (kv.found)
      stp__kvma_remember(t, uw->tgid, uw->own_gen, &kv);
  }
  if (!kv.found)
    return 2;  /* anonymous executable memory */
  if (kv.vdso) {
    key = stp_config.vdso_file_id;
  } else {
    struct stp_cfi_inode ik = { kv.ino, kv.dev, 0 };
    uint32_t *id = bpf_map_lookup_elem(&stp_cfi_inodes, &ik);
    if (!id)
      return 2;
    key = *id;
  }
  f = bpf_map_lookup_elem(&stp_cfi_files, &key);
  if (!f || !f->nr)
    return 2;
  *file_id = key;
  *bias = kv.start - (kv.pgoff << 12) - (uint64_t)f->delta;
  *fp = f;
  return 1;
}

/* The row for the current frame, or 0 when the pc has no table (no file, no FDE); *where says
 * what pc is in (stp__pc_file's answer; 1 for a cache hit). */
static __always_inline struct stp_cfi_row *stp__cfi_row(struct stp_proc_vmas *vm,
                                                        struct stp_rowcache *rc,
                                                        struct stp_uregs *r, int *where)
{
  struct stp_uwalk *uw = (struct stp_uwalk *)r;
  struct stp_rowcache_ent *ce = 0;
  struct stp_cfi_file *f = 0;
  struct stp_cfi_row *row;
  uint64_t rel, bias = 0;
  int64_t idx;
  uint32_t key, first, file_id = 0;
  int from_mirror = 0;
  if (rc && vm) {
    ce = &rc->e[stp__rowcache_slot(r->pc)];
    if (!r->exact_pc && ce->pc == r->pc && ce->tgid == uw->tgid && ce->gen == vm->gen &&
        ce->exact == 0) {
      key = ce->row;
      *where = 1;
      return bpf_map_lookup_elem(&stp_cfi_rows, &key);
    }
  }
  *where = stp__pc_file(uw, vm, r->pc, &file_id, &bias, &f, &from_mirror);
  if (*where != 1 || !f)
    return 0;
  rel = r->pc - bias - (r->exact_pc ? 0 : 1);  /* a return address may follow a last call */
  if (rel < f->base)
    return 0;
  rel -= f->base;
  first = f->first;
  struct stp__rowsearch rs = { rel, 0, (int64_t)f->nr - 1, -1, first };
  uint64_t page = rel >> STP_CFI_PAGE_SHIFT;
  if (page + 1 < f->npages) {  /* narrow the search to the rows of rel's page */
    uint32_t pk = f->page_first + (uint32_t)page, *lo, *hi;
    lo = bpf_map_lookup_elem(&stp_cfi_pages, &pk);
    pk++;
    hi = bpf_map_lookup_elem(&stp_cfi_pages, &pk);
    if (lo && hi) {
      rs.lo = *lo;
      rs.hi = *hi;
    }
  }
  bpf_loop(32, stp__rowsearch_cb, &rs, 0);
  idx = rs.ans;
  if (idx < 0)
    return 0;
  key = first + (uint32_t)idx;
  row = bpf_map_lookup_elem(&stp_cfi_rows, &key);
  if (row && STP_ROW_CFA_KIND(row) == STP_CFA_INVALID && row->fp_off == STP_INV_NO_FDE)
    return 0;  /* between FDEs: no table for this pc */
  /* Return addresses only (exact_pc == 0). Caching the leaf's row too cut ~12% of the timer
   * samples of a multi-threaded sort short with a bad frame at their second step, although a
   * check found the cached and the searched rows equal; until that is understood, the leaf is
   * always searched (one search per walk). */
  if (row && ce && from_mirror && !r->exact_pc) {
    ce->pc = r->pc;
    ce->tgid = uw->tgid;
    ce->gen = vm->gen;
    ce->row = key;
    ce->exact = r->exact_pc;
  }
  return row;
}

/* One frame of the walk. A global function: the verifier checks it once per program, not once
 * per print_ubacktrace() call site (it is the bulk of the walk's instructions). 0: a frame was
 * added; 1: the walk is over (uw->stop says why). */
STP_GLOBAL_FN int stp_uwalk_frame(struct stp_uwalk *uw, struct stp_proc_vmas *vm,
                                  struct stp_rowcache *rc)
{
  struct stp_cfi_row *row;
  uint32_t n, stop = STP_STOP_END;
  int ok;
  if (!uw)
    return 1;
  n = uw->n;
  if (n >= MAXBACKTRACE) {
    uw->stop = STP_STOP_DEPTH;
    return 1;
  }
  int where = 0;
  row = stp__cfi_row(vm, rc, &uw->regs, &where);
  if (row) {
    ok = stp_cfi_step(row, &uw->regs, &stop);
  } else if (where == 0) {
    /* Not code: a corrupt return address, or a callee-saved rbp taken for a frame. Never
     * guess past it. */
    uw->stop = STP_STOP_BAD_FRAME;
    return 1;
  } else if (where == 3) {
    uw->stop = STP_STOP_NO_MAPPINGS;  /* not knowing whether pc is code, do not guess */
    return 1;
  } else {
    ok = stp_fp_fallback_step(&uw->regs, &stop);
    uw->inexact = 1;  /* this frame and all above it */
    uw->fp_frames++;
  }
  if (!ok) {
    uw->stop = stop;
    return 1;
  }
  uw->pcs[n & STP_UW_MASK_BITS] = uw->regs.pc;
  uw->hash = stp_fnv_u64(uw->hash, uw->regs.pc);
  uw->n = n + 1;
  if (!uw->inexact)
    uw->exact = n + 1;
  return 0;
}

static long stp__uwalk_cb(uint32_t i, void *ctx)
{
  struct stp__uwalk_ctx *wc = ctx;
  return stp_uwalk_frame(&wc->k->uw, wc->vm, wc->rc) ? 1 : 0;  /* the verifier wants 0 or 1 exactly */
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

/* Walk the current task's user stack into k->uw: DWARF CFI where the VMA tracker and the tables
 * know the pc, frame pointers elsewhere (those frames and all above them are inexact). */
static __always_inline void stp__uwalk(struct stp_common *k)
{
  struct pt_regs *r = stp__user_regs();
  struct stp_session *s;
  struct stp_proc_vmas *vm = 0, *own = 0;
  uint64_t pt = bpf_get_current_pid_tgid();
  uint32_t tgid = (uint32_t)(pt >> 32);
  k->uw.n = 0;
  k->uw.exact = 0;
  k->uw.inexact = 0;
  k->uw.fp_frames = 0;
  k->uw.hash = stp_fnv_u64(STP_FNV_OFFSET, tgid);
  k->uw.tgid = tgid;
  if (!r) {
    k->uw.stop = STP_STOP_NO_USER;
  } else {
    /* Registers by context (all x86_64 contexts read the task's saved user pt_regs: the syscall
     * entry frame, the interrupt/NMI entry frame of a user-mode sample, the uprobe's regs, or
     * for a kernel-mode sample the state saved when the task entered the kernel), so pc, sp and
     * fp are all trusted; runtime/arch/ documents the per-context masks. */
    uint32_t slot = k->slot & 1;
    vm = own = bpf_map_lookup_elem(&stp_vmas, &tgid);
    if (!vm)
      vm = stp__parent_mirror();
    struct stp__uwalk_ctx wc = { k, vm, bpf_map_lookup_elem(&stp_rowcache, &slot) };
    /* bpf_task_pt_regs gives a BTF pointer: plain (fault-safe) loads, no helper calls. */
    uint64_t ip = STP_X86_64_PT_PC(r);
    k->uw.regs.pc = ip;
    k->uw.regs.sp = STP_X86_64_PT_SP(r);
    k->uw.regs.sp0 = k->uw.regs.sp;
    k->uw.regs.fp = STP_X86_64_PT_FP(r);
    k->uw.regs.fp_valid = 1;
    k->uw.regs.exact_pc = 1;
    k->uw.regs.lr = STP_X86_64_PT_LR(r);  /* rdi: vfork's RA (runtime/arch/) */
    k->uw.regs.lr_valid = 1;
    k->uw.regs.bx = STP_X86_64_PT_BX(r);
    k->uw.regs.bx_valid = 1;
    k->uw.win_ok = 0;
    k->uw.vma_hint = 0;
    k->uw.mirror_miss = 0;
    k->uw.own_gen = own ? own->gen + 1 : 0;
    k->uw.pcs[0] = ip;
    k->uw.hash = stp_fnv_u64(k->uw.hash, ip);
    k->uw.n = 1;
    k->uw.exact = 1;
    k->uw.stop = STP_STOP_END;
    bpf_loop(MAXBACKTRACE, stp__uwalk_cb, &wc, 0);
  }
  s = stp__session();
  if (k->uw.mirror_miss)
    stp__wake_for_mirror(s, tgid, own);  /* the process's own mirror version (0: none) */
  if (s) {
    stp__count(&s->ustack_stops[k->uw.stop & STP_STOP_MASK]);
    if (k->uw.fp_frames)
      __sync_fetch_and_add(&s->ustack_fp_frames, k->uw.fp_frames);
  }
}

/* The record header (USTACK, or KSTACK for kernel stacks) + struct stp_ustack; returns it for
 * the caller to finish. */
static __always_inline struct stp_ustack *stp__stackrec_begin(struct stp_common *k, int type,
                                                              int flags, int kind, uint64_t token)
{
  struct stp_ustack *u = (struct stp_ustack *)&k->rec[sizeof(struct stp_rec_hdr)];
  uint64_t pt = bpf_get_current_pid_tgid();
  stp__rec_begin(k, type, flags);
  u->pid = (uint32_t)(pt >> 32);
  u->tid = (uint32_t)pt;
  u->time_ns = bpf_ktime_get_ns();
  u->token = token;
  u->probe_id = (uint16_t)k->probe_id;
  u->nr = 0;
  u->exact = 0;
  u->kind = (uint8_t)kind;
  u->stop = 0;
  k->rec_pos = sizeof(struct stp_rec_hdr) + sizeof(struct stp_ustack);
  return u;
}
#define stp__ustack_begin(k, flags, kind, token) \
  stp__stackrec_begin((k), STP_REC_USTACK, (flags), (kind), (token))

/* Emit k->uw as a record (token 0: print it now). */
static __always_inline void stp__ustack_emit(struct stp_common *k, int flags, uint64_t token)
{
  int nouser = k->uw.stop == STP_STOP_NO_USER;
  struct stp_ustack *u = stp__ustack_begin(k, flags, nouser ? STP_USTACK_NO_USER : STP_USTACK_PCS,
                                           token);
  uint32_t n = k->uw.n;
  if (n > MAXBACKTRACE)
    n = MAXBACKTRACE;
  u->nr = (uint16_t)n;
  u->exact = (uint16_t)k->uw.exact;
  u->stop = (uint8_t)k->uw.stop;
  if (n)
    bpf_probe_read_kernel(&k->rec[sizeof(struct stp_rec_hdr) + sizeof(struct stp_ustack)],
                          (n * 8) & (8 * STP_UW_MASK_BITS + 8 - 1), k->uw.pcs);
  k->rec_pos += n * 8;
  stp__rec_end(k);
}

/* "\x1e" + letter (U: user, K: kernel) + 16 lowercase hex digits + "\x1f" */
static __always_inline void stp__token_str_of(char *buf, uint64_t token, char letter)
{
  buf[0] = '\x1e';
  buf[1] = letter;
#pragma unroll
  for (int i = 0; i < 16; i++) {
    uint32_t d = (token >> (60 - 4 * i)) & 15;
    buf[2 + i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
  }
  buf[18] = '\x1f';
  buf[19] = '\0';
}
#define stp__token_str(buf, token) stp__token_str_of((buf), (token), 'U')

static __always_inline uint64_t stp__token(uint64_t h, int kind, int flags)
{
  h = stp_fnv_u64(h, ((uint64_t)kind << 32) | (uint32_t)flags);
  return h ? h : 1;  /* 0 means "print now" */
}

static __always_inline void stp__ustack_print(struct stp_common *k, int flags)
{
  stp__uwalk(k);
  stp__ustack_emit(k, flags, 0);
}

static __always_inline void stp__ustack_sprint(struct stp_common *k, char *buf, int flags)
{
  uint64_t token;
  stp__uwalk(k);
  token = stp__token(k->uw.hash, STP_USTACK_PCS, flags);
  stp__ustack_emit(k, flags, token);
  stp__token_str(buf, token);
}

/* ubacktrace()/ucallers(): "0x%x " per frame from `skip`, at most `max` frames. */
static __always_inline void stp__ustack_hex(struct stp_common *k, char *buf, long skip, long max)
{
  uint32_t pos = 0;
  stp__uwalk(k);
  buf[0] = '\0';
  if (k->uw.stop == STP_STOP_NO_USER) {
    buf[0] = '\n';
    buf[1] = '\0';
    return;
  }
  for (uint32_t i = 0; i < MAXBACKTRACE; i++) {
    if (i >= k->uw.n || (long)i >= skip + max || pos >= STP_MAXSTRINGLEN - 1)
      break;
    if ((long)i < skip)
      continue;
    pos = stp_bpf_sfmt_long((struct stp_strbuf *)buf, pos, (int64_t)k->uw.pcs[i & STP_UW_MASK_BITS],
                            STP_FMT_SPEC('x', STP_FLAG_ALT, 0, -1));
    if (pos < STP_MAXSTRINGLEN - 1) {
      buf[pos & (STP_MAXSTRINGLEN - 1)] = ' ';
      pos++;
      buf[pos & (STP_MAXSTRINGLEN - 1)] = '\0';
    }
  }
}

/* FNV-1a of a whole MAXSTRINGLEN buffer, 8 bytes at a time. A global function: unrolled inline,
 * the loop spilled past the 512-byte BPF stack at MAXSTRINGLEN=512. */
STP_GLOBAL_FN uint64_t stp_bpf_buf_hash(const struct stp_strbuf *b, uint64_t h)
{
  if (!b)
    return h;
  for (int i = 0; i < STP_MAXSTRINGLEN / 8; i++)
    h = stp_fnv_u64(h, *(const uint64_t *)&b->s[i * 8]);
  return h;
}

/* print_ustack/sprint_ustack (print_stack/sprint_stack: type KSTACK, letter 'K', no pid in the
 * hash): the hex list travels as a string; user space parses it. */
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
    token = stp__token(h, STP_USTACK_HEXSTR, flags);
  }
  stp__stackrec_begin(k, type, flags, STP_USTACK_HEXSTR, token);
  stp__rec_str(k, stk);
  stp__rec_end(k);
  if (buf)
    stp__token_str_of(buf, token, letter);
}
#define stp__ustack_str(k, buf, stk, flags) stp__stack_str((k), STP_REC_USTACK, 'U', (buf), (stk), (flags))

/* usymname/usymdata/umodname: one address of the current process. */
static __always_inline void stp__usym(struct stp_common *k, char *buf, uint64_t addr, int flags)
{
  uint64_t h = stp_fnv_u64(stp_fnv_u64(STP_FNV_OFFSET, bpf_get_current_pid_tgid() >> 32), addr);
  uint64_t token = stp__token(h, STP_USTACK_SYM, flags);
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

#endif /* STP_BPF_USTACK_H */
