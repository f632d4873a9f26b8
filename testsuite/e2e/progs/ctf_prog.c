/* --ctf's test program (testsuite/e2e/run_ctf.sh): N openat(2) calls from a known call chain
 * (main -> middle -> leaf_open -> libc), N close(2)s, then the facts the test checks the trace
 * against, written by the program itself into argv[1]: "pid PID", then its /proc/self/maps. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) int leaf_open(const char *path) {
  int fd = open(path, O_RDONLY);
  __asm__ volatile("" ::: "memory"); /* no tail call: leaf_open stays on the stack */
  return fd;
}

__attribute__((noinline)) void middle(int n) {
  /* On the stack, so in memory: a BPF probe cannot fault a page of .rodata in to read it. */
  char path[] = "/dev/null";
  for (int i = 0; i < n; i++) {
    int fd = leaf_open(path);
    if (fd >= 0) close(fd);
  }
  __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  middle(atoi(argv[2]));
  FILE *out = fopen(argv[1], "w"), *maps = fopen("/proc/self/maps", "r");
  if (!out || !maps) return 1;
  fprintf(out, "pid %d\n", (int)getpid());
  char line[4096];
  while (fgets(line, sizeof line, maps)) fputs(line, out);
  fclose(maps);
  return fclose(out) != 0;
}
