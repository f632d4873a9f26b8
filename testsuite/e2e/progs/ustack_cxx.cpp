// A C++ program for the in-kernel unwinder's end-to-end tests, built -O2 -fomit-frame-pointer.
// Like ustack_prog.c, right before its getppid() it records its own stack with libunwind
// (unw_backtrace, printed as "truth: PC PC ...") and ukstap's frames must equal it; it also
// prints the /proc/self/maps line of its code ("map: ...") for symbol checks.
//
// libunwind is loaded with dlopen rather than linked: linking -lunwind would interpose its own
// _Unwind_RaiseException on every C++ throw, and the exception cases must run through libgcc_s's
// unwinder as ordinary programs do.
//
//   virtual     main -> Shape::area (virtual) -> templated Level<6..0>::go -> std::function
//               holding a lambda -> getppid
//   thread      std::thread running the same (libstdc++'s thread trampoline, start_thread, clone3)
//   cleanup     an exception thrown through a frame with a local object; its destructor, run by
//               the landing pad while the exception is in flight, makes the syscall
//   terminate   an exception leaves a noexcept function: the personality routine calls
//               std::terminate from inside _Unwind_RaiseException (libgcc_s), and the terminate
//               handler makes the syscall with __cxa_throw and the unwinder on the stack
#include <dlfcn.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <thread>

#define NOINLINE __attribute__((noinline, noclone))

static int (*unw_backtrace_fn)(void**, int);

static void print_truth() {
  void* pcs[256];
  int n = unw_backtrace_fn(pcs, 256);
  printf("truth:");
  for (int i = 0; i < n; i++) printf(" %p", pcs[i]);
  printf("\n");
  fflush(stdout);
}

static inline __attribute__((always_inline)) long raw_getppid() {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
  return r;
}

static void print_map_of(const void* addr) {
  char line[512];
  FILE* f = fopen("/proc/self/maps", "r");
  unsigned long a = reinterpret_cast<unsigned long>(addr);
  while (f && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi) printf("map: %s", line);
  }
  if (f) fclose(f);
}

volatile int sink;

// The innermost frame: records the truth and makes the syscall from one function.
NOINLINE int leaf(int x) {
  print_map_of(reinterpret_cast<const void*>(&leaf));
  print_truth();
  raw_getppid();
  return x + sink;
}

template <int N>
struct Level {
  NOINLINE static int go(const std::function<int(int)>& f, int x) {
    int r = Level<N - 1>::go(f, x + 1);
    sink = sink + r;  // work after the call: no tail call
    return r + 1;
  }
};
template <>
struct Level<0> {
  NOINLINE static int go(const std::function<int(int)>& f, int x) {
    int r = f(x);
    sink = sink + r;
    return r;
  }
};

struct Shape {
  virtual ~Shape() = default;
  virtual int area(int x) = 0;
};
struct Square : Shape {
  NOINLINE int area(int x) override {
    std::function<int(int)> f = [this](int v) { return leaf(v + side); };
    int r = Level<6>::go(f, x);
    sink = sink + r;
    return r;
  }
  int side = 3;
};

NOINLINE int run_virtual(Shape* s) {
  int r = s->area(1);
  sink = sink + r;
  return r;
}

// ---- exceptions
struct Guard {
  NOINLINE ~Guard() {
    if (std::uncaught_exceptions()) leaf(7);
  }
};
NOINLINE void thrower() {
  sink = sink + 1;
  throw std::runtime_error("in flight");
}
NOINLINE void with_guard() {
  Guard g;
  thrower();
  sink = sink + 1;
}
NOINLINE void must_not_throw() noexcept {
  thrower();
  sink = sink + 1;
}
NOINLINE void on_terminate() {
  leaf(9);
  fflush(stdout);
  _exit(0);
}

int main(int argc, char** argv) {
  void* h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (h) unw_backtrace_fn = reinterpret_cast<int (*)(void**, int)>(dlsym(h, "unw_backtrace"));
  if (!unw_backtrace_fn) {
    fprintf(stderr, "ustack_cxx: cannot load libunwind.so.8's unw_backtrace\n");
    return 2;
  }
  const char* mode = argc > 1 ? argv[1] : "virtual";
  Square sq;
  Shape* s = &sq;
  if (!strcmp(mode, "virtual")) {
    run_virtual(s);
  } else if (!strcmp(mode, "thread")) {
    std::thread t([s] { run_virtual(s); });
    t.join();
  } else if (!strcmp(mode, "cleanup")) {
    try {
      with_guard();
    } catch (const std::exception&) {
      sink = sink + 1;
    }
  } else if (!strcmp(mode, "terminate")) {
    std::set_terminate(on_terminate);
    must_not_throw();
  } else {
    fprintf(stderr, "ustack_cxx: unknown mode %s\n", mode);
    return 2;
  }
  return 0;
}
