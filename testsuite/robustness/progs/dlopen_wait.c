/* dlopen_wait LIB [keep]: dlopens LIB, at once renames it to LIB.away and puts a FIFO at its path
 * (as a hostile user would: before ukstap has read the new mapping's file; not with "keep"),
 * then calls LIB's
 * fifo_lib_call() (a getppid from inside the library), says "called" and waits for its end
 * (ukstap kills it). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) return 2;
  int swap = argc == 2;
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  void (*call)(void) = (void (*)(void))dlsym(h, "fifo_lib_call");
  char away[4096];
  snprintf(away, sizeof away, "%s.away", argv[1]);
  if (!call || (swap && (rename(argv[1], away) != 0 || mkfifo(argv[1], 0644) != 0))) return 1;
  call();
  printf("called\n");
  fflush(stdout);
  for (;;) pause();
}
