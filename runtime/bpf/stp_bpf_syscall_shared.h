/* ukstap BPF runtime: one program for syscall probes whose handlers are the same code.
 *
 * `probe syscall.* { n++ }` is 361 probes with one body. Pass 3 (codegen/shared_programs.h)
 * writes such a body once; the dispatcher's prog array holds that program at every number of
 * the group, and the program learns which probe it runs (pp(), errors, records) from the
 * syscall number stp__sysrec_fill put in sysrec[1], through a table of probe id + 1 by number
 * (0: not in the group, which the dispatcher never calls; the representative then). Clang
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

#endif /* STP_BPF_SYSCALL_SHARED_H */
