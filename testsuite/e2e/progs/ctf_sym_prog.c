/* The traced program of run_ctf_symbols.sh: getppid from known user frames, so that a --ctf
 * trace's stacks can be resolved by babeltrace2 --debug-info and checked against nm.
 *   ctf_sym_prog PLUGIN GONE BLOB
 *     main -> top_fn -> mid_fn -> leaf_fn -> getppid        (the program's own frames)
 *     dlopen(PLUGIN): main -> plugin_fn -> plugin_leaf -> getppid  (a dlopen'd library's)
 *     dlopen(GONE), unlink(GONE), then gone_fn -> getppid   (a mapped file that vanished)
 *     BLOB mapped executable, its raw code called: getppid from a mapping that is not ELF
 * The syscall instruction is inlined in each leaf, so the leaf frame is the leaf function. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
volatile int sink;

static inline __attribute__((always_inline)) void raw_getppid(void)
{
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
  sink += (int)r;
}

NOINLINE void leaf_fn(void) { raw_getppid(); sink++; }
NOINLINE void mid_fn(void) { leaf_fn(); sink++; }
NOINLINE void top_fn(void) { mid_fn(); sink++; }

int main(int argc, char **argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: %s PLUGIN GONE BLOB\n", argv[0]);
    return 2;
  }
  top_fn();
  void *h = dlopen(argv[1], RTLD_NOW);
  void (*plugin_fn)(void) = h ? (void (*)(void))dlsym(h, "plugin_fn") : NULL;
  void *g = dlopen(argv[2], RTLD_NOW);
  void (*gone_fn)(void) = g ? (void (*)(void))dlsym(g, "plugin_fn") : NULL;
  if (!plugin_fn || !gone_fn) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  unlink(argv[2]);
  plugin_fn();
  gone_fn();
  int fd = open(argv[3], O_RDONLY);
  void *blob = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  if (blob == MAP_FAILED) {
    perror(argv[3]);
    return 1;
  }
  ((void (*)(void))blob)();
  return 0;
}
