/* ukstap runtime: a copy of the top of a user stack, for a walk that met a file whose unwind
 * table was not loaded yet (issue 15, "every first event").
 *
 * A program's first events come before ukstap has read its exec and mmap records and loaded the
 * tables of its files (7-36 ms after the exec). A walk that reaches such a file stops there with
 * STP_STOP_NO_TABLE_YET, never guessing a frame, and the BPF module sends, just before the
 * USTACK record, a USNAP record: the leaf's registers and the bytes [sp, sp + len) of the
 * stack. ukstap loads the tables then and redoes the walk over the copy with the same stepper
 * (unwind/stp_cfi_step.h; loader/deferred_unwind.h). The bytes stay on this machine: they are
 * read from the ring buffer and dropped once the walk is done. Once a process's files have
 * tables its walks never stop so, and no copy is made.
 *
 * Record: struct stp_rec_hdr (type STP_REC_USNAP, id 0) + struct stp_usnap + len bytes of stack
 * (padded to 8).
 */
#ifndef STP_COMMON_USNAP_H
#define STP_COMMON_USNAP_H

#define STP_REC_USNAP 11  /* enum stp_rec_type (common/stp_records.h) */

/* Bytes of stack copied (power of two; -D STP_USNAP_BYTES=N). A walk needs the frames between
 * the leaf and the outermost one: perl's and python3's first events need 3-6 KiB
 * (/work/notes/early.md). */
#ifndef STP_USNAP_BYTES
# define STP_USNAP_BYTES 16384
#endif

struct stp_usnap {
  uint32_t pid, tid;
  uint64_t time_ns;            /* bpf_ktime_get_ns() of the copy: pairs it with its USTACK */
  uint64_t pc, sp, fp, bx, lr; /* the leaf's registers (x86_64: rip, rsp, rbp, rbx, rdi) */
  uint32_t len;                /* stack bytes that follow (0: the stack could not be read) */
  uint32_t pad;
};

#endif /* STP_COMMON_USNAP_H */
