/* `ukstap --lttng`'s LTTng-UST tracepoint provider (lttng-writer/README.md): one generic event,
 * ukstap:event, that carries any event ukstap's CTF path makes (loader/ctf_output.h) as fields:
 * the script's probe point, the traced thread's identity, its stacks and the printed values.
 * The schema is fixed here, at ukstap's build, because LTTng-UST's fields are: the traced
 * process's pid is a field (vpid), not LTTng's vpid context, which would be the writer's own. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ukstap
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng-writer/ukstap_tp.h"
#if !defined(UKSTAP_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define UKSTAP_LTTNG_TP_H
#include <lttng/tracepoint.h>
#include <stdint.h>

#include "lttng-writer/ust_emit.h"


LTTNG_UST_TRACEPOINT_EVENT(ukstap, event,
  LTTNG_UST_TP_ARGS(const struct ukstap_lttng_event *, e),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_string(name, e->name)
    lttng_ust_field_integer(uint64_t, hit_ns, e->hit_ns)
    lttng_ust_field_integer(uint32_t, cpu, e->cpu)
    lttng_ust_field_integer(int32_t, vpid, e->vpid)
    lttng_ust_field_integer(int32_t, vtid, e->vtid)
    lttng_ust_field_string(procname, e->procname)
    lttng_ust_field_integer_hex(uint64_t, ip, e->ip)
    lttng_ust_field_sequence_hex(uint64_t, callstack_user, e->ustack, uint32_t, e->n_ustack)
    lttng_ust_field_sequence_hex(uint64_t, callstack_kernel, e->kstack, uint32_t, e->n_kstack)
    lttng_ust_field_string(callstack_user_symbols, e->usyms)
    lttng_ust_field_string(callstack_kernel_symbols, e->ksyms)
    lttng_ust_field_string(fields, e->fields)))

#endif
#include <lttng/tracepoint-event.h>
