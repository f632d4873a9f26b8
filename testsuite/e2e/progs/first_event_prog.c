// A program whose first event comes before ukstap can have written its VMA mirror
// (run_first_event_mirror.sh): run by first_event_stop.sh, which stops ukstap before it execs
// this, it makes one getppid() three frames of its own deep, then, given `cont`, continues its
// parent (ukstap, whose -c command it is).
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile long sink;

NOINLINE long inner(void) {
  long r = syscall(SYS_getppid);
  sink = sink + r;  // work after the call: no tail call
  return r;
}

NOINLINE long middle(void) {
  long r = inner();
  sink = sink + r;
  return r;
}

NOINLINE long outer(void) {
  long r = middle();
  sink = sink + r;
  return r;
}

int main(int argc, char** argv) {
  (void)argv;
  long parent = outer();
  if (argc > 1) kill((pid_t)parent, SIGCONT);
  return 0;
}
