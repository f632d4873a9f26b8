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
 * Record: struct stp_rec_hdr (type STP_REC_USNAP of common/stp_records.h, id 0) + struct stp_usnap + len bytes of stack
 * (padded to 8).
 */
#ifndef STP_COMMON_USNAP_H
#define STP_COMMON_USNAP_H

/* The copy's record is at most this many bytes (a power of two, 512..32768: -D STP_USNAP_BYTES=N;
 * the stack bytes are 64 fewer): the frames
 * between the leaf and the outermost one. perl's and python3's first events use 1-4 KiB on
 * average (the copy ends at argc), but python's _Py_wreadlink keeps a 20 KiB buffer on its frame:
 * with 16 KiB those stacks stopped two frames up (perf's default 8 KiB stops there too). A
 * walk that runs off the copy stops with "read fault", never guessing. */
#ifndef STP_USNAP_BYTES
# define STP_USNAP_BYTES 32768
#endif

struct stp_usnap {
  uint32_t pid, tid;
  uint64_t time_ns;            /* bpf_ktime_get_ns() of the copy: pairs it with its USTACK */
  uint64_t pc, sp, fp, bx, lr; /* the leaf's registers (x86_64: rip, rsp, rbp, rbx, rdi) */
  uint32_t len;                /* stack bytes that follow */
  uint32_t missing;            /* bit i: piece i could not be read (zeros in its place). Piece
                                  0 is [sp, sp's next page boundary), piece i the i-th page
                                  after it: a page never touched (a big buffer on a frame) is
                                  not present, and a fault-free read cannot bring it in */
};

#endif /* STP_COMMON_USNAP_H */
