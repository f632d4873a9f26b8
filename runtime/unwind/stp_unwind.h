/* ukstap unwinder: what every walk reports (BPF module, native code and the user side share it).
 *
 * A walk never invents a frame: when it cannot go on it stops and says why. The reasons are
 * counted per session (stp_session.ustack_stops[]) and shown with -v, and at exit when stacks
 * were cut short.
 */
#ifndef STP_UNWIND_H
#define STP_UNWIND_H

#ifndef MAXBACKTRACE
# define MAXBACKTRACE 128   /* frames per stack (stap: -D MAXBACKTRACE=N) */
#endif
#if MAXBACKTRACE < 1 || MAXBACKTRACE > 1024
# error "MAXBACKTRACE must be 1..1024"
#endif

/* Largest distance from the leaf's sp that a frame may lie at (a thread's stack: 8 MiB by
 * default, the main stack may grow to RLIMIT_STACK). */
#ifndef STP_STACK_SPAN
# define STP_STACK_SPAN (256ull << 20)
#endif

enum stp_unwind_stop {
  STP_STOP_END = 0,         /* reached the outermost frame (frame pointer 0 / RA 0) */
  STP_STOP_DEPTH = 1,       /* MAXBACKTRACE frames */
  STP_STOP_READ_FAULT = 2,  /* a frame's memory could not be read */
  STP_STOP_BAD_FRAME = 3,   /* the next frame is not above this one on the stack, misaligned, or
                               beyond STP_STACK_SPAN (a frame pointer that is not one), or its
                               pc is in no executable mapping (a corrupt return address) */
  STP_STOP_NO_USER = 4,     /* no user registers: kernel thread, or a probe with no user context */
  STP_STOP_NO_TABLE = 5,    /* (DWARF walk) no unwind table for the pc */
  STP_STOP_INVALID_ROW = 6, /* (DWARF walk) the CFI rule cannot be evaluated here */
  STP_STOP_UNTRUSTED = 7,   /* (DWARF walk) the rule needs a register this context lacks */
  STP_STOP_NO_MAPPINGS = 8, /* (DWARF walk) neither the VMA mirror nor the kernel could say what
                               is mapped at the pc (the task's mmap lock was taken) */
  STP_STOP_NR = 9,
};
#define STP_STOP_MASK 15  /* counters are kept for 16 reasons (stp_session.ustack_stops) */

/* Names for -v and the exit summary (index: enum stp_unwind_stop). */
#define STP_UNWIND_STOP_NAMES                                                          \
  { "end of stack", "depth limit (MAXBACKTRACE)", "read fault", "bad frame",             \
    "no user registers", "no unwind table", "invalid unwind row", "untrusted register",    \
    "mappings unknown" }

#endif /* STP_UNWIND_H */
