/* ukstap BPF runtime, user-stack walk: the walk itself.
 *
 * Registers from the task's saved user state, then one frame per bpf_loop iteration: the
 * frame's unwind row (bpf/stp_bpf_frame_row.h) and a DWARF CFI step (unwind/stp_cfi_step.h),
 * or a frame-pointer step where there is no table (those frames and all above them are
 * inexact). The pcs and the content hash land in the context (struct stp_uwalk, k->uw) for the
 * records and hooks of bpf/stp_bpf_ustack_records.h; why the walk stopped is counted per
 * session.
 */
#ifndef STP_BPF_UWALK_H
#define STP_BPF_UWALK_H

#include "arch/stp_arch_x86_64.h"
#include "bpf/stp_bpf_task_uregs.h"

#define STP_UW_MASK_BITS 1023  /* pcs index mask (MAXBACKTRACE <= 1024) */

/* A read of user stack memory for a DWARF step, served from the walk's window of the stack
 * (refilled at the address on a miss: frames lie above each other, so one STP_UWIN read covers
 * several; each refill is a helper call and, on a syscall's first one, the first touch of the
 * user stack). `r` is &uw->regs, the walk's first member. A refill that fails crosses into a
 * page that is not there: the end of the stack's mapping (its top nearer than STP_UWIN), or a
 * page of a big frame never touched (a user read cannot fault it in). A failed read takes a
 * fault (microseconds), so the window then stops at the address's page end (a window is at
 * most a page), and so does every refill below it; an address past it tries a whole window
 * again. A read across that page end, or an address whose own page is not there, reads just
 * the bytes asked for. */
/* A window refill of `len` bytes (1..STP_UWIN, checked by the caller), the bound applied again
 * in the helper's own register for 6.1's verifier (STP_CLAMP_REG: print_ubacktrace failed on
 * Debian 12's kernel, "R2 min value is negative"). */
static __always_inline long stp__uread_win(struct stp_uwalk *uw, uint64_t len, uint64_t addr)
{
  STP_CLAMP_REG(len, STP_UWIN);
  return bpf_probe_read_user(uw->win, len, (const void *)addr);
}

static __always_inline long stp__uread_raw(struct stp_uregs *r, void *dst, uint32_t size, uint64_t addr)
{
  struct stp_uwalk *uw = (struct stp_uwalk *)r;
  uint64_t off = addr - uw->win_lo, len = STP_UWIN;
  if (size > 16)
    return -1;
  if (!uw->win_ok || addr < uw->win_lo || off + size > uw->win_len) {
    /* The window starts at the word holding addr (the bytes before it are in addr's page), so
     * an 8-byte read of an aligned stack slot is one aligned load from winq[] below. */
    uint64_t lo = addr & ~7ull;
#ifdef STP_PROF_REPEAT_UREAD  /* profiling (docs/DESIGN.md "What a walk costs"): refill twice */
    bpf_probe_read_user(uw->win, STP_UWIN, (const void *)lo);
#endif
    if (uw->win_end && addr >= uw->win_end)
      uw->win_end = 0;  /* past a page that was not there: try whole windows again */
    if (uw->win_end) {
      if (uw->win_end - addr < size)
        return bpf_probe_read_user(dst, size, (const void *)addr);
      if (uw->win_end - lo < len)
        len = uw->win_end - lo;
    }
    if (len > STP_UWIN || len < 1)
      len = STP_UWIN;
    if (stp__uread_win(uw, len, lo) != 0) {
      uint64_t page_end = (addr | 4095) + 1;
      uw->win_ok = 0;
      if (uw->win_end || len != STP_UWIN || page_end - lo >= STP_UWIN)
        return bpf_probe_read_user(dst, size, (const void *)addr);
      len = page_end - lo;
      if (len > STP_UWIN || len < 1)
        return -1;
      if (stp__uread_win(uw, len, lo) != 0)
        return bpf_probe_read_user(dst, size, (const void *)addr);
      uw->win_end = page_end;
      if (len < (addr - lo) + size)
        return bpf_probe_read_user(dst, size, (const void *)addr);
    }
    uw->win_lo = lo;
    uw->win_len = len;
    uw->win_ok = 1;
    off = addr - lo;
  }
  /* Every DWARF step reads 8 bytes, mostly of an aligned slot: one load, no helper call (a
   * load through a char pointer was eight byte loads, a fifth of a cached frame). */
  if (size == 8 && !(off & 7)) {
    *(uint64_t *)dst = uw->winq[(off >> 3) & (STP_UWIN / 8 - 1)];
    return 0;
  }
  return bpf_probe_read_kernel(dst, size & 31, &uw->win[off & (STP_UWIN - 1)]);
}

#include "bpf/stp_bpf_uwalk_chain.h"

/* A read stp__uread's window does not serve as one aligned load (a refill, or a read across a
 * word): stp__uread_raw as a global function, the word in uw->rd_word (0 when the read failed,
 * as bpf_probe_read_user leaves it). The verifier checks the refill logic once per program;
 * inlined at each of a CFI step's seven reads, it was most of the walk's verifier work. The
 * window's hits stay inline: a call per read cost a full walk ~11 ns a frame (measured). */
STP_RT_FN(stp_uread_refill)
int stp_uread_refill(struct stp_uwalk *uw, uint64_t addr)
{
  uint64_t v = 0;
  long rc;
  if (!uw)
    return -1;
  rc = stp__uread_raw(&uw->regs, &v, 8, addr);
  uw->rd_word = v;
  return rc ? -1 : 0;
}

/* A DWARF step's read of the stack (a word: every read of stp_cfi_step is 8 bytes): the window,
 * and noted for the caller-chain cache. */
static __always_inline long stp__uread(struct stp_uregs *r, void *dst, uint32_t size, uint64_t addr)
{
  struct stp_uwalk *uw = (struct stp_uwalk *)r;
  uint64_t off = addr - uw->win_lo;
  long rc = 0;
  if (size != 8)
    return -1;
  if (uw->win_ok && addr >= uw->win_lo && off + 8 <= uw->win_len && !(off & 7)) {
    *(uint64_t *)dst = uw->winq[(off >> 3) & (STP_UWIN / 8 - 1)];
  } else {
    rc = stp_uread_refill(uw, addr);
    *(uint64_t *)dst = uw->rd_word;
  }
#ifndef STP_NO_CHAIN_CACHE
  if (uw->ch_on)
    stp__chain_note(uw, addr, size, rc, dst);
#endif
  return rc;
}

/* bpf_loop's ctx must point to the stack: it carries the context pointer. */
struct stp__uwalk_ctx {
  struct stp_common *k;
  struct stp_proc_vmas *vm;  /* the task's mappings, looked up once per walk */
  struct stp_rowcache *rc;   /* this CPU's row cache */
};

/* What one frame of the walk did. The bpf_loop callback turns it into 0 (go on) or 1 (stop):
 * the verifier accepts no other return value. */
enum stp_uwalk_step {
  STP_UWALK_NEXT = 0,   /* a frame was added */
  STP_UWALK_OVER = 1,   /* the walk is over: uw->stop says why */
};

/* The leaf frame's row. A syscall or uprobe probe's leaf is the same pc event after event (the
 * syscall wrapper, the probed instruction), and it is the one frame the row cache does not
 * serve (bpf/stp_bpf_frame_row.h: exact pcs are always searched), so its mapping search and
 * row search were a third of a 15-frame walk. The row is kept in the walk itself, with the
 * process (tgid) and the mirror version (a global rewrite counter: no two mirrors share one)
 * it was found under; rows never change once written. Only rows found through the mirror are
 * kept (not the kernel's VMA answers), and only in task context (slot 0): timer samples'
 * leaves are anywhere, and caching them was once seen to cut stacks short (see
 * stp__cfi_row). */
static __always_inline struct stp_cfi_row *stp__leaf_row(struct stp_uwalk *uw,
                                                         struct stp_proc_vmas *vm,
                                                         struct stp_rowcache *rc,
                                                         enum stp_pc_where *where)
{
  struct stp_cfi_row *row;
  if (uw->leaf_keep && vm && uw->leaf_gen == vm->gen + 1 && uw->leaf_pc == uw->regs.pc &&
      uw->leaf_tgid == uw->tgid) {
    *where = STP_PC_TABLE;
    return &uw->leaf_row;
  }
  uw->leaf_gen = 0;
  row = stp__cfi_row(vm, rc, &uw->regs, where);
  if (!row || !uw->leaf_keep || !vm || uw->mirror_miss)
    return row;
  uw->leaf_row = *row;
  uw->leaf_pc = uw->regs.pc;
  uw->leaf_tgid = uw->tgid;
  uw->leaf_gen = vm->gen + 1;
  return &uw->leaf_row;
}

/* One frame of the walk. A global function: the verifier checks it once per program, not once
 * per print_ubacktrace() call site (it is the bulk of the walk's instructions). */
STP_RT_FN(stp_uwalk_frame)
int stp_uwalk_frame(struct stp_uwalk *uw, struct stp_proc_vmas *vm,
                    struct stp_rowcache *rc)
{
  struct stp_cfi_row *row;
  uint32_t n, stop = STP_STOP_END;
  int ok;
  if (!uw)
    return STP_UWALK_OVER;
  n = uw->n;
  if (n >= MAXBACKTRACE) {
    uw->stop = STP_STOP_DEPTH;
    return STP_UWALK_OVER;
  }
  enum stp_pc_where where = STP_PC_NOT_CODE;
#ifndef STP_NO_LEAF_ROW  /* -D STP_NO_LEAF_ROW: as before (profiling) */
  if (n == 1 && uw->regs.exact_pc)
    row = stp__leaf_row(uw, vm, rc, &where);
  else
#endif
    row = stp__cfi_row(vm, rc, &uw->regs, &where);
#ifdef STP_PROF_REPEAT_ROW  /* profiling: every frame's row lookup twice */
  row = stp__cfi_row(vm, rc, &uw->regs, &where);
#endif
  if (row) {
#ifndef STP_NO_CHAIN_CACHE
    if (uw->ch_on)
      stp__chain_uses(uw, row);
#endif
    /* The step reads a copy of the row in the walk: the leaf's row (kept in the walk) and a
     * table's (a map value) are then one pointer for the verifier, which checks the step once
     * for both instead of once per kind of pointer. */
    uw->step_row = *row;
#ifdef STP_PROF_REPEAT_STEP  /* profiling: the CFI step twice (the first one undone) */
    struct stp_uregs saved = uw->regs;
    uint32_t stop2;
    stp_cfi_step(&uw->step_row, &uw->regs, &stop2);
    uw->regs = saved;
#endif
    ok = stp_cfi_step(&uw->step_row, &uw->regs, &stop);
  } else if (where == STP_PC_NOT_CODE) {
    /* Not code: a corrupt return address, or a callee-saved rbp taken for a frame. Never
     * guess past it. */
    uw->stop = STP_STOP_BAD_FRAME;
    return STP_UWALK_OVER;
  } else if (where == STP_PC_UNKNOWN) {
    uw->stop = STP_STOP_NO_MAPPINGS;  /* not knowing whether pc is code, do not guess */
    return STP_UWALK_OVER;
  } else if (where == STP_PC_TABLE_PENDING) {
    /* Its table is coming: no frame-pointer guess (most code keeps none). A print/sprint
     * record carries a stack copy that user space walks then (bpf/stp_bpf_usnap.h). */
    uw->stop = STP_STOP_NO_TABLE_YET;
    return STP_UWALK_OVER;
  } else {
    ok = stp_fp_fallback_step(&uw->regs, &stop);
    uw->inexact = 1;  /* this frame and all above it */
    uw->fp_frames += ok;  /* frames found, not steps tried (-v's count of inexact frames) */
  }
  if (!ok) {
    uw->stop = stop;
    return STP_UWALK_OVER;
  }
  uw->pcs[n & STP_UW_MASK_BITS] = uw->regs.pc;
  uw->hash = stp_fnv_u64(uw->hash, uw->regs.pc);
  uw->phash = stp_fnv_u64(uw->phash, uw->regs.pc);
  uw->n = n + 1;
  if (!uw->inexact)
    uw->exact = n + 1;
  return STP_UWALK_NEXT;
}

/* Two frames per iteration: the loop's call of the callback cost a fifth of a cached frame
 * (perf, bench item 1). The depth check of stp_uwalk_frame ends the walk at MAXBACKTRACE. */
static long stp__uwalk_cb(uint32_t i, void *ctx)
{
  struct stp__uwalk_ctx *wc = ctx;
  if (stp_uwalk_frame(&wc->k->uw, wc->vm, wc->rc) != STP_UWALK_NEXT)
    return 1;
  return stp_uwalk_frame(&wc->k->uw, wc->vm, wc->rc) != STP_UWALK_NEXT ? 1 : 0;
}

/* Walk the current task's user stack into k->uw: DWARF CFI where the VMA tracker and the tables
 * know the pc, frame pointers elsewhere (those frames and all above them are inexact).
 * `lazy_pcs`: a caller-chain cache hit may leave the pcs in the cache (k->uw.ch_pcs_way; read
 * them through stp__chain_pcs): for callers that need them only sometimes. */
static __always_inline void stp__uwalk_pcs_opt(struct stp_common *k, int lazy_pcs)
{
  /* The task's tgid and saved user registers from its BTF pointer: plain loads, one helper
   * call fewer than bpf_get_current_pid_tgid(); the registers at their offset from the task's
   * stack where the kernel allows it (bpf/stp_bpf_task_uregs.h), else bpf_task_pt_regs. */
  struct task_struct *t = bpf_get_current_task_btf();
  struct pt_regs *r = (t->flags & STP__PF_KTHREAD) ? 0 : stp__task_uregs(k, t);
  struct stp_session *s;
  struct stp_proc_vmas *vm = 0, *own = 0;
  uint32_t tgid = (uint32_t)t->tgid;
  k->uw.n = 0;
  k->uw.exact = 0;
  k->uw.inexact = 0;
  k->uw.fp_frames = 0;
  k->uw.hash = stp_fnv_u64(STP_FNV_OFFSET, tgid);
  k->uw.phash = STP_FNV_OFFSET;
  k->uw.tgid = tgid;
  k->uw.ch_pcs_way = 0;
  if (!r) {
    k->uw.stop = STP_STOP_NO_USER;
  } else {
    /* Registers by context (all x86_64 contexts read the task's saved user pt_regs: the syscall
     * entry frame, the interrupt/NMI entry frame of a user-mode sample, the uprobe's regs, or
     * for a kernel-mode sample the state saved when the task entered the kernel), so pc, sp and
     * fp are all trusted; runtime/arch/ documents the per-context masks. */
    uint32_t slot = k->slot & 1;
    /* The mirror's epoch before the mirror itself (bpf/stp_bpf_vma_mirror.h): a walk kept
     * under it is answered without looking the mirror up while nothing rewrote any mirror. */
    uint64_t *epp = stp__vmas_epoch();
    uint64_t epoch = epp ? stp__vmas_epoch_acquire(epp) : 0;  /* acquire: the mirror after it */
    int looked = 0;
    struct stp__uwalk_ctx wc = { k, 0, 0 };
    /* A BTF pointer (bpf_task_pt_regs or bpf_rdonly_cast): plain fault-safe loads, no helper. */
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
    k->uw.win_end = 0;
    k->uw.vma_hint = 0;
    k->uw.mirror_miss = 0;
    k->uw.leaf_keep = !(k->slot & 1);
    k->uw.pcs[0] = ip;
    k->uw.hash = stp_fnv_u64(k->uw.hash, ip);
    k->uw.phash = stp_fnv_u64(STP_FNV_OFFSET, ip);
    k->uw.n = 1;
    k->uw.exact = 1;
    k->uw.stop = STP_STOP_END;
#ifndef STP_NO_CHAIN_CACHE
    /* The caller-chain cache (bpf/stp_bpf_uwalk_chain.h): task context, as the leaf row. An
     * entry from the process's own mirror under the current epoch needs no mirror lookup;
     * any other is checked against the mirror's version. */
    k->uw.ch_on = 0;
    if (k->uw.leaf_keep) {
      uint32_t way;
      struct stp_chain_ent *e = stp__chain_find(&k->uw, &way);
      if (e && !(e->own && epp && e->epoch == epoch)) {
        vm = own = bpf_map_lookup_elem(&stp_vmas, &tgid);
        if (!vm)
          vm = stp__parent_mirror();
        looked = 1;
        if (!vm || e->gen != vm->gen + 1) {
          e = 0;
        } else {
          /* Valid for the mirror as it is at `epoch` (read before the lookup): so vouched for
           * from now on, if it is the process's own (another process's write moved the epoch). */
          e->own = own && vm == own && epp;
          e->epoch = epoch;
        }
      }
      if (e && stp__chain_take(&k->uw, e, way, lazy_pcs))
        goto walked;
    }
#endif
    if (!looked) {
      vm = own = bpf_map_lookup_elem(&stp_vmas, &tgid);
      if (!vm)
        vm = stp__parent_mirror();
    }
    wc.vm = vm;
    k->uw.own_gen = own ? own->gen + 1 : 0;
#ifndef STP_NO_CHAIN_CACHE
    if (k->uw.leaf_keep && vm) {
      k->uw.ch_n = 0;
      k->uw.ch_used = 0;
      k->uw.ch_fp0 = k->uw.regs.fp;
      k->uw.ch_bx0 = k->uw.regs.bx;
      k->uw.ch_on = 1;
    }
#endif
    wc.rc = bpf_map_lookup_elem(&stp_rowcache, &slot);  /* after the chain: a hit needs no rows */
    bpf_loop((MAXBACKTRACE + 1) / 2, stp__uwalk_cb, &wc, 0);
#ifndef STP_NO_CHAIN_CACHE
    if (k->uw.ch_on) {
      k->uw.ch_on = 0;
      stp__chain_keep(&k->uw, vm, own && vm == own && epp, epoch, ip, k->uw.regs.sp0,
                      STP_X86_64_PT_LR(r));
    }
walked:;
#endif
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

static __always_inline void stp__uwalk(struct stp_common *k)
{
  stp__uwalk_pcs_opt(k, 0);
}

#endif /* STP_BPF_UWALK_H */
