/* ukstap unwinder: one frame-pointer step, portable (compiled into the BPF module and natively).
 *
 * The fallback for code without an unwind table (JIT code) and, until the DWARF walk lands, the
 * only walk. Frame layout on x86_64 (and arm64's frame records): [fp] = the caller's fp,
 * [fp + 8] = the return address. Frames found this way are marked inexact: nothing proves the
 * code keeps rbp as a frame pointer, and a leaf that has not pushed rbp yet (a syscall wrapper)
 * hides its caller.
 *
 * The includer defines STP_UNWIND_READ(dst, size, addr): 0 on success, nonzero on a fault
 * (bpf_probe_read_user in BPF; a captured-stack reader in the native tests).
 */
#ifndef STP_FP_WALK_H
#define STP_FP_WALK_H

#include "unwind/stp_unwind.h"

#ifndef STP_UNWIND_INLINE
# define STP_UNWIND_INLINE static inline __attribute__((always_inline))
#endif

struct stp_fp_state {
  uint64_t fp;       /* the frame to read next */
  uint64_t floor;    /* the next frame must lie at or above this (stack grows down) */
  uint64_t ceiling;  /* leaf sp + STP_STACK_SPAN */
  uint32_t stop;     /* enum stp_unwind_stop, valid once a step returned 0 */
  uint32_t pad;
};

STP_UNWIND_INLINE void stp_fp_init(struct stp_fp_state *st, uint64_t sp, uint64_t fp)
{
  st->fp = fp;
  st->floor = sp;
  st->ceiling = sp + STP_STACK_SPAN;
  st->stop = STP_STOP_END;
  st->pad = 0;
}

/* One step: the caller's return address into *ra. 1 = a frame, 0 = stop (st->stop says why). */
STP_UNWIND_INLINE int stp_fp_step(struct stp_fp_state *st, uint64_t *ra)
{
  uint64_t frame[2];
  uint64_t fp = st->fp;

  if (fp == 0) {
    st->stop = STP_STOP_END;  /* _start and thread entry clear rbp: the outermost frame */
    return 0;
  }
  if ((fp & 7) || fp < st->floor || fp > st->ceiling) {
    st->stop = STP_STOP_BAD_FRAME;
    return 0;
  }
  if (STP_UNWIND_READ(frame, sizeof(frame), fp)) {
    st->stop = STP_STOP_READ_FAULT;
    return 0;
  }
  if (frame[1] == 0) {
    st->stop = STP_STOP_END;
    return 0;
  }
  st->floor = fp + 16;  /* strictly upwards: no loops */
  st->fp = frame[0];
  *ra = frame[1];
  return 1;
}

#endif /* STP_FP_WALK_H */
