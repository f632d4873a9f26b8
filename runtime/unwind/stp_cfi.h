/* ukstap unwinder: the compact CFI row format (shared by the table compiler, the BPF stepper and
 * the native stepper).
 *
 * A file's table is its .eh_frame/.debug_frame compiled in user space (unwind/table_compiler)
 * into rows sorted by pc, one row per address range where the unwind rule changes (adjacent
 * rows with equal rules merged). pc is file-relative (ELF vaddr minus the table's base, the
 * lowest FDE start), so rows of a file are shared by every process that maps it.
 *
 * A row says how to find the caller's frame from this one (x86_64 register names; arm64 maps
 * them in runtime/arch/: SP = sp, FP = x29, LR = x30):
 *   CFA      = SP + cfa_off | FP + cfa_off | the PLT expression | *(SP + cfa_off)
 *            | BX + cfa_off (x86_64 rbx)
 *   RA       = *(CFA - 8)   (RA_CFA_M8: x86_64, every row its compiler accepts has it so)
 *            | *(CFA + ra_off) (RA_CFA_OFF: arm64 after `stp x29, x30, [sp, #-16]!`)
 *            | LR           (RA_LR: arm64 leaf/prologue/epilogue rows, the RA is still in x30)
 *   caller FP= FP (same value) | *(CFA + fp_off) | undefined
 *   caller BX= (x86_64 rbx, for an rbx-based CFA further up) BX | *(CFA + bx_off) | unknown
 *   caller SP= CFA
 *   caller LR= undefined (x30 is clobbered by the call that made this frame; only the innermost
 *              frame, or none, can have an RA_LR row)
 * Anything else is an INVALID row, which stops the walk with a reason: never a guessed frame.
 */
#ifndef STP_CFI_H
#define STP_CFI_H

enum stp_cfa_kind {
  STP_CFA_SP = 0,       /* CFA = sp + cfa_off */
  STP_CFA_FP = 1,       /* CFA = fp + cfa_off */
  STP_CFA_PLT = 2,      /* PLT stubs: CFA = sp + 8 + ((pc & 15) >= cfa_off ? 8 : 0) (cfa_off holds
                           the expression's constant: 11 for .plt, 10 for .plt.sec variants) */
  STP_CFA_DEREF = 3,    /* CFA = *(sp + cfa_off) */
  STP_CFA_SIGNAL = 4,   /* a signal trampoline (__restore_rt): the caller's registers are in
                           the ucontext at sp (x86_64: rsp = *(sp+160), rip = *(sp+168),
                           rbp = *(sp+120)); its pc is exact, not a return address */
  STP_CFA_STOP = 5,     /* the outermost frame: RA undefined (_start, thread entry) */
  STP_CFA_INVALID = 6,  /* a rule the stepper cannot evaluate; `reason` says which */
  STP_CFA_BX = 7,       /* x86_64: CFA = rbx + cfa_off. Code that realigns its stack keeps the
                           entry sp in rbx: glibc's _dl_runtime_resolve_xsave* (every lazily
                           bound first call) and _dl_tlsdesc_dynamic*. rbx is known at the leaf
                           and through the frames whose rows say where they saved it (bx_off) */
};

enum stp_fp_kind {
  STP_FP_SAME = 0,      /* the caller's fp is this frame's fp */
  STP_FP_CFA_OFF = 1,   /* saved at CFA + fp_off */
  STP_FP_UNDEFINED = 2, /* not recoverable: a later rule that needs fp stops the walk */
};

/* Where the return address is. Kept in the high nibble of the row's fp_kind byte (the row stays
 * 12 bytes and its layout unchanged): x86_64 rows have 0 there, which is RA_CFA_M8, so tables
 * compiled before the field existed mean what they meant. Read fp_kind through the macros. */
enum stp_ra_kind {
  STP_RA_CFA_M8 = 0,    /* *(CFA - 8) */
  STP_RA_CFA_OFF = 1,   /* *(CFA + ra_off) */
  STP_RA_LR = 2,        /* the link register (stp_uregs.lr; x86_64: the leaf's rdi, where
                           glibc's vfork keeps its RA while the child runs); a row whose frame
                           needs an lr the context did not give (or that an earlier step left
                           undefined) stops with STP_STOP_UNTRUSTED */
};
#define STP_ROW_FP_KIND(row) ((row)->fp_kind & 0x0f)
#define STP_ROW_RA_KIND(row) ((row)->fp_kind >> 4)
#define STP_FP_RA_KIND(fp, ra) ((uint8_t)((fp) | ((ra) << 4)))

/* The CFA offset of a frame over 32 KiB (a 32 or 64 KiB buffer on the stack: glibc's, Python's
 * and coreutils' I/O buffers) does not fit int16. Such offsets are multiples of 8 or 16, so the
 * compiler stores cfa_off >> shift with the shift in the high nibble of cfa_kind (0 for every
 * other row, so tables of smaller frames read as before). Only SP, FP and DEREF rows are scaled.
 * Read cfa_kind and cfa_off through these macros. */
#define STP_ROW_CFA_KIND(row) ((row)->cfa_kind & 0x0f)
#define STP_ROW_CFA_SHIFT(row) ((row)->cfa_kind >> 4)
#define STP_ROW_CFA_OFF(row) ((int64_t)(row)->cfa_off * (int64_t)(1u << STP_ROW_CFA_SHIFT(row)))
#define STP_CFA_KIND_SHIFT(kind, shift) ((uint8_t)((kind) | ((shift) << 4)))

/* Why a row is INVALID (in fp_off when cfa_kind is STP_CFA_INVALID), for the coverage report. */
enum stp_cfi_invalid {
  STP_INV_CFA_REG = 1,     /* CFA based on a register other than sp/fp */
  STP_INV_CFA_EXPR = 2,    /* CFA is a DWARF expression other than the PLT/deref forms */
  STP_INV_RA_RULE = 3,     /* RA not at CFA-8 */
  STP_INV_FP_RULE = 4,     /* fp saved in another register or by an expression */
  STP_INV_OFFSET = 5,      /* an offset does not fit int16 (a CFA offset: even when scaled) */
  STP_INV_NO_CFA = 6,      /* libdw could not give a CFA */
  STP_INV_SIGNAL = 7,      /* a signal frame ('S') whose rules are not the x86_64 kernel's
                              rt_sigframe layout the SIGNAL stepper assumes (rsp at sp+160,
                              rip at sp+168, rbp at sp+120); every arm64 signal frame */
  STP_INV_PAC = 8,         /* arm64: the RA is signed here (pointer authentication, between
                              DW_CFA_AARCH64_negate_ra_state toggles): the saved x30 carries a
                              PAC in its top bits, and stripping it needs the task's VA size */
};

struct stp_cfi_row {
  uint32_t pc;        /* first file-relative pc (vaddr - table base) the row applies to */
  uint8_t cfa_kind;   /* bits 0-3: enum stp_cfa_kind; bits 4-7: cfa_off's scale (see above) */
  uint8_t fp_kind;    /* bits 0-3: enum stp_fp_kind; bits 4-7: enum stp_ra_kind (see above) */
  int16_t cfa_off;
  int16_t fp_off;     /* STP_FP_CFA_OFF: offset from CFA; INVALID rows: enum stp_cfi_invalid */
  union {
    int16_t ra_off;   /* arm64, STP_RA_CFA_OFF: the RA's offset from CFA; otherwise 0 */
    int16_t bx_off;   /* x86_64 (any RA kind but RA_CFA_OFF): rbx saved at CFA + bx_off;
                         0: rbx keeps its value (the ABI's rule for a callee-saved register
                         no rule mentions); STP_BX_UNKNOWN: any other rule (the caller's rbx
                         is not known) */
  };
};  /* 12 bytes */
#define STP_BX_UNKNOWN (-32768)

/* A row also ends where no FDE covers the next address: the compiler emits a row of kind
 * STP_CFA_INVALID with fp_off = 0 ("no FDE") at the end of every FDE that is not immediately
 * followed by another, so a lookup between FDEs finds that row and stops. */
#define STP_INV_NO_FDE 0

/* The row as the kernel holds it: 4 bytes. Tables repeat a few hundred distinct rules over
 * hundreds of thousands of rows (cc1plus: 518k rows, 769 rules), so a row is its pc within its
 * page (the file's page index below says which rows start in a page) and the index of its rule
 * in one dictionary shared by every loaded file (BPF array "stp_cfi_rules": struct
 * stp_cfi_row values whose pc is 0). The walk reads the rule as a struct stp_cfi_row, the same
 * fields as the 12-byte form (unwind-tables/compact_table.h converts; the compiler and the
 * on-disk cache keep the 12-byte form). As in the OpenTelemetry eBPF profiler's stack deltas. */
struct stp_cfi_crow {
  uint16_t pc;    /* offset of the row's first pc in the page it starts in */
  uint16_t rule;  /* index in stp_cfi_rules */
};  /* 4 bytes */

/* An element of the row pool (8 bytes, a BPF array's smallest stride): two rows of a file, or
 * one entry of its page index. */
struct stp_cfi_elem {
  union {
    struct stp_cfi_crow rows[2];  /* rows 2k and 2k + 1 */
    struct {
      uint32_t first;  /* the row covering the page's first byte (index in the file's rows) */
      uint32_t last;   /* the last row starting in the page (>= first) */
    } page;
  };
};

/* The rule dictionary's size: 16-bit rule indexes (a file whose new rules do not fit has no
 * table, with a warning). Measured: libc 4xx, cc1plus 769 distinct rules. */
#ifndef STP_CFI_RULES
# define STP_CFI_RULES (1 << 16)
#endif

/* The row pool: one index space of 8-byte elements (struct stp_cfi_elem) cut into chunks of
 * STP_CFI_CHUNK elements, each a BPF array of its own created by the loader when the pool
 * needs it (BPF array-of-maps "stp_cfi_pool", slot = index >> STP_CFI_CHUNK_SHIFT). Nothing is
 * sized before load but the number of slots, which the memory budget gives. All chunks have one
 * size so the verifier inlines their lookups (an inner map of its own size per file would make
 * every search step a helper call). A file's region holds its page index, then its rows. */
#define STP_CFI_CHUNK_SHIFT 17
#define STP_CFI_CHUNK (1u << STP_CFI_CHUNK_SHIFT)  /* 1 MiB of elements */

/* Where a file's rows sit in the row pool (array "stp_cfi_files", index: the VMA tracker's
 * file_id; nr == 0: no table). */
struct stp_cfi_file {
  uint64_t base;    /* file vaddr of row pc 0 */
  uint32_t first;   /* pool index of the element holding the file's rows 0 and 1 */
  uint32_t nr;      /* rows */
  int64_t delta;    /* p_vaddr - p_offset of the executable PT_LOAD: file vaddr of a pc in a
                       mapping = pc - vm_start + vm_pgoff * 4096 + delta */
  uint32_t page_first;  /* pool index of the file's page index */
  uint32_t npages;      /* entries: one per page of row pcs */
  uint32_t page_shift;  /* log2 of the page size, STP_CFI_PAGE_SHIFT or more (below) */
  uint32_t answered;    /* 1: the loader has answered for this file, with rows or none (nr 0);
                           0 (the array's zeroed entry): its table may still be coming */
};

/* Page index: for page p of a file (row pcs p << page_shift ...), one pool element: the row
 * covering the page's first byte and the last row starting in the page. A pc in page p is in
 * row `first` or in one of the rows first+1 .. last, all of which start in page p, so their
 * in-page pcs order them: the binary search takes a few steps instead of log2(rows). Pages are
 * 4 KiB, or up to 64 KiB (the reach of a 16-bit in-page pc) where a file has few rows for its
 * code size (chromium: 55k rows over 236 MB of code), so the index takes about a byte per row. */
#define STP_CFI_PAGE_SHIFT 12
#define STP_CFI_PAGE_SHIFT_MAX 16

/* Hash "stp_cfi_inodes": which file id a file has, by its inode, for pcs the VMA mirror does
 * not cover yet (a process that exec'd or dlopen'd a moment ago: the mirror is written by user
 * space after it reads the side-band records, the kernel walk may come first). dev is the
 * kernel's encoding (major << 20 | minor). */
struct stp_cfi_inode {
  uint64_t ino;
  uint32_t dev;
  uint32_t pad;
};

/* The context of stp_cfi_inode_prog (bpf/stp_bpf_kvma_cache.h), run by the loader with
 * BPF_PROG_TEST_RUN in its own process: which inode the walk sees for a file the loader has
 * mapped a page of at `addr`. stat() does not always say: on a stacked filesystem (overlayfs:
 * containers, the 6.1 test bed) a mapping's file is the layer's own inode, while stat() of the
 * path gives overlayfs's device, so the inode map missed every preloaded file there. */
struct stp_cfi_inode_query {
  uint64_t addr;              /* in */
  struct stp_cfi_inode key;   /* out, when found */
  uint32_t found;             /* out: 1 when addr is in a mapping of a file */
  int32_t rc;                 /* out: bpf_find_vma's return; -EBUSY when its mmap_lock
                               * trylock failed (a writer holds or waits for the lock) */
};

#ifndef STP_CFI_FILES
# define STP_CFI_FILES 4096
#endif

#endif /* STP_CFI_H */
