/* Target of testsuite/e2e/run_functions.sh: prints its own identity as the kernel reports it
 * (getpid, gettid, getppid, getuid, getgid, geteuid, getegid, comm), then opens argv[1] (the
 * probe's trigger: its user_string is known) and maps 28672 bytes PROT_READ,
 * MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE (a mmap2 argstr nothing else in the process makes). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  char comm[17] = {0};
  if (argc < 2)
    return 2;
  prctl(PR_GET_NAME, comm, 0, 0, 0);
  printf("ctx:%d %ld %d %d %d %d %d %s\n", getpid(), (long)syscall(SYS_gettid), getppid(),
         getuid(), getgid(), geteuid(), getegid(), comm);
  fflush(stdout);
  int fd = open(argv[1], O_RDONLY);
  if (fd >= 0)
    close(fd);
  void *p = mmap(NULL, 28672, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p != MAP_FAILED)
    munmap(p, 28672);
  return 0;
}
