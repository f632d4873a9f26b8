/* Target program for testsuite/e2e/run_kstack.sh (kernel stacks, stack ids). Prints its own
 * record of what it did, which the tests use as truth.
 *
 *   kstack_prog sites N1 N2   N1 getppid() calls from site_a, then N2 from site_b (two user
 *                             stacks, one kernel stack); prints "site_a N1" and "site_b N2"
 *   kstack_prog mixed MS      for MS milliseconds of its own CPU time (not of wall time: on a
 *                             loaded machine it is sampled as often per CPU second): spin in user
 *                             space, then read 64 KiB of /dev/zero 64 times (kernel time), in turn
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void site_a(int n)
{
  for (int i = 0; i < n; i++) sink += syscall(SYS_getppid);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void site_b(int n)
{
  for (int i = 0; i < n; i++) sink += syscall(SYS_getppid);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void spin_user(void)
{
  for (unsigned long i = 0; i < 2000000; i++) sink += i;
}

__attribute__((noinline)) void read_zero(int fd)
{
  static char buf[65536];
  for (int i = 0; i < 64; i++)
    if (read(fd, buf, sizeof buf) < 0) break;
}

static long cpu_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv)
{
  if (argc < 2) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!strcmp(argv[1], "sites") && argc > 3) {
    int a = atoi(argv[2]), b = atoi(argv[3]);
    site_a(a);
    site_b(b);
    printf("site_a %d\nsite_b %d\n", a, b);
  } else if (!strcmp(argv[1], "mixed") && argc > 2) {
    int fd = open("/dev/zero", O_RDONLY);
    long end = cpu_ms() + atol(argv[2]);
    if (fd < 0) return 1;
    while (cpu_ms() < end) {
      spin_user();
      read_zero(fd);
    }
    close(fd);
  } else {
    return 2;
  }
  return 0;
}
