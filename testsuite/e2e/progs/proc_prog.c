/* Target of testsuite/e2e/run_process.sh. Prints the truths the process-family probes are
 * checked against: work(i)'s return value for i = 0..N-1 (N = argv[1], default 3) and
 * getppid()'s result N times (a libc call through the PLT); an SDT marker per work() call
 * (provider proc_prog, name worked, arguments i and its result). A second argument: "stay"
 * then loops (a process that exists before ukstap starts, for -x); "thread" starts a thread that
 * prints its tid (process.thread.begin/end). Built -no-pie -rdynamic: link-time
 * addresses are run-time addresses and work is exported (.dynsym keeps it when stripped). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One SDT marker written as <sys/sdt.h> writes it (the header is not installed here): a nop,
 * its .note.stapsdt entry (pc, base, semaphore 0, provider, name, argument text), .stapsdt.base. */
#define SDT2(prov, name, a1, a2)                                                         \
  __asm__ __volatile__("990: nop\n"                                                      \
                       ".pushsection .note.stapsdt,\"?\",\"note\"\n"                     \
                       ".balign 4\n"                                                     \
                       ".4byte 992f-991f, 994f-993f, 3\n"                                \
                       "991: .asciz \"stapsdt\"\n"                                       \
                       "992: .balign 4\n"                                                \
                       "993: .8byte 990b\n"                                              \
                       ".8byte _.stapsdt.base\n"                                         \
                       ".8byte 0\n"                                                      \
                       ".asciz \"" #prov "\"\n"                                          \
                       ".asciz \"" #name "\"\n"                                          \
                       ".asciz \"-4@%0 -4@%1\"\n"                                        \
                       "994: .balign 4\n"                                                \
                       ".popsection\n"                                                   \
                       ".ifndef _.stapsdt.base\n"                                        \
                       ".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
                       ".weak _.stapsdt.base\n"                                          \
                       ".hidden _.stapsdt.base\n"                                        \
                       "_.stapsdt.base: .space 1\n"                                      \
                       ".size _.stapsdt.base, 1\n"                                       \
                       ".popsection\n"                                                   \
                       ".endif\n" ::"nor"(a1), "nor"(a2))
__attribute__((noinline)) int work(int n)
{
  int r = n * 3;
  return r + 1;
}

static void *thread_main(void *arg)
{
  printf("tid=%d\n", gettid());
  fflush(stdout);
  return arg;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 3;
  for (int i = 0; i < n; i++) {
    int w = work(i);
    SDT2(proc_prog, worked, i, w); /* process(...).mark("worked"): $arg1 = i, $arg2 = w */
    printf("work(%d)=%d\n", i, w);
  }
  for (int i = 0; i < n; i++)
    printf("ppid=%d\n", getppid());
  fflush(stdout);
  if (argc > 2 && strcmp(argv[2], "thread") == 0) {
    pthread_t t;
    pthread_create(&t, NULL, thread_main, NULL);
    pthread_join(t, NULL);
  }
  if (argc > 2 && strcmp(argv[2], "stay") == 0)
    for (;;)
      usleep(20000);
  return 0;
}
