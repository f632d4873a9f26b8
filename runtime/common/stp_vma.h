/* ukstap runtime: the VMA tracker's mirror of target processes' executable mappings, as the
 * in-kernel unwinder reads it (pid + pc -> file identity and load bias).
 *
 * BPF hash map "stp_vmas": key = tgid (uint32_t), value = struct stp_proc_vmas. User space
 * (vma-tracker/tracker.cpp) rewrites a process's whole value whenever its executable mappings
 * change; `gen` increases with every rewrite so a reader can tell a stale copy.
 * Entries are sorted by start and do not overlap, so the kernel finds a pc with a bounded
 * binary search (log2(STP_VMA_MAX) steps).
 */
#ifndef STP_COMMON_VMA_H
#define STP_COMMON_VMA_H

#include "stp_limits.h"

#ifndef STP_VMA_MAX
# define STP_VMA_MAX 256        /* executable mappings per process (power of two) */
#endif
#ifndef STP_VMA_PROCS
# define STP_VMA_PROCS 4096     /* processes mirrored at once */
#endif

struct stp_vma_entry {
  uint64_t start;    /* [start, end) user addresses */
  uint64_t end;
  uint64_t bias;     /* load bias: file vaddr = pc - bias */
  uint32_t file_id;  /* the tracker's number for the mapped file (0: anonymous/unknown) */
  uint32_t flags;    /* STP_VMA_* */
};

#define STP_VMA_VDSO 1u   /* the [vdso] */
#define STP_VMA_JIT 2u    /* anonymous executable memory (no file, no unwind table) */

struct stp_proc_vmas {
  uint32_t nr;       /* entries used */
  uint32_t gen;      /* rewrite counter */
  struct stp_vma_entry e[STP_VMA_MAX];
};

#endif /* STP_COMMON_VMA_H */
