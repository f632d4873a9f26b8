/* run_stack_text_cache.sh: N getppid() calls through tc_one of LIB1, dlclose, then N through
 * tc_two of LIB2 (the same code, loaded where LIB1 was), each from the same call site. Prints
 * each library's file and load address as dladdr() reports them: the truth the printed stacks'
 * module names are checked against. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) static void call(long (*f)(void)) { sink += f(); }

int main(int argc, char **argv)
{
  if (argc < 4) return 2;
  int n = atoi(argv[3]);
  for (int k = 1; k <= 2; k++) {
    void *h = dlopen(argv[k], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      fprintf(stderr, "%s\n", dlerror());
      return 1;
    }
    long (*f)(void) = (long (*)(void))dlsym(h, k == 1 ? "tc_one" : "tc_two");
    Dl_info info;
    if (!f || !dladdr((void *)f, &info)) return 1;
    printf("lib %d %s %p %p\n", k, info.dli_fname, info.dli_fbase, (void *)f);
    fflush(stdout);
    for (int i = 0; i < n; i++) call(f);
    dlclose(h);
  }
  return 0;
}
