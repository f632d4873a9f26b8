/* The dlopen'd library of ustack_prog.c: lib_entry -> lib_inner -> getppid (a raw syscall
 * instruction inlined into lib_inner). Also linked into ustack_prog built -DLAZY_LIB, for
 * lib_lazy below. */
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

/* An IFUNC bound lazily: an executable linked -z lazy calls lib_lazy through its PLT, so the
 * first call enters ld.so's _dl_runtime_resolve_xsave*, which realigns the stack and keeps its
 * CFA in rbx, and _dl_fixup calls this resolver. The event (made by the resolver once lib_truth
 * is set) has that frame on its stack. */
void (*lib_truth)(void);
static int lazy_impl(void) { return lib_sink + 2; }
static void *resolve_lib_lazy(void)
{
  if (lib_truth) {
    lib_truth();
    lib_getppid();
  }
  return (void *)lazy_impl;
}
int lib_lazy(void) __attribute__((ifunc("resolve_lib_lazy")));
