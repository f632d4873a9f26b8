// kernel.trace("SYSTEM:EVENT"): behind the syscall dispatcher (a place in its prog array), a
// tp_btf program when the probe reads the tracepoint's BTF arguments, or its own perf event of
// type PERF_TYPE_TRACEPOINT.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/stp_limits.h"
#include "loader/attach.h"
#include "loader/util.h"

namespace ukstap::loader {

const char* syscall_dispatcher_tracepoint(const char* program_name) {
  if (std::strncmp(program_name, "stp_sys_enter_", 14) == 0) return "sys_enter";
  if (std::strncmp(program_name, "stp_sys_exit_", 13) == 0) return "sys_exit";
  return nullptr;
}

bool attach_tracepoint(AttachContext& cx, const probes::TracepointPoint& t,
                       const codegen::ProbeInfo& p, struct bpf_program* prog) {
  if (p.syscall_slot >= 0) {
    // Behind the syscall dispatcher: the probe's place in its direction's prog array is
    // (number, slot); attach_all() attaches the dispatchers once every place is filled.
    struct bpf_map* arr = bpf_object__find_map_by_name(
        cx.obj, t.is_sys_exit() ? "stp_sys_exit_progs" : "stp_sys_enter_progs");
    if (!arr) return false;
    uint32_t slots = bpf_map__max_entries(arr) / STP_SYS_NR;
    uint32_t key = (uint32_t)t.syscall_nr * slots + (uint32_t)p.syscall_slot;
    int fd = bpf_program__fd(prog);
    return bpf_map_update_elem(bpf_map__fd(arr), &key, &fd, BPF_ANY) == 0;
  }
  // tp_btf/<event> (passes/tracepoint_context.cpp): libbpf finds btf_trace_<event> from the
  // section name and attaches it as a raw tracepoint link, detached at once on exit.
  if (t.use_btf_args) return keep_link(cx, bpf_program__attach(prog));
  // The perf event opened here, as libbpf's attach_tracepoint opens it, so that ukstap holds
  // a reference of its own (event_closer.h: detaching then does not wait for the kernel). The
  // id is read again: the event as it is now, not as pass 2 saw it.
  std::string id;
  if (!loader::read_file(cx.tracefs + "/events/" + t.system + "/" + t.event + "/id", id)) {
    errno = errno ? errno : ENOENT;
    return false;
  }
  struct perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = std::strtoull(id.c_str(), nullptr, 10);
  // Counting, not sampling: the program runs from the tracepoint on every CPU either way, and
  // nobody reads this event's samples. As a sampling event (period 1) it made the kernel build
  // and throw away a perf sample after every run of the program on the CPU the event is opened
  // on (CPU 0; perf_swevent_event: ~200 ns an event there on bench item 1, issue 15's cost).
  attr.sample_period = 0;
  int fd = (int)::syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return false;
  int ref = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (!keep_link(cx, bpf_program__attach_perf_event(prog, fd))) {
    int err = errno;
    ::close(fd);
    if (ref >= 0) ::close(ref);
    errno = err;
    return false;
  }
  if (ref >= 0) cx.event_refs->push_back(ref);
  return true;
}

}  // namespace ukstap::loader
