/* Target program for testsuite/e2e/run_kernel.sh. Each mode makes known system calls or
 * function calls and prints its own record of them on stdout, which the tests use as truth.
 *
 *   ktarget reads V...        read(987, NULL, V) for each V (fails with EBADF; count = V)
 *   ktarget write5            write(987, "hello", 5) (EBADF)
 *   ktarget getpid N [MS]     N raw getpid system calls, then sleep MS milliseconds
 *   ktarget open DIR          openat calls with known paths/flags/modes (raw syscalls)
 *   ktarget when FILE         wait until FILE exists (polled every 10 ms), then one raw getpid
 *                             system call
 *   ktarget busy MS           spin in user space for MS milliseconds of its own CPU time (not of
 *                             wall time: on a loaded machine it is sampled as often per CPU second)
 *   ktarget work N            call work(i) for i < N; prints "work RESULT" and "pid PID"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) int work(int n)
{
  __asm__ volatile("" ::: "memory");
  return n * 7 - 3;
}

static long clock_ms(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void show(const char *what, long r)
{
  if (r < 0) printf("%s -%d\n", what, errno);
  else printf("%s %ld\n", what, r);
}

int main(int argc, char **argv)
{
  if (argc < 2) return 2;
  const char *mode = argv[1];
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!strcmp(mode, "reads")) {
    for (int i = 2; i < argc; i++) syscall(SYS_read, 987, NULL, strtoul(argv[i], NULL, 0));
    printf("reads %d\n", argc - 2);
  } else if (!strcmp(mode, "write5")) {
    syscall(SYS_write, 987, "hello", 5);
  } else if (!strcmp(mode, "getpid")) {
    int n = argc > 2 ? atoi(argv[2]) : 1;
    for (int i = 0; i < n; i++) syscall(SYS_getpid);
    if (argc > 3) usleep(atoi(argv[3]) * 1000);
  } else if (!strcmp(mode, "when") && argc > 2) {
    while (access(argv[2], F_OK) != 0) usleep(10000);
    syscall(SYS_getpid);
  } else if (!strcmp(mode, "open")) {
    char p[4096];
    if (argc < 3) return 2;
    snprintf(p, sizeof p, "%s/out.txt", argv[2]);
    show("creat", syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT | O_TRUNC, 0666));
    show("enoent", syscall(SYS_openat, AT_FDCWD, "/nonexistent/ukstap-e2e", O_RDONLY));
    long dfd = syscall(SYS_openat, AT_FDCWD, argv[2], O_RDONLY | O_DIRECTORY);
    show("dir", dfd);
    show("rel", syscall(SYS_openat, (int)dfd, "out.txt", O_RDWR | O_APPEND | O_CLOEXEC));
    snprintf(p, sizeof p, "%s/excl.txt", argv[2]);
    show("excl", syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT | O_EXCL, 0640));
    show("eexist", syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT | O_EXCL, 0640));
  } else if (!strcmp(mode, "busy")) {
    long end = clock_ms(CLOCK_PROCESS_CPUTIME_ID) + (argc > 2 ? atol(argv[2]) : 1000);
    volatile unsigned long x = 0;
    while (clock_ms(CLOCK_PROCESS_CPUTIME_ID) < end)
      for (int i = 0; i < 100000; i++) x += i;
  } else if (!strcmp(mode, "work")) {
    int n = argc > 2 ? atoi(argv[2]) : 5;
    for (int i = 0; i < n; i++) printf("work %d\n", work(i));
    printf("pid %d\n", (int)getpid());
  } else {
    return 2;
  }
  return 0;
}
