/* Target of testsuite/e2e/run_ustack.sh. Built -O2 -fno-omit-frame-pointer: the frame-pointer
 * walk must give its full chain. Each mode records its own truth on stdout before the event:
 * the stack as libunwind sees it (unw_backtrace, "truth: 0x... 0x..."), and /proc/self/maps
 * lines ("map: ...") of the mappings an event lands in.
 *
 * The event is always a getppid() made with a raw syscall instruction inlined into the innermost
 * function, right after it recorded the truth (so the first frame is that function, not a libc
 * wrapper or a leaf without a frame pointer): libunwind's frame 0 is print_truth, its frame 1 the
 * innermost function, and its frames 2.. are ukstap's frames 1..
 *
 *   chain [N]    main -> chain_1 .. chain_12 -> getppid (N times, from the same call sites)
 *   threads      a second thread runs the chain (the event's tid is not the pid)
 *   forkexec     fork; the child execs this program in "chain" mode; the parent waits
 *   dlopen LIB   dlopen(LIB), call lib_entry() -> lib_inner -> getppid
 *   remap A B    map file A executable at a fixed address X, madvise(X) (the event), unmap,
 *                map file B at X, madvise(X) again, exit
 *   vdso SECS    call clock_gettime in a loop for SECS seconds of CPU time (timer samples land in [vdso])
 *   signal       main -> sig_1 -> sig_2 -> raise(SIGUSR1); the handler runs the chain (the
 *                stack goes through the kernel's signal frame, __restore_rt)
 *   recurse N    recurse(N) -> ... -> recurse(0) -> getppid: N + 1 frames of one function
 *   vfork        main -> do_vfork -> vfork(); the child exits at once (glibc's vfork keeps its
 *                RA in rdi: the event is the parent's return from the vfork syscall)
 *   bigframe     main -> big_frame (a 96 KiB local buffer: a CFA offset beyond int16) -> the chain
 *   lazy         (built -DLAZY_LIB, linked with ustack_lib.c -z lazy) main -> lib_lazy's PLT ->
 *                _dl_runtime_resolve_xsave* (rbx-based CFA) -> _dl_fixup -> its IFUNC resolver
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static void print_truth(void)
{
  void *pcs[1100];
  int n = unw_backtrace(pcs, 1100);
  printf("truth:");
  for (int i = 0; i < n; i++)
    printf(" %p", pcs[i]);
  printf("\n");
  fflush(stdout);
}

static inline __attribute__((always_inline)) long raw_getppid(void)
{
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
  return r;
}

volatile int sink;
/* chain_12 records the truth and makes the syscall; each level does work after the call so no
 * call becomes a tail call. */
static NOINLINE int chain_12(int x) { print_truth(); raw_getppid(); return x + sink; }
#define LEVEL(n, next) static NOINLINE int chain_##n(int x) { int r = next(x + 1); sink += r; return r + 1; }
LEVEL(11, chain_12) LEVEL(10, chain_11) LEVEL(9, chain_10) LEVEL(8, chain_9) LEVEL(7, chain_8)
LEVEL(6, chain_7) LEVEL(5, chain_6) LEVEL(4, chain_5) LEVEL(3, chain_4) LEVEL(2, chain_3)
LEVEL(1, chain_2)

static void print_map_of(void *addr);

static void on_usr1(int sig)
{
  chain_1(sig);
}
static NOINLINE int sig_2(int x) { raise(SIGUSR1); sink += x; return x + 1; }
static NOINLINE int sig_1(int x) { int r = sig_2(x + 1); sink += r; return r + 1; }

static NOINLINE int recurse(int n)
{
  if (n == 0) {
    print_truth();
    raw_getppid();
    return sink;
  }
  int r = recurse(n - 1);
  sink += r;
  return r + 1;
}

static void *thread_main(void *arg)
{
  printf("tid: %ld\n", (long)syscall(SYS_gettid));
  print_map_of((void *)&chain_12);
  chain_1((int)(long)arg);
  return NULL;
}

static void print_map_of(void *addr)
{
  char line[512];
  FILE *f = fopen("/proc/self/maps", "r");
  unsigned long a = (unsigned long)addr;
  while (f && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
      printf("map: %s", line);
  }
  if (f)
    fclose(f);
  fflush(stdout);
}

static int remap(const char *a, const char *b)
{
  const char *files[2] = { a, b };
  void *want = (void *)0x5e0000000000ul;
  for (int i = 0; i < 2; i++) {
    int fd = open(files[i], O_RDONLY);
    if (fd < 0)
      return 1;
    void *p = mmap(want, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
    close(fd);
    if (p != want)
      return 1;
    print_map_of(p);
    madvise(p, 4096, MADV_NORMAL);  /* the event: its start argument is X */
    munmap(p, 4096);
  }
  return 0;
}

static NOINLINE int do_vfork(void)
{
  print_truth();
  pid_t c = vfork();
  if (c == 0)
    _exit(0);
  int st;
  waitpid(c, &st, 0);
  return WIFEXITED(st) ? 1 : 0;
}

/* A frame over 32 KiB, like the 32-64 KiB I/O buffers of glibc, Python and coreutils. */
static NOINLINE int big_frame(int x)
{
  volatile char buf[96 * 1024];
  buf[x] = (char)x;
  int r = chain_1(x);
  return r + buf[x] + buf[sizeof buf - 1 - x];
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "chain";
  printf("pid: %d\n", getpid());
  if (!strcmp(mode, "chain")) {
    int n = argc > 2 ? atoi(argv[2]) : 1, r = 0;
    print_map_of((void *)&chain_12);
    for (int i = 0; i < n; i++)
      r += chain_1(0);  /* kept live; its value grows with sink and does not matter */
    return r == 0x7fffffff ? 3 : 0;
  }
  if (!strcmp(mode, "threads")) {
    pthread_t t;
    pthread_create(&t, NULL, thread_main, (void *)1);
    pthread_join(t, NULL);
    return 0;
  }
  if (!strcmp(mode, "forkexec")) {
    pid_t c = fork();
    if (c == 0) {
      char self[4096];
      ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
      if (n <= 0)
        _exit(127);
      self[n] = '\0';
      execl(self, argv[0], "chain", (char *)NULL);  /* its comm: the file's name again */
      _exit(127);
    }
    int st;
    waitpid(c, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
  }
  if (!strcmp(mode, "dlopen") && argc > 2) {
    void *h = dlopen(argv[2], RTLD_NOW);
    if (!h)
      return 1;
    int (*entry)(void (*)(void)) = (int (*)(void (*)(void)))dlsym(h, "lib_entry");
    if (!entry)
      return 1;
    print_map_of((void *)entry);
    /* ukstap loads a dlopen'd library's unwind table when its tracker reads the mapping (it
     * polls every 20 ms): give it that time before the first event in the library. */
    usleep(300000);
    return entry(print_truth) > 0 ? 0 : 1;
  }
  if (!strcmp(mode, "signal")) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    print_map_of((void *)&chain_12);
    return sig_1(0) > 0 ? 0 : 1;
  }
  if (!strcmp(mode, "recurse") && argc > 2) {
    print_map_of((void *)&recurse);
    return recurse(atoi(argv[2])) >= 0 ? 0 : 1;
  }
#ifdef LAZY_LIB
  if (!strcmp(mode, "lazy")) {
    extern void (*lib_truth)(void);
    extern int lib_lazy(void);
    lib_truth = print_truth;
    print_map_of((void *)&chain_12);
    return lib_lazy() > 0 ? 0 : 1;
  }
#endif
  if (!strcmp(mode, "vfork")) {
    print_map_of((void *)&do_vfork);
    return do_vfork() + sink == 0x7fffffff ? 3 : 0;
  }
  if (!strcmp(mode, "bigframe")) {
    print_map_of((void *)&chain_12);
    return big_frame(0) == 0x7fffffff ? 3 : 0;
  }
  if (!strcmp(mode, "remap") && argc > 3)
    return remap(argv[2], argv[3]);
  if (!strcmp(mode, "vdso") && argc > 2) {
    /* SECS of its own CPU time, not of wall time: on a loaded machine it gets as many timer
     * samples (a second of wall time gave 4 under load 13). The CPU clock is a system call:
     * it is read once every 4096 calls of the vDSO's clock. */
    struct timespec t, c0, c;
    double secs = atof(argv[2]);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    do {
      for (int i = 0; i < 4096; i++) clock_gettime(CLOCK_MONOTONIC, &t);
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    } while ((c.tv_sec - c0.tv_sec) + (c.tv_nsec - c0.tv_nsec) / 1e9 < secs);
    return 0;
  }
  fprintf(stderr, "usage: %s chain|threads|forkexec|dlopen LIB|remap A B|vdso SECS|bigframe\n", argv[0]);
  return 2;
}
