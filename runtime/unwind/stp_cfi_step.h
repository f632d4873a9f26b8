/* ukstap unwinder: one DWARF CFI step, portable (compiled into the BPF module and natively, so
 * unit and replay tests run the very code the kernel runs).
 *
 * The includer defines STP_UNWIND_READ(dst, size, addr) (0 on success) before including
 * unwind/stp_fp_walk.h or this file, and may define STP_UNWIND_READ_REGS(r, dst, size, addr)
 * to read through a cache tied to the walk (the BPF module keeps a window of the stack: a
 * user-memory read costs ~200 ns in the kernel here, a window serves most frames with one).
 * Registers are x86_64's names; runtime/arch/ maps arm64's (fp = x29, lr = x30) and says which
 * are trusted per probe context.
 *
 * Never invent a frame: every way a step can fail stops the walk with a reason
 * (enum stp_unwind_stop); the CFA must move up the stack and stay within STP_STACK_SPAN of the
 * leaf's sp.
 */
#ifndef STP_CFI_STEP_H
#define STP_CFI_STEP_H

#include "unwind/stp_cfi.h"
#include "unwind/stp_fp_walk.h"
#include "unwind/stp_unwind.h"

#ifndef STP_UNWIND_INLINE
# define STP_UNWIND_INLINE static inline __attribute__((always_inline))
#endif
#ifndef STP_UNWIND_READ_REGS
# define STP_UNWIND_READ_REGS(r, dst, size, addr) STP_UNWIND_READ((dst), (size), (addr))
#endif

/* The registers a step needs, and which of them can be trusted. */
struct stp_uregs {
  uint64_t pc, sp, fp;
  uint64_t sp0;        /* the leaf's sp: frames lie in [sp0, sp0 + STP_STACK_SPAN] */
  uint32_t fp_valid;   /* 0: fp was scrubbed (untrusted in this context) or is undefined */
  uint32_t exact_pc;   /* 1: pc is not a return address (leaf, or after a signal frame) */
  uint64_t lr;         /* arm64 x30: the RA of an RA_LR row (x86_64 never reads it) */
  uint32_t lr_valid;   /* 0: lr untrusted in this context, or undefined after a step */
  uint32_t bx_valid;   /* 0: bx unknown (untrusted, or a frame's rule for it is not kept) */
  uint64_t bx;         /* x86_64 rbx: the base of a realigned frame's CFA (STP_CFA_BX) */
};

/* x86_64 rt_sigframe as __restore_rt sees it: sp points at the ucontext; uc_mcontext starts at
 * offset 40; within it rbp, rsp, rip are the 11th, 16th and 17th words. */
#define STP_SIGCTX_RBP (40 + 8 * 10)
#define STP_SIGCTX_RBX (40 + 8 * 11)
#define STP_SIGCTX_RSP (40 + 8 * 15)
#define STP_SIGCTX_RIP (40 + 8 * 16)

/* Binary search over `nr` rows for the last row whose pc <= rel. ROW_PC(i) yields row i's pc
 * (a map lookup in BPF, an array read natively). 24 steps cover 16M rows. Returns the index, or
 * -1 when rel is below the first row. */
#define STP_CFI_SEARCH(result, nr, rel, ROW_PC)                         \
  do {                                                                  \
    int64_t lo__ = 0, hi__ = (int64_t)(nr) - 1, ans__ = -1;             \
    for (int it__ = 0; it__ < 24; it__++) {                             \
      if (lo__ > hi__)                                                  \
        break;                                                          \
      int64_t mid__ = lo__ + ((hi__ - lo__) >> 1);                      \
      uint64_t pc__ = (ROW_PC(mid__));                                  \
      if (pc__ <= (rel)) {                                              \
        ans__ = mid__;                                                  \
        lo__ = mid__ + 1;                                               \
      } else {                                                          \
        hi__ = mid__ - 1;                                               \
      }                                                                 \
    }                                                                   \
    (result) = ans__;                                                   \
  } while (0)

/* One step with the row found for the current frame. 1: `r` now holds the caller's registers;
 * 0: stop, *stop says why. */
STP_UNWIND_INLINE int stp_cfi_step(const struct stp_cfi_row *row, struct stp_uregs *r,
                                   uint32_t *stop)
{
  uint64_t cfa = 0, ra = 0, fp = r->fp;
  uint32_t ra_kind = STP_ROW_RA_KIND(row);

  switch (STP_ROW_CFA_KIND(row)) {
  case STP_CFA_SP:
    cfa = r->sp + STP_ROW_CFA_OFF(row);
    break;
  case STP_CFA_FP:
    if (!r->fp_valid) {
      *stop = STP_STOP_UNTRUSTED;
      return 0;
    }
    cfa = r->fp + STP_ROW_CFA_OFF(row);
    break;
  case STP_CFA_BX:
    if (!r->bx_valid) {
      *stop = STP_STOP_UNTRUSTED;
      return 0;
    }
    cfa = r->bx + STP_ROW_CFA_OFF(row);
    break;
  case STP_CFA_PLT:
    cfa = r->sp + 8 + ((r->pc & 15) >= (uint64_t)row->cfa_off ? 8 : 0);
    break;
  case STP_CFA_DEREF:
    if (STP_UNWIND_READ_REGS(r, &cfa, 8, r->sp + STP_ROW_CFA_OFF(row))) {
      *stop = STP_STOP_READ_FAULT;
      return 0;
    }
    break;
  case STP_CFA_SIGNAL: {
    uint64_t sp = 0, pc = 0;
    if (STP_UNWIND_READ_REGS(r, &sp, 8, r->sp + STP_SIGCTX_RSP) ||
        STP_UNWIND_READ_REGS(r, &pc, 8, r->sp + STP_SIGCTX_RIP) ||
        STP_UNWIND_READ_REGS(r, &fp, 8, r->sp + STP_SIGCTX_RBP)) {
      *stop = STP_STOP_READ_FAULT;
      return 0;
    }
    if (sp <= r->sp || sp > r->sp0 + STP_STACK_SPAN) {
      *stop = STP_STOP_BAD_FRAME;
      return 0;
    }
    r->bx_valid = STP_UNWIND_READ_REGS(r, &r->bx, 8, r->sp + STP_SIGCTX_RBX) == 0;
    r->pc = pc;
    r->sp = sp;
    r->fp = fp;
    r->fp_valid = 1;
    r->lr_valid = 0;  /* x86_64 only: no lr in this layout */
    r->exact_pc = 1;  /* the interrupted instruction, not a return address */
    return 1;
  }
  case STP_CFA_STOP:
    *stop = STP_STOP_END;
    return 0;
  default:
    *stop = STP_STOP_INVALID_ROW;
    return 0;
  }

  /* The caller's frame lies above this one: a CFA at or below sp is a bad rule or a loop.
   * Except an RA_LR frame (an arm64 leaf that pushed nothing: CFA = sp): the RA is not on the
   * stack, and the step clears lr_valid, so it cannot repeat. */
  if (cfa < r->sp || (cfa == r->sp && ra_kind != STP_RA_LR) || cfa > r->sp0 + STP_STACK_SPAN) {
    *stop = STP_STOP_BAD_FRAME;
    return 0;
  }
  if (ra_kind == STP_RA_LR) {
    if (!r->lr_valid) {
      *stop = STP_STOP_UNTRUSTED;
      return 0;
    }
    ra = r->lr;
  } else if (ra_kind > STP_RA_LR) {
    *stop = STP_STOP_INVALID_ROW;
    return 0;
  } else if (STP_UNWIND_READ_REGS(r, &ra, 8,
                                  ra_kind == STP_RA_CFA_OFF ? cfa + row->ra_off : cfa - 8)) {
    *stop = STP_STOP_READ_FAULT;
    return 0;
  }
  if (STP_ROW_FP_KIND(row) == STP_FP_CFA_OFF) {
    if (STP_UNWIND_READ_REGS(r, &fp, 8, cfa + row->fp_off)) {
      *stop = STP_STOP_READ_FAULT;
      return 0;
    }
    r->fp_valid = 1;
  } else if (STP_ROW_FP_KIND(row) == STP_FP_UNDEFINED) {
    r->fp_valid = 0;
  }
  /* rbx: x86_64 rows (never RA_CFA_OFF, whose ra_off shares the field) carry its rule; a
   * saved rbx that cannot be read only makes it unknown (few frames need it). */
  if (ra_kind == STP_RA_CFA_OFF || row->bx_off == STP_BX_UNKNOWN)
    r->bx_valid = 0;
  else if (row->bx_off)
    r->bx_valid = STP_UNWIND_READ_REGS(r, &r->bx, 8, cfa + row->bx_off) == 0;
  if (ra == 0) {
    *stop = STP_STOP_END;
    return 0;
  }
  r->pc = ra;
  r->sp = cfa;
  r->fp = fp;
  r->exact_pc = 0;
  r->lr_valid = 0;  /* the caller's x30 was overwritten by the call that made this frame */
  return 1;
}

/* A frame-pointer step from r, for executable memory without an unwind table (JIT code): the
 * frames it finds are inexact (the caller marks them). */
STP_UNWIND_INLINE int stp_fp_fallback_step(struct stp_uregs *r, uint32_t *stop)
{
  struct stp_fp_state st;
  uint64_t ra = 0, fp = r->fp;
  if (!r->fp_valid) {
    *stop = STP_STOP_NO_TABLE;
    return 0;
  }
  st.fp = fp;
  st.floor = r->sp;
  st.ceiling = r->sp0 + STP_STACK_SPAN;
  st.stop = STP_STOP_END;
  st.pad = 0;
  if (!stp_fp_step(&st, &ra)) {
    /* fp 0 or RA 0 ends the chain, not (provably) the stack: stp_stack_abi.h */
    *stop = st.stop == STP_STOP_END ? (uint32_t)STP_STOP_FP_END : st.stop;
    return 0;
  }
  r->pc = ra;
  r->sp = fp + 16;
  r->fp = st.fp;
  r->exact_pc = 0;
  r->bx_valid = 0;  /* a frame without CFI: where it saved rbx is not known */
  r->lr_valid = 0;  /* the leaf's lr (arm64 x30, x86_64 rdi) is no caller's RA */
  return 1;
}

#if defined(STP_UWIN) && !defined(STP_CHAIN_READS)
# define STP_CHAIN_READS 64  /* stack words a cached caller chain may depend on */
#endif

/* A walk in progress (lives in the probe context: BPF's 512-byte stack cannot hold the pcs). */
struct stp_uwalk {
  struct stp_uregs regs;       /* the frame being unwound */
  uint64_t hash;               /* FNV-1a over tgid and pcs: the deferred token */
#ifdef STP_UWIN
  uint64_t phash;              /* FNV-1a over the pcs alone: ubacktrace()'s key (stackid.h) */
#endif
  uint32_t n;                  /* pcs[0..n) */
  uint32_t exact;              /* pcs[0..exact) are exact */
  uint32_t stop;               /* enum stp_unwind_stop */
  uint32_t inexact;            /* a frame-pointer step happened: the rest is inexact */
  uint32_t fp_frames;          /* frames found by frame-pointer fallback */
  uint32_t tgid;               /* whose mappings (stp_vmas) resolve the pcs */
  uint64_t pcs[MAXBACKTRACE];
#ifdef STP_UWIN
  uint64_t win_lo;             /* stack bytes [win_lo, win_lo + win_len) are in win[] */
  uint64_t win_ok;
  uint64_t win_len;            /* STP_UWIN, or less where the stack's mapping ends */
  uint64_t win_end;            /* where the stack's mapping ends, once a refill met it; 0: not yet */
  union {
    char win[STP_UWIN + 16];
    uint64_t winq[(STP_UWIN + 16) / 8];  /* the same bytes as words (aligned reads) */
  };
  uint64_t vma_hint;           /* index of the mapping the last frame was in */
  uint64_t rd_word;            /* the word stp_uread_refill read (bpf/stp_bpf_uwalk.h) */
  /* The frame's file, as stp_pc_file found it for stp_cfi_row_key (bpf/stp_bpf_frame_row.h),
   * and the row the step reads (a copy: bpf/stp_bpf_uwalk.h says why). Here, not on the BPF
   * stack, which 6.1 counts along the whole call chain of the walk. */
  uint64_t pcf_bias;           /* the file's load bias */
  uint32_t pcf_file_id;        /* its stp_cfi_files key */
  uint32_t pcf_from_mirror;    /* found through the VMA mirror (not the kernel's VMA) */
  struct stp_cfi_row step_row;
  uint32_t mirror_miss;        /* a pc was not in the VMA mirror: ask user space to catch up */
  uint32_t own_gen;            /* the process's own mirror version (gen + 1; 0: none) */
  /* The last walk's leaf (bpf/stp_bpf_uwalk.h, stp__leaf_row): kept across walks of this
   * context, valid for one process and one version of the mirror it came from. */
  struct stp_cfi_row leaf_row;
  uint64_t leaf_pc;
  uint32_t leaf_tgid, leaf_gen;  /* gen + 1 of that mirror; 0: nothing kept */
  uint32_t leaf_keep, leaf_pad;  /* this walk may use and keep it (task context only) */
  uint64_t stored_id[2];       /* the id this context last found or stored in stp_ustacks [0]
                                  and stp_ubtstacks [1] (bpf/stp_bpf_stackid.h); 0: none */
  uint64_t snap_ns;            /* the time of this walk's stack copy (bpf/stp_bpf_usnap.h), which
                                  its USTACK record carries too: user space pairs the two by it */
  /* The caller-chain cache (bpf/stp_bpf_uwalk_chain.h): what this walk read and used, so
   * that a later walk from the same leaf can be answered after checking exactly that. */
  uint32_t ch_on;              /* record this walk's reads (task context, a mirror) */
  uint32_t ch_n;               /* reads recorded; > STP_CHAIN_READS: not cacheable */
  uint32_t ch_used;            /* the leaf's registers the walk used (STP_CHAIN_USED_*) */
  uint32_t ch_pcs_way;         /* a hit left its pcs in this chain-cache way (+ 1; 0: they are in
                                  pcs[]): ustack_id() copies them only to store a new id */
  uint64_t ch_lo, ch_hi;       /* lowest and highest address read */
  uint64_t ch_fp0, ch_bx0;     /* the leaf's fp and rbx */
  uint64_t ch_addr[STP_CHAIN_READS];
  uint64_t ch_val[STP_CHAIN_READS];
#endif
};

#endif /* STP_CFI_STEP_H */
