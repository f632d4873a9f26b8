/* Target of testsuite/e2e/run_ubacktrace_keys.sh: getppid() events from three call paths, a
 * known number of times each, and each path's stack as libunwind sees it (the truth).
 *
 *   path 0: main -> path_a -> event             3 events
 *   path 1: main -> path_b -> event             5 events
 *   path 2: main -> rec x (DEPTH + 1) -> event  7 events (a stack whose ubacktrace() text is
 *                                                longer than MAXSTRINGLEN = 512)
 *
 * Before its first event each path prints "truth PATH: 0x... 0x..." (unw_backtrace: frame 0 is
 * print_truth, frame 1 event, frames 2.. are the event's frames 1..), and at the end
 * "calls PATH N" for each path. The event is a raw syscall instruction inlined into event(), so
 * the stack's first frame is event() itself. Its output goes to argv[1] when given. Built -O2 -fomit-frame-pointer
 * -fno-optimize-sibling-calls: only the DWARF walk gives these chains. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdio.h>
#include <sys/syscall.h>

#define DEPTH 44
#define NOINLINE __attribute__((noinline))

static volatile long sink;
static volatile int times[3] = {3, 5, 7};  /* volatile: one call site per path (no unrolling) */
static int calls[3], told[3];

static NOINLINE void print_truth(int path)
{
  void *pcs[256];
  int n = unw_backtrace(pcs, 256);
  printf("truth %d:", path);
  for (int i = 0; i < n; i++)
    printf(" %p", pcs[i]);
  printf("\n");
  fflush(stdout);
}

static NOINLINE long event(int path)
{
  long r;
  if (!told[path]++)
    print_truth(path);
  calls[path]++;
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
  return r;
}

static NOINLINE long path_a(void) { long r = event(0); sink += r; return r; }
static NOINLINE long path_b(void) { long r = event(1); sink += r; return r; }
static NOINLINE long rec(int d)
{
  long r = d ? rec(d - 1) : event(2);
  __asm__ volatile("" ::: "memory");
  sink += r;
  return r;
}

int main(int argc, char **argv)
{
  if (argc > 1 && !freopen(argv[1], "w", stdout))  /* the truth's file */
    return 1;
  for (int i = 0; i < times[0]; i++) path_a();
  for (int i = 0; i < times[1]; i++) path_b();
  for (int i = 0; i < times[2]; i++) rec(DEPTH);
  for (int p = 0; p < 3; p++)
    printf("calls %d %d\n", p, calls[p]);
  return 0;
}
