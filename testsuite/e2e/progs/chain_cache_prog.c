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
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;
static int told[8], nseq;
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

/* A getpid() under a 2 KiB frame: a walk that reads words further apart than the chain cache
 * keeps (STP_UWIN), so it is never kept and never evicts an entry, but leaves its own pcs in the
 * walk's context. */
static NOINLINE long other_walk(void)
{
  volatile char big[2048];
  long r;
  big[0] = 1;
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getpid) : "rcx", "r11", "memory");
  return r + big[0];
}

/* Path p of the lazy run: p + 1 frames of rec above top_a (a stack of its own). */
static NOINLINE long rec(int d)
{
  long r = d > 0 ? rec(d - 1) : top_a();
  sink += r;
  return r;
}

/* "lazy" (run_chain_cache.sh's second run): for paths 0..7, five events: two whose stacks the
 * script streams (the walk is kept in the cache), a walk of another stack before the third
 * (other_walk), then three whose stacks it aggregates (ustack_id(): a hit of the kept walk whose
 * id is not stored yet, so its pcs must come from the cache entry, not from the context's last
 * walk, which is other_walk's). The script counts the events: the first two of each five are
 * streamed. "ids PATH N": N aggregated events of PATH. A walk is kept only once the VMA tracker
 * mirrors the process (ms after exec): the pause between paths lets that happen early on. */
static NOINLINE void lazy_run(void)
{
  /* volatile counters: the compiler must not peel the i == 2 iteration into a call site of its
   * own (the events of one path must have one stack). */
  for (volatile int p = 0; p < 8; p++) {
    for (volatile int i = 0; i < 5; i++) {
      if (i == 2)
        other_walk();
      cur = p;
      rec(p);
    }
    printf("ids %d 3\n", p);
    usleep(20000);
  }
}

int main(int argc, char **argv)
{
  if (argc > 1 && !freopen(argv[1], "w", stdout))
    return 1;
  if (argc > 2) {
    lazy_run();
    printf("seq %s\n", seq);
    return 0;
  }
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
