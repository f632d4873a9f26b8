// The same events through ukstap's CTF writer (ctf-writer/: socket -> writer process ->
// libbabeltrace2 -> sink.ctf.fs), for bench/ctf_cost.sh. Prints the ns per event spent in the
// sending process, then the ns per event until the writer finished (wall), then the writer's
// CPU ns per event (its rusage).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "ctf-writer/trace_writer.h"
#include "ctf-writer/writer_main.h"

using namespace ukstap::ctf;

int main(int argc, char** argv) {
  if (argc == 2 && !std::strcmp(argv[0], "ukstap-ctf-writer")) return writer_main(3, argv[1]);
  long n = argc > 2 ? std::atol(argv[2]) : 100000;
  CtfTrace t;
  std::string why;
  if (!t.open(argv[1], why)) return std::fprintf(stderr, "%s\n", why.c_str()), 1;
  t.init(0, {}, {{Type::Sint, 32, 10, Scope::Payload, "vpid"}, {Type::Sint, 32, 10, Scope::Payload, "vtid"},
                 {Type::String, 8, 10, Scope::Payload, "procname"}, {Type::Uint, 64, 16, Scope::Payload, "ip"},
                 {Type::UintSeq, 64, 16, Scope::Payload, "callstack_user"}});
  uint32_t c = t.define_class("syscall.openat", {{Type::String, 8, 10, Scope::Payload, "filename"},
                                                 {Type::Sint, 64, 10, Scope::Payload, "flags"}});
  const uint64_t pcs[8] = {0x401000, 0x402000, 0x7f0000001234, 0x7f0000002000, 0x7f0000003000, 0x401100, 0x401200, 0x401300};
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; i++) {
    Encoder& e = t.begin_event(c, 1000 + i, 0);
    e.u64(1234), e.u64(1234), e.str("cat"), e.u64(pcs[0]);
    e.u32(8);
    for (uint64_t pc : pcs) e.u64(pc);
    e.str("/etc/passwd"), e.u64(i);
    t.end_event();
  }
  t.flush();
  auto t1 = std::chrono::steady_clock::now();
  if (!t.close(why)) return std::fprintf(stderr, "%s\n", why.c_str()), 1;
  auto t2 = std::chrono::steady_clock::now();
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  double cpu = ru.ru_utime.tv_sec * 1e9 + ru.ru_utime.tv_usec * 1e3 + ru.ru_stime.tv_sec * 1e9 + ru.ru_stime.tv_usec * 1e3;
  std::printf("%.0f %.0f %.0f\n", std::chrono::duration<double, std::nano>(t1 - t0).count() / n,
              std::chrono::duration<double, std::nano>(t2 - t0).count() / n, cpu / n);
  return 0;
}
