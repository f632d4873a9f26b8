/* run_stream_tail's traced program: N getppid() calls, the last one through last_call(), then
 * "calls N" into the file argv[2] and exit at once. The records of its last events are still in the ring
 * (or were never signalled to ukstap) when it exits; the count it writes is the truth. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) static void each_call(void) { sink += syscall(SYS_getppid); }
__attribute__((noinline)) static void last_call(void) { sink -= syscall(SYS_getppid); }

int main(int argc, char **argv)
{
  long n, i;
  if (argc < 3)
    return 2;
  n = atol(argv[1]);
  for (i = 0; i + 1 < n; i++)
    each_call();
  last_call();
  FILE *f = fopen(argv[2], "w");
  if (!f)
    return 1;
  fprintf(f, "calls %ld\n", n);
  fclose(f);
  _exit(0);  /* no atexit work between the last event and the exit */
}
