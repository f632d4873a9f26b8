/* Built twice as two libraries whose code is byte for byte the same and whose one function has
 * another name of the same length (-DTC_NAME=tc_one / tc_two): loaded one after the other at the
 * same address, a call through either leaves the same return addresses on the stack
 * (run_stack_text_cache.sh). */
#include <sys/syscall.h>
#include <unistd.h>

volatile long tc_sink;

long TC_NAME(void)
{
  long r = syscall(SYS_getppid);
  tc_sink += r; /* no tail call: this frame stays on the stack */
  return r;
}
