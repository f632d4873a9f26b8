/* bench/ctf_cost.sh's workload: N getppid(2) calls, then its own CPU time (user+sys ns) on
 * stdout, which the bench subtracts from ukstap's children's time. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  for (long i = 0; i < n; i++) syscall(SYS_getppid);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  fprintf(stderr, "load-cpu-ns %.0f %.0f\n", ru.ru_utime.tv_sec * 1e9 + ru.ru_utime.tv_usec * 1e3,
          ru.ru_stime.tv_sec * 1e9 + ru.ru_stime.tv_usec * 1e3);
  return 0;
}
