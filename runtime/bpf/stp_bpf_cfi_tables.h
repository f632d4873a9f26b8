/* ukstap BPF runtime, user-stack walk: the unwind tables as the kernel reads them, and the
 * search of a file's rows.
 *
 * The loader (loader/unwind_tables.cpp) compiles every traced file's CFI into rows
 * (unwind/stp_cfi.h, unwind-tables/) and writes them here before and during the run: one pool
 * of rows for all files, a page index that narrows a search to the rows of one 4 KiB page, the
 * files by the VMA tracker's file id, and the file ids by inode for pcs the mirror lacks.
 */
#ifndef STP_BPF_CFI_TABLES_H
#define STP_BPF_CFI_TABLES_H

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

/* The page index of every file (unwind/stp_cfi.h, STP_CFI_PAGE_SHIFT). */
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

/* File id by inode (struct stp_cfi_inode): for the kernel's answer when the mirror lacks pc. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, STP_CFI_FILES);
  __type(key, struct stp_cfi_inode);
  __type(value, uint32_t);
} stp_cfi_inodes SEC(".maps");

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

#endif /* STP_BPF_CFI_TABLES_H */
