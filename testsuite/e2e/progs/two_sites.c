/* Syscalls at two places of one function and at one place of another: the count each function
 * makes, printed by the program itself, is the truth of run_symbol_key_merge.sh (an array keyed by
 * usymname(uaddr()) has one entry per function, whatever the pc).
 * Usage: two_sites N M  -> two_sites() N times (2N getppid), one_site() M times (M getppid). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#define GETPPID()                                                                           \
  do {                                                                                      \
    long r = SYS_getppid;                                                                   \
    __asm__ volatile("syscall" : "+a"(r) : : "rcx", "r11", "memory");                       \
  } while (0)

__attribute__((noinline)) void two_sites(void) {
  GETPPID();
  GETPPID();
}

__attribute__((noinline)) void one_site(void) { GETPPID(); }

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3, m = argc > 2 ? atoi(argv[2]) : 2;
  for (int i = 0; i < n; ++i) two_sites();
  for (int i = 0; i < m; ++i) one_site();
  printf("two_sites %d\none_site %d\n", 2 * n, m);
  return 0;
}
