#include "driver/privilege.h"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "probes/tracefs.h"

namespace ukstap {

namespace {

// CapEff from /proc/self/status (no libcap needed); 0 when unreadable.
uint64_t effective_caps() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("CapEff:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  return 0;
}

constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;

}  // namespace

bool can_load_bpf() {
  uint64_t caps = effective_caps();
  auto has = [&](int cap) { return (caps >> cap) & 1; };
  return has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon));
}

std::string privilege_problem(int last_pass) {
  if (last_pass < 5 || can_load_bpf()) return "";
  std::string msg = "running probes (pass 5) needs root or the CAP_BPF and CAP_PERFMON "
                    "capabilities (uid " + std::to_string(::geteuid()) +
                    " has neither); -p1 to -p4 and -l/-L work without";
  // Tracepoint-based probes resolve against tracefs's format files, which a default mount
  // (mode 0700) keeps from non-root users: say so, rather than promise what pass 2 refuses.
  std::string why;
  if (probes::find_tracefs(why).empty())
    msg += ", except for tracepoint-based probes (syscall.*, kernel.trace): " + why;
  return msg + ".";
}

}  // namespace ukstap
