/* bench/compare.py's workload timer: `timed OUTFILE CMD [ARGS...]` runs CMD as a child and
 * writes "wall_ns W cpu_ns C" to OUTFILE: CMD's wall time (CLOCK_MONOTONIC around fork..wait)
 * and its CPU time (user+sys of CMD and its children, wait4), so a tracer's start-up and
 * tear-down are not counted in the workload's time and its own CPU can be told apart. Exits
 * with CMD's status. A tracer following it must follow its child: ukstap filters on
 * `pid() == target() || ppid() == target()` or uses `.process` probes, perf inherits. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
  if (argc < 3) { fprintf(stderr, "usage: timed OUTFILE CMD [ARGS...]\n"); return 2; }
  struct timespec a, b;
  struct rusage ru;
  int st;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pid_t p = fork();
  if (p < 0) { perror("fork"); return 2; }
  if (p == 0) { execvp(argv[2], argv + 2); perror(argv[2]); _exit(127); }
  if (wait4(p, &st, 0, &ru) < 0) { perror("wait4"); return 2; }
  clock_gettime(CLOCK_MONOTONIC, &b);
  FILE *f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 2; }
  fprintf(f, "wall_ns %lld cpu_ns %lld\n",
          (long long)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec)),
          (long long)((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL));
  fclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
