/* Target of testsuite/e2e/run_process.sh. Prints the truths the process-family probes are
 * checked against: work(i)'s return value for i = 0..N-1 (N = argv[1], default 3) and
 * getppid()'s result N times (a libc call through the PLT); with a second argument it then
 * stays (a process that exists before ukstap starts, for -x). Built -no-pie -rdynamic: link-time
 * addresses are run-time addresses and work is exported (.dynsym keeps it when stripped). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) int work(int n)
{
  int r = n * 3;
  return r + 1;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 3;
  for (int i = 0; i < n; i++)
    printf("work(%d)=%d\n", i, work(i));
  for (int i = 0; i < n; i++)
    printf("ppid=%d\n", getppid());
  fflush(stdout);
  if (argc > 2)
    for (;;)
      usleep(20000);
  return 0;
}
