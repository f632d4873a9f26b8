/* Workload of bench/unwind.sh: N getppid() syscalls made at call depth D (a chain of D
 * functions, built -O2 -fomit-frame-pointer so only CFI can unwind it). Prints the wall time per
 * syscall measured inside the workload (CLOCK_MONOTONIC), so tracer start-up is not counted,
 * and the process's own CPU time (user+sys, getrusage), so a tracer's share of a run's CPU can
 * be told apart (bench/compare.py). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) static long leaf(void) { return syscall(SYS_getppid); }
__attribute__((noinline)) static long down(int d)
{
  long r = d <= 1 ? leaf() : down(d - 1);
  sink += r;
  return r;
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 100000;
  int depth = argc > 2 ? atoi(argv[2]) : 12;
  struct timespec a, b;
  for (long i = 0; i < 1000; i++) down(depth);  /* warm up */
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++) down(depth);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("ns_per_call %.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("cpu_ns_self %lld\n", (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                                   (long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL);
  return 0;
}
