/* ukstap unwinder: the bounds every walk keeps. Why a walk stopped (enum stp_unwind_stop) is
 * reported across the kernel/user boundary, so it lives with the other shared stack facts in
 * common/stp_stack_abi.h; MAXBACKTRACE is a limit of common/stp_limits.h.
 */
#ifndef STP_UNWIND_H
#define STP_UNWIND_H

#include "common/stp_stack_abi.h"

/* Largest distance from the leaf's sp that a frame may lie at (a thread's stack: 8 MiB by
 * default, the main stack may grow to RLIMIT_STACK). */
#ifndef STP_STACK_SPAN
# define STP_STACK_SPAN (256ull << 20)
#endif

#endif /* STP_UNWIND_H */
