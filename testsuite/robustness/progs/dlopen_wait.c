/* dlopen_wait LIB GOFILE: dlopens LIB, says "loaded", waits until GOFILE exists (the test swaps
 * LIB's path for a FIFO meanwhile), then calls LIB's fifo_lib_call() (a getppid from inside the
 * library) and waits for its end (ukstap kills it). */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  void (*call)(void) = (void (*)(void))dlsym(h, "fifo_lib_call");
  if (!call) return 1;
  printf("loaded\n");
  fflush(stdout);
  struct timespec ts = {0, 20 * 1000 * 1000};
  while (access(argv[2], F_OK) != 0) nanosleep(&ts, NULL);
  call();
  for (;;) pause();
}
