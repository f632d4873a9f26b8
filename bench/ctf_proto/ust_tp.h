/* bench/ctf_cost.sh's LTTng-UST side: one tracepoint with the fields of a --ctf event of
 * syscall.openat with a user stack (filename, flags, callstack), recorded by an LTTng session. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ukstap_proto
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./ust_tp.h"
#if !defined(UST_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define UST_TP_H
#include <lttng/tracepoint.h>
#include <stdint.h>
LTTNG_UST_TRACEPOINT_EVENT(ukstap_proto, openat,
  LTTNG_UST_TP_ARGS(const char *, filename, long, flags, const uint64_t *, pcs, unsigned int, n),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_string(filename, filename)
    lttng_ust_field_integer(long, flags, flags)
    lttng_ust_field_sequence_hex(uint64_t, callstack, pcs, unsigned int, n)))
#endif
#include <lttng/tracepoint-event.h>
