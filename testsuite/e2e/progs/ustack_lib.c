/* The dlopen'd library of ustack_prog.c: lib_entry -> lib_inner -> getppid (a raw syscall
 * instruction inlined into lib_inner). */
#include <sys/syscall.h>

#define NOINLINE __attribute__((noinline, noclone))
volatile int lib_sink;

static inline __attribute__((always_inline)) long lib_getppid(void)
{
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
  return r;
}

NOINLINE int lib_inner(void (*truth)(void))
{
  truth();
  lib_getppid();
  return lib_sink + 1;
}

NOINLINE int lib_entry(void (*truth)(void))
{
  int r = lib_inner(truth);
  lib_sink += r;
  return r + 1;
}
