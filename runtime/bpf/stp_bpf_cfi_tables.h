/* ukstap BPF runtime, user-stack walk: the unwind tables as the kernel reads them, and the
 * search of a file's rows.
 *
 * The loader (loader/unwind_tables.cpp) compiles every traced file's CFI into rows
 * (unwind/stp_cfi.h, unwind-tables/) and writes them here before and during the run: one pool
 * of 4-byte rows for all files, growing by chunks (each file's page index, which narrows a
 * search to the rows of one 4 KiB page, sits in front of its rows), the rules the rows index,
 * the files by the VMA tracker's file id, and the file ids by inode for pcs the mirror lacks.
 */
#ifndef STP_BPF_CFI_TABLES_H
#define STP_BPF_CFI_TABLES_H

/* The row pool (unwind/stp_cfi.h): chunks of 8-byte elements, created and filled by the
 * loader as tables arrive; the slots the memory budget allows, set by the loader before load. */
#ifndef STP_CFI_CHUNKS
# define STP_CFI_CHUNKS 256
#endif
struct stp_cfi_chunk_map {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, STP_CFI_CHUNK);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(key_size, sizeof(uint32_t));  /* sizes, not types: libbpf cannot size a type */
  __uint(value_size, sizeof(struct stp_cfi_elem));  /* reached only through the outer map */
};
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, STP_CFI_CHUNKS);
  __type(key, uint32_t);
  __array(values, struct stp_cfi_chunk_map);
} stp_cfi_pool SEC(".maps");

/* The rules the pool's rows index (struct stp_cfi_row, pc 0), deduplicated over all files. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, STP_CFI_RULES);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, uint32_t);
  __type(value, struct stp_cfi_row);
} stp_cfi_rules SEC(".maps");

/* Element i of the pool (both lookups are inlined array accesses), or 0. */
static __always_inline struct stp_cfi_elem *stp__pool_elem(uint32_t i)
{
  uint32_t slot = i >> STP_CFI_CHUNK_SHIFT, k = i & (STP_CFI_CHUNK - 1);
  void *chunk = bpf_map_lookup_elem(&stp_cfi_pool, &slot);
  if (!chunk)
    return 0;
  return bpf_map_lookup_elem(chunk, &k);
}

/* An array (file ids are dense, from 1): its lookups are inlined by the verifier, no helper
 * call per frame. An entry with nr == 0 has no table. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, STP_CFI_FILES);
  __type(key, uint32_t);
  __type(value, struct stp_cfi_file);
} stp_cfi_files SEC(".maps");

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
  uint64_t rel;    /* the pc's offset in its page */
  int64_t lo, hi, ans;
  uint32_t first;  /* pool element of the file's rows 0 and 1 */
};

static long stp__rowsearch_cb(uint32_t i, void *ctx)
{
  struct stp__rowsearch *rs = ctx;
  struct stp_cfi_elem *e;
  int64_t mid;
  if (rs->lo > rs->hi)
    return 1;
  mid = rs->lo + ((rs->hi - rs->lo) >> 1);
  e = stp__pool_elem(rs->first + (uint32_t)(mid >> 1));
  if (!e)
    return 1;
  if (e->rows[mid & 1].pc <= rs->rel) {
    rs->ans = mid;
    rs->lo = mid + 1;
  } else {
    rs->hi = mid - 1;
  }
  return 0;
}

#endif /* STP_BPF_CFI_TABLES_H */
