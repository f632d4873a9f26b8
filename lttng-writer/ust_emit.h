/* What the writer (C++) calls in the provider (ukstap_tp.c, C). */
#pragma once
#include <stdint.h>

/* One event's values, as the writer decoded them from ukstap (ctf-writer/wire.h). */
struct ukstap_lttng_event {
  const char *name;        /* the probe point as the script names it ("syscall.openat") */
  uint64_t hit_ns;         /* when the probe was hit: CLOCK_MONOTONIC ns (LTTng's default clock) */
  uint32_t cpu;            /* the CPU it was hit on */
  int32_t vpid, vtid;      /* the traced process and thread */
  const char *procname;
  uint64_t ip;             /* the first user frame, 0 without a user stack */
  const uint64_t *ustack;  /* callstack_user: return addresses, innermost first */
  uint32_t n_ustack;
  const uint64_t *kstack;  /* callstack_kernel */
  uint32_t n_kstack;
  const char *usyms, *ksyms; /* the frames symbolized, one per line ("func+0xOFF/0xSIZE [module]") */
  const char *fields;      /* the printed values: name=value, ... (strings quoted, C escapes) */
};

#ifdef __cplusplus
extern "C" {
#endif
/* One ukstap:event. */
void ukstap_lttng_emit(const struct ukstap_lttng_event *e);
/* Whether some LTTng session (started or not) has ukstap:event enabled. */
int ukstap_lttng_enabled(void);
#ifdef __cplusplus
}
#endif
