/* A CPU-bound program with a known call-graph split for the profiling tests: main -> work ->
 * spin_a takes 75% of the iterations, work -> spin_b 25% (the same loop body, so the split of
 * CPU time follows the split of iterations). Built -O2 -fomit-frame-pointer: the profile's user
 * stacks come from the DWARF unwinder. Usage: split_prog SECONDS (of CPU time) */
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))
volatile unsigned long sink;

NOINLINE static void burn(unsigned long n) {
  for (unsigned long i = 0; i < n; i++) sink = sink * 31 + i;
}
NOINLINE static void spin_a(void) { burn(3000000); sink++; }
NOINLINE static void spin_b(void) { burn(1000000); sink++; }
NOINLINE static void work(void) { spin_a(); spin_b(); sink++; }

int main(int argc, char **argv) {
  double secs = argc > 1 ? atof(argv[1]) : 2;
  /* SECONDS of its own CPU time, not of wall time: on a loaded machine a run gets as many
   * samples (the tests ask for a minimum count) */
  struct timespec t0, t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  do {
    work();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
  return 0;
}
