/* Target of testsuite/e2e/run_function_lib.sh: prints what the kernel says about itself, then
 * does the things the test's probes watch.
 *   status:  its own /proc/self/status Name, Pid, PPid, Tgid, Uid (real, effective), Gid
 *            (real, effective), and the nice value (getpriority)
 *   pstate:  the State letter of its parent (/proc/PPID/status): a shell waiting for it (S)
 *   cmdline: /proc/self/cmdline with NULs as blanks
 *   comm:    /proc/self/comm
 *   nofile:  its soft RLIMIT_NOFILE (getrlimit)
 *   ancestry: " Name(pid)" of itself and each ancestor below init, from /proc/PID/status
 *   statm:   /proc/self/statm's size, text and data pages, just before the open
 * then calls args8() with known arguments (the uprobe test: int_arg & co) and opens argv[1]
 * (the kernel probe's trigger). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

__attribute__((noinline)) long args8(int a, unsigned b, long c, void *d, long e, int f, long g,
                                     int h)
{
  __asm__ volatile("" ::: "memory");
  return a + b + c + (long)d + e + f + g + h;
}

static void status_field(const char *path, const char *key, char *out, size_t n)
{
  char line[256];
  FILE *f = fopen(path, "r");
  out[0] = 0;
  if (!f)
    return;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, strlen(key))) {
      snprintf(out, n, "%s", line + strlen(key));
      out[strcspn(out, "\n")] = 0;
      break;
    }
  fclose(f);
}

int main(int argc, char **argv)
{
  char name[64], pid[32], ppid[32], tgid[32], uid[64], gid[64], st[64], path[64], buf[4096];
  unsigned ru, eu, rg, eg;
  size_t n;
  FILE *f;
  if (argc < 2)
    return 2;
  status_field("/proc/self/status", "Name:\t", name, sizeof name);
  status_field("/proc/self/status", "Pid:\t", pid, sizeof pid);
  status_field("/proc/self/status", "PPid:\t", ppid, sizeof ppid);
  status_field("/proc/self/status", "Tgid:\t", tgid, sizeof tgid);
  status_field("/proc/self/status", "Uid:\t", uid, sizeof uid);
  status_field("/proc/self/status", "Gid:\t", gid, sizeof gid);
  sscanf(uid, "%u %u", &ru, &eu);
  sscanf(gid, "%u %u", &rg, &eg);
  printf("status:%s %s %s %s %u %u %u %u %d\n", pid, tgid, ppid, name, ru, eu, rg, eg,
         getpriority(PRIO_PROCESS, 0));
  /* The parent shell sleeps in wait4 once it has forked us: wait (up to 5 s) until it does. */
  snprintf(path, sizeof path, "/proc/%d/status", getppid());
  for (int i = 0; i < 500; i++) {
    status_field(path, "State:\t", st, sizeof st);
    if (st[0] == 'S')
      break;
    usleep(10000);
  }
  printf("pstate:%c\n", st[0]);
  f = fopen("/proc/self/cmdline", "r");
  n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f)
    fclose(f);
  for (size_t i = 0; i + 1 < n; i++)
    if (!buf[i])
      buf[i] = ' ';
  buf[n ? n - 1 : 0] = 0;
  printf("cmdline:%s\n", buf);
  f = fopen("/proc/self/comm", "r");
  if (f && fgets(buf, sizeof buf, f))
    printf("comm:%s", buf);
  if (f)
    fclose(f);
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  printf("nofile:%ld\n", (long)rl.rlim_cur);
  printf("ancestry:");
  for (long p = getpid(); p > 1;) {
    char nm[64], pp[32];
    snprintf(path, sizeof path, "/proc/%ld/status", p);
    status_field(path, "Name:\t", nm, sizeof nm);
    status_field(path, "PPid:\t", pp, sizeof pp);
    printf(" %s(%ld)", nm, p);
    p = atol(pp);
  }
  printf("\n");
  fflush(stdout);
  printf("args8:%ld\n", args8(-5, 4000000000u, -1234567890123L, (void *)0x7fff1234, 5, -6, 77, -8));
  /* statm last: nothing maps or grows the heap between it and the open below */
  f = fopen("/proc/self/statm", "r");
  if (f && fgets(buf, sizeof buf, f)) {
    long sz, res, shr, txt, lib, dat;
    if (sscanf(buf, "%ld %ld %ld %ld %ld %ld", &sz, &res, &shr, &txt, &lib, &dat) == 6)
      printf("statm:%ld %ld %ld\n", sz, txt, dat);
  }
  if (f)
    fclose(f);
  fflush(stdout);
  int fd = open(argv[1], O_RDONLY);
  if (fd >= 0)
    close(fd);
  return 0;
}
