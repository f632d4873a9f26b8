/* Workload of bench/compare.py item 7 (depth): rec() recurses D levels (default 512) and makes
 * a getppid() syscall at the bottom, N times (default 10). Built -O2 -fomit-frame-pointer (only
 * CFI can unwind it) and, for the frame-pointer tools, -fno-omit-frame-pointer. The addition after
 * the recursive call keeps it from being a tail call, so each level is one frame (16 bytes of
 * stack at -O2: 512 levels = 8 KiB, perf's default stack copy). Frames of a full stack: syscall,
 * D x rec, main, __libc_start_call_main, __libc_start_main, _start = D + 5. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
static volatile long sink;
__attribute__((noinline)) static long rec(int d)
{
  long r = d <= 1 ? syscall(SYS_getppid) : rec(d - 1);
  sink += r;
  return r;
}
int main(int argc, char **argv)
{
  int depth = argc > 1 ? atoi(argv[1]) : 512;
  int n = argc > 2 ? atoi(argv[2]) : 10;
  for (int i = 0; i < n; i++) rec(depth);
  return 0;
}
