/* ukstap BPF runtime: one program for syscall probes whose handlers are the same code.
 *
 * `probe syscall.* { n++ }` is 361 probes with one body. Pass 3 (codegen/shared_programs.h)
 * writes such a body once; the dispatcher's prog array holds that program at every number of
 * the group, and the program learns which probe it runs (pp(), errors, records) from the
 * syscall number stp__sysrec_fill put in sysrec[1], through a table of probe id + 1 by number
 * (0: not in the group, which the dispatcher never calls; the representative then), and the
 * string each copies into a local where they differ, through a table by number. Clang
 * compiles and the verifier checks one program instead of hundreds: docs/DESIGN.md "Pass 4".
 */
#ifndef STP_BPF_SYSCALL_SHARED_H
#define STP_BPF_SYSCALL_SHARED_H

#define STP_SYSCALL_SHARED_IDS(name) static const uint32_t name[STP_SYS_NR]

#define STP_SYSCALL_SHARED_PROBE(c, table, rep)                                        \
  do {                                                                                  \
    uint64_t nr__ = (uint64_t)(c)->k.sysrec[1];                                         \
    uint32_t id__ = nr__ < STP_SYS_NR ? (table)[nr__] : 0;                              \
    (c)->k.probe_id = id__ ? (int32_t)(id__ - 1) : (rep);                               \
  } while (0)

/* A string the members copy into a local that differs between them (`name = "read"` in each
 * syscall alias): one row per number; the mask bounds the index for the verifier (sysrec[1] is
 * -1 without registers: the last row, empty). */
_Static_assert((STP_SYS_NR & (STP_SYS_NR - 1)) == 0, "STP_SYS_NR is a power of two");
#define STP_SYSCALL_SHARED_STRS(name, len) static const char name[STP_SYS_NR][len]
#define STP_SYSCALL_SHARED_NR(c) ((uint32_t)(c)->k.sysrec[1] & (STP_SYS_NR - 1))

#endif /* STP_BPF_SYSCALL_SHARED_H */
