/* N tracepoint() calls of ust_tp.h (bench/ctf_cost.sh): ns per event in the emitting process. */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "ust_tp.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  uint64_t pcs[8] = {0x401000, 0x402000, 0x7f0000001234, 0x7f0000002000, 0x7f0000003000, 0x401100, 0x401200, 0x401300};
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++) lttng_ust_tracepoint(ukstap_proto, openat, "/etc/passwd", i, pcs, 8);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.0f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
  return 0;
}
