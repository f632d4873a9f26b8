/* ukstap BPF runtime, user-stack walk: the unwind row of a frame's pc.
 *
 * Which file the pc is in and its load bias (the VMA mirror, else the kernel's VMA and the
 * inode map), then the row: from the row cache, else by the file's page index and a binary
 * search of the rows of the pc's page, whose rule (unwind/stp_cfi.h: rows are an in-page pc and
 * a rule index) is the struct stp_cfi_row returned. What the pc turned out to be (enum stp_pc_where) decides how the walk
 * goes on when there is no row.
 */
#ifndef STP_BPF_FRAME_ROW_H
#define STP_BPF_FRAME_ROW_H

/* What is mapped at a pc. The walk stops at NOT_CODE and UNKNOWN rather than guess, and tries
 * the frame-pointer fallback at NO_TABLE. */
enum stp_pc_where {
  STP_PC_NOT_CODE = 0,   /* in no executable mapping: a corrupt return address, or a
                            callee-saved rbp taken for a frame */
  STP_PC_TABLE = 1,      /* in a file with an unwind table (or a row cache hit) */
  STP_PC_NO_TABLE = 2,   /* executable memory without a table: JIT code, or a file whose table
                            is not loaded yet */
  STP_PC_UNKNOWN = 3,    /* the kernel could not say (the mmap lock was busy) */
  STP_PC_TABLE_PENDING = 4, /* a file the loader has not answered for yet (its stp_cfi_files
                            entry not `answered`, or no inode-map entry): its table is coming. The walk
                            stops (STP_STOP_NO_TABLE_YET) and user space finishes it from a
                            stack copy (common/stp_usnap.h) */
};

/* No table for a file: PENDING while the loader has not answered for it (it registers an empty
 * table for a file that has none) in a process whose files it loads (stp_config.tables_loading);
 * else NO_TABLE (frame pointers): tables off, an untracked process, ukstap itself or a child it
 * forked other than the -c command (the event closer: its stack is a copy of ukstap's, not
 * something to load tables for and profile). */
static __always_inline enum stp_pc_where stp__no_table_for(const void *file_entry)
{
  uint32_t mode = stp_config.tables_loading;
  struct task_struct *t;
  if (file_entry || mode == STP_TABLES_OFF)
    return STP_PC_NO_TABLE;
  t = bpf_get_current_task_btf();
  uint32_t tgid = BPF_CORE_READ(t, tgid);
  if (tgid == stp_config.runtime_pid ||
      (BPF_CORE_READ(t, real_parent, tgid) == stp_config.runtime_pid &&
       tgid != stp_config.target_pid))  /* the -c command is ukstap's child too */
    return STP_PC_NO_TABLE;
  if (mode == STP_TABLES_ALL || stp__in_target_tree(t))
    return STP_PC_TABLE_PENDING;
  return STP_PC_NO_TABLE;
}

/* File id and load bias of pc: the VMA mirror first, else the kernel's VMA and the inode map.
 * *fp is the file's table, *from_mirror says where the answer came from (only those rows are
 * cached: the mirror's generation tells when they go stale). */
static __always_inline enum stp_pc_where stp__pc_file(struct stp_uwalk *uw,
                                                      struct stp_proc_vmas *vm, uint64_t pc,
                                                      uint32_t *file_id, uint64_t *bias,
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
      /* key 0: anonymous code. An array entry always exists: `answered` tells "none" from
       * "not yet" */
      return key ? stp__no_table_for(f && f->answered ? f : 0) : STP_PC_NO_TABLE;
    *file_id = key;
    *bias = e->bias;
    *fp = f;
    *from_mirror = 1;
    return STP_PC_TABLE;
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
      return STP_PC_UNKNOWN;
    if (err != 0 || !kv.exec)
      return STP_PC_NOT_CODE;
    if (kv.found)
      stp__kvma_remember(t, uw->tgid, uw->own_gen, &kv);
  }
  if (!kv.found)
    return STP_PC_NO_TABLE;  /* anonymous executable memory */
  if (kv.vdso) {
    key = stp_config.vdso_file_id;
  } else {
    struct stp_cfi_inode ik = { kv.ino, kv.dev, 0 };
    uint32_t *id = bpf_map_lookup_elem(&stp_cfi_inodes, &ik);
    if (!id)
      return stp__no_table_for(id);
    key = *id;
  }
  f = bpf_map_lookup_elem(&stp_cfi_files, &key);
  if (!f || !f->nr)
    return STP_PC_NO_TABLE;
  *file_id = key;
  *bias = kv.start - (kv.pgoff << 12) - (uint64_t)f->delta;
  *fp = f;
  return STP_PC_TABLE;
}

/* The row search of a page (bpf/stp_bpf_cfi_tables.h) as a global function: its bpf_loop
 * callback is checked over its iterations once per program, not once per state its caller
 * arrives in. Returns the index of the last row whose pc <= rel, or `ans` when none is. */
STP_RT_FN(stp_cfi_row_search)
long stp_cfi_row_search(uint64_t rel, int64_t lo, int64_t hi, int64_t ans, uint32_t first)
{
  struct stp__rowsearch rs = { rel, lo, hi, ans, first };
  bpf_loop(32, stp__rowsearch_cb, &rs, 0);
  return rs.ans;
}

/* stp__pc_file for the current frame's pc, as a global function: the mapping search and the
 * kernel's VMA answer (bpf_find_vma, the cache of its answers) are checked once per program;
 * inlined, the verifier went through them again for each state the walk reached them in.
 * Returns an enum stp_pc_where; STP_PC_TABLE fills uw->pcf_*. */
STP_RT_FN(stp_pc_file)
int stp_pc_file(struct stp_uwalk *uw, struct stp_proc_vmas *vm)
{
  struct stp_cfi_file *f = 0;
  uint64_t bias = 0;
  uint32_t file_id = 0;
  int from_mirror = 0;
  enum stp_pc_where where;
  if (!uw)
    return STP_PC_UNKNOWN;
  where = stp__pc_file(uw, vm, uw->regs.pc, &file_id, &bias, &f, &from_mirror);
  uw->pcf_bias = bias;
  uw->pcf_file_id = file_id;
  uw->pcf_from_mirror = from_mirror;
  return where;
}

/* The rule key (stp_cfi_rules) of the current frame's row in the file stp_pc_file found,
 * or -1 when it has none there (before the file's first row, no FDE); a row found through the
 * mirror for a return address goes into the row cache. A global function: the verifier checks
 * the row search once per program. It returns a number: a global function cannot return a map
 * value pointer. The caller calls stp_pc_file, then this: nested, the two functions' stacks
 * added to the walk's exceed 6.1's 512 bytes for a call chain. */
STP_RT_FN(stp_cfi_row_key)
int stp_cfi_row_key(struct stp_uwalk *uw, struct stp_proc_vmas *vm, struct stp_rowcache *rc)
{
  struct stp_cfi_file *f;
  struct stp_cfi_row *row;
  uint64_t rel, pc;
  int64_t idx;
  uint32_t key, first, file_id, exact;
  if (!uw)
    return -1;
  pc = uw->regs.pc;
  exact = uw->regs.exact_pc;
  file_id = uw->pcf_file_id;
  f = bpf_map_lookup_elem(&stp_cfi_files, &file_id);
  if (!f)
    return -1;
  rel = pc - uw->pcf_bias - (exact ? 0 : 1);  /* a return address may follow a last call */
  if (rel < f->base)
    return -1;
  rel -= f->base;
  first = f->first;
  /* The page's rows: `first` covers its first byte, first+1 .. last start in it. */
  uint64_t page = rel >> (f->page_shift & 31);
  if (page >= f->npages)
    return -1;  /* past the last row's page: no FDE */
  struct stp_cfi_elem *pe = stp__pool_elem(f->page_first + (uint32_t)page);
  if (!pe)
    return -1;
  idx = stp_cfi_row_search(rel & ((1ull << (f->page_shift & 31)) - 1), pe->page.first + 1,
                           pe->page.last, pe->page.first, first);
  struct stp_cfi_elem *re = stp__pool_elem(first + (uint32_t)(idx >> 1));
  if (!re)
    return -1;
  key = re->rows[idx & 1].rule;
  row = bpf_map_lookup_elem(&stp_cfi_rules, &key);
  if (!row || key > 0x7fffffff)
    return -1;
  if (STP_ROW_CFA_KIND(row) == STP_CFA_INVALID && row->fp_off == STP_INV_NO_FDE)
    return -1;  /* between FDEs: no table for this pc */
  /* Return addresses only (exact_pc == 0). Caching the leaf's row too cut ~12% of the timer
   * samples of a multi-threaded sort short with a bad frame at their second step, although a
   * check found the cached and the searched rows equal; until that is understood, the leaf is
   * always searched (one search per walk). */
  if (rc && vm && uw->pcf_from_mirror && !exact) {
    struct stp_rowcache_ent *ce = &rc->e[stp__rowcache_slot(pc)];
    ce->pc = pc;
    ce->tgid = uw->tgid;
    ce->gen = vm->gen;
    ce->row = key;
    ce->exact = exact;
  }
  return (int)key;
}

/* The row for the current frame, or 0 when the pc has no table (no file, no FDE); *where says
 * what pc is in (stp__pc_file's answer; STP_PC_TABLE for a cache hit). The walk's own part
 * (stp_uwalk_frame) is the row cache; the rest is in the two global functions above. */
static __always_inline struct stp_cfi_row *stp__cfi_row(struct stp_proc_vmas *vm,
                                                        struct stp_rowcache *rc,
                                                        struct stp_uregs *r,
                                                        enum stp_pc_where *where)
{
  struct stp_uwalk *uw = (struct stp_uwalk *)r;
  uint32_t key;
  int got;
  if (rc && vm) {
    struct stp_rowcache_ent *ce = &rc->e[stp__rowcache_slot(r->pc)];
    if (!r->exact_pc && ce->pc == r->pc && ce->tgid == uw->tgid && ce->gen == vm->gen &&
        ce->exact == 0) {
      key = ce->row;
      *where = STP_PC_TABLE;
      return bpf_map_lookup_elem(&stp_cfi_rules, &key);
    }
  }
  got = stp_pc_file(uw, vm);
  *where = (enum stp_pc_where)got;
  if (got != STP_PC_TABLE)
    return 0;
  got = stp_cfi_row_key(uw, vm, rc);
  if (got < 0)
    return 0;
  key = (uint32_t)got;
  return bpf_map_lookup_elem(&stp_cfi_rules, &key);
}

#endif /* STP_BPF_FRAME_ROW_H */
