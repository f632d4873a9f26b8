/* The provider's probes and tracepoint definitions (ukstap_tp.h), compiled as C, with the two
 * calls the writer (writer_main.cpp, C++) makes. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng-writer/ukstap_tp.h"
#include "lttng-writer/ust_emit.h"

void ukstap_lttng_emit(const struct ukstap_lttng_event *e) { lttng_ust_tracepoint(ukstap, event, e); }

int ukstap_lttng_enabled(void) { return lttng_ust_tracepoint_enabled(ukstap, event) ? 1 : 0; }
