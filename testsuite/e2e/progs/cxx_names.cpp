// A C++ program whose functions have long mangled names, for the demangling tests
// (run_demangle.sh): a namespace, a class template, an overloaded operator and a std::string
// parameter. `cxx_names SECONDS` spins in Spinner<3>::spin for SECONDS of its own CPU time (timer
// samples: as many on a loaded machine as on a quiet one), then
// makes one getppid() from inside the same frames (a syscall probe's backtrace).
// `cxx_names SECONDS deep` does the same under 80 frames of dive() (a tall flame graph).
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>
#include <cstdlib>
#include <string>

#define NOINLINE __attribute__((noinline, noclone))

volatile long sink;

namespace shapes {

template <int N>
struct Spinner {
  NOINLINE long spin(const std::string& tag, double seconds) {
    std::clock_t end = std::clock() + (std::clock_t)(seconds * CLOCKS_PER_SEC);
    long n = 0;
    while (std::clock() < end)
      for (int i = 0; i < 1000; i++) sink = sink + i + (long)tag.size();
    n += syscall(SYS_getppid);
    return n + N;
  }
  NOINLINE long operator()(const std::string& tag, double seconds) {
    long r = spin(tag, seconds);
    sink = sink + r;  // work after the call: no tail call
    return r;
  }
};

}  // namespace shapes

NOINLINE long dive(int n, double seconds) {
  if (n == 0) {
    shapes::Spinner<3> s;
    return s(std::string("tag"), seconds);
  }
  long r = dive(n - 1, seconds);
  sink = sink + r;  // work after the call: no tail call
  return r;
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 0.0;
  long r = dive(argc > 2 && std::string(argv[2]) == "deep" ? 80 : 0, seconds);
  sink = sink + r;
  return 0;
}
