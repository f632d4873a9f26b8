/* The dlopen'd library of ctf_sym_prog.c: plugin_fn -> plugin_leaf -> getppid. */
#include <sys/syscall.h>

#define NOINLINE __attribute__((noinline, noclone))
volatile int plugin_sink;

NOINLINE void plugin_leaf(void)
{
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
  plugin_sink += (int)r;
}

void plugin_fn(void) { plugin_leaf(); plugin_sink++; }
