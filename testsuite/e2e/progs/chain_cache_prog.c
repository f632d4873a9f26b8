/* Target of testsuite/e2e/run_chain_cache.sh: getppid() events whose leaves are the same pc at
 * the same sp, with caller chains that differ only higher up the stack, interleaved, so a cache
 * of caller chains (runtime/bpf/stp_bpf_uwalk_chain.h) that served a stale chain would be seen.
 *
 *   path 0: main (site 1) -> top_a -> m1 -> m2 -> event
 *   path 1: main (site 1) -> top_b -> m1 -> m2 -> event   (top_b: the same code as top_a)
 *   path 2: main (site 2) -> top_a -> m1 -> m2 -> event   (differs in main's return address)
 *
 * Before a path's first event it prints "truth PATH: 0x..." (unw_backtrace: frame 0 is
 * print_truth, frame 1 event, frames 2.. are the event's frames 1..); at the end "seq DIGITS",
 * the path of every event in order. Output to argv[1]. Built -O2 -fomit-frame-pointer
 * -fno-optimize-sibling-calls: only the DWARF walk gives these chains. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdio.h>
#include <sys/syscall.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;
static int told[3], nseq;
static char seq[256];

static NOINLINE void print_truth(int path)
{
  void *pcs[64];
  int n = unw_backtrace(pcs, 64);
  printf("truth %d:", path);
  for (int i = 0; i < n; i++)
    printf(" %p", pcs[i]);
  printf("\n");
}

/* The path is passed down in a global, not a register: the three paths' leaves are then
 * identical (pc, sp and registers), only the stack above differs. */
static volatile int cur;

static NOINLINE long event(void)
{
  long r;
  int path = cur;
  if (!told[path]++)
    print_truth(path);
  if (nseq < (int)sizeof(seq) - 1)
    seq[nseq++] = (char)('0' + path);
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
  return r;
}

static NOINLINE long m2(void) { long r = event(); sink += r; return r; }
static NOINLINE long m1(void) { long r = m2(); sink += r; return r; }
static NOINLINE long top_a(void) { long r = m1(); sink += r; return r; }
static NOINLINE long top_b(void) { long r = m1(); sink += r; return r; }

int main(int argc, char **argv)
{
  if (argc > 1 && !freopen(argv[1], "w", stdout))
    return 1;
  for (int i = 0; i < 30; i++) {
    cur = 0;
    top_a();
    if (i % 3 == 2) {
      cur = 1;
      top_b();
    }
    if (i % 5 == 4) {
      cur = 2;
      top_a();  /* site 2 */
    }
  }
  printf("seq %s\n", seq);
  return 0;
}
