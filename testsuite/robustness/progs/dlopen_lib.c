/* The library dlopen_wait.c loads: one call that makes a getppid from inside it. */
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) void fifo_lib_call(void) {
  syscall(SYS_getppid);
  __asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays on the stack */
}
