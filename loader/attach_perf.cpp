// perf.type(T).config(C), perf.sw.*, perf.hw.*: a sampling perf event on every online CPU, or
// following the -c/-x target (.process), linked to the probe's program.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "loader/attach.h"
#include "loader/util.h"

namespace ukstap::loader {

namespace {

std::vector<int> online_cpus() {
  std::vector<int> cpus;
  std::string text;
  if (loader::read_file("/sys/devices/system/cpu/online", text)) {
    size_t pos = 0;
    while (pos < text.size()) {
      char* end;
      long a = std::strtol(text.c_str() + pos, &end, 10);
      if (end == text.c_str() + pos) break;
      long b = a;
      pos = end - text.c_str();
      if (text[pos] == '-') {
        b = std::strtol(text.c_str() + pos + 1, &end, 10);
        pos = end - text.c_str();
      }
      for (long c = a; c <= b; c++) cpus.push_back((int)c);
      if (text[pos] == ',') pos++;
      else break;
    }
  }
  if (cpus.empty())
    for (long c = 0; c < ::sysconf(_SC_NPROCESSORS_ONLN); c++) cpus.push_back((int)c);
  return cpus;
}

}  // namespace

bool attach_sampling_event(AttachContext& cx, struct perf_event_attr& attr, bool per_process,
                           struct bpf_program* prog) {
  std::vector<std::pair<pid_t, int>> where;
  if (per_process) {
    pid_t pid = cx.target_pid;
    if (pid <= 0) {
      errno = ESRCH;
      return false;
    }
    attr.inherit = 1;
    where.push_back({pid, -1});
  } else {
    for (int cpu : online_cpus()) where.push_back({-1, cpu});
  }
  for (auto [pid, cpu] : where) {
    int fd = (int)::syscall(__NR_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return false;
    // A link owns its perf event fd (libbpf closes it when the link is destroyed); only an
    // fd no link took is ours to close. (Hardware and software events are freed without a
    // grace-period wait: no second reference, event_closer.h is for tracepoints.)
    if (!keep_link(cx, bpf_program__attach_perf_event(prog, fd))) {
      cx.perf_fds->push_back(fd);
      return false;
    }
  }
  return true;
}

bool attach_perf(AttachContext& cx, const probes::PerfPoint& e, const codegen::ProbeInfo&,
                 struct bpf_program* prog) {
  struct perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = e.type;
  attr.config = e.config;
  if (e.freq) {
    attr.freq = 1;
    attr.sample_freq = e.freq;
  } else {
    attr.sample_period = e.sample_period;
  }
  return attach_sampling_event(cx, attr, e.per_process, prog);
}

}  // namespace ukstap::loader
