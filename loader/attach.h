// Pass 5: attaching a kernel probe's BPF program where its family says, one file per family
// (attach_<family>.cpp), chosen by the table in attach.cpp indexed by probes::ProbeKind. Each
// family reads its typed fields (probes/family_point.h); nothing is parsed back from text.
//
// Everything attached is owned by this process (BPF links, perf event fds), collected in the
// context's vectors for the runner to detach: however ukstap ends, the kernel detaches the rest.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "codegen/module_info.h"

struct bpf_object;
struct bpf_program;
struct bpf_link;
struct perf_event_attr;

namespace ukstap::loader {

struct AttachContext {
  struct bpf_object* obj = nullptr;  // the loaded module (the dispatcher's prog arrays)
  std::string tracefs;               // tracefs root, found when a tracepoint is attached directly
  pid_t target_pid = 0;              // the -c/-x target (perf .process events follow it)
  long (*kernel_hz)() = nullptr;     // CONFIG_HZ: timer.profile's rate
  // What the attach made, for the runner's detach:
  std::vector<struct bpf_link*>* links = nullptr;
  std::vector<int>* perf_fds = nullptr;    // perf event fds no link took
  std::vector<int>* event_refs = nullptr;  // extra tracepoint references (event_closer.h)
  std::vector<int>* link_fds = nullptr;    // BPF links made with bpf(2), no libbpf object
};

// Attaches `prog`, the BPF program of kernel probe `p`. False with errno set when it cannot
// (the caller reports "cannot attach ..."). Native probes are not attached: false, EINVAL.
bool attach_probe(AttachContext& cx, const codegen::ProbeInfo& p, struct bpf_program* prog);

// ---- the families' entries (attach_<family>.cpp), called through attach_probe's table ----
bool attach_timer(AttachContext& cx, const probes::TimerPoint& t, const codegen::ProbeInfo& p,
                  struct bpf_program* prog);
bool attach_tracepoint(AttachContext& cx, const probes::TracepointPoint& t,
                       const codegen::ProbeInfo& p, struct bpf_program* prog);
bool attach_process(AttachContext& cx, const probes::ProcessPoint& t, const codegen::ProbeInfo& p,
                    struct bpf_program* prog);
bool attach_uprobe(AttachContext& cx, const probes::UprobePoint& u, const codegen::ProbeInfo& p,
                   struct bpf_program* prog);
bool attach_perf(AttachContext& cx, const probes::PerfPoint& e, const codegen::ProbeInfo& p,
                 struct bpf_program* prog);

bool attach_netfilter(AttachContext& cx, const probes::NetfilterPoint& nf,
                      const codegen::ProbeInfo& p, struct bpf_program* prog);
bool attach_kernel_function(AttachContext& cx, const probes::KernelFunctionPoint& kf,
                            const codegen::ProbeInfo& p, struct bpf_program* prog);

// Before the object is loaded: the program type libbpf cannot guess from the section name
// (netfilter_abi.h).
void prepare_netfilter_program(struct bpf_program* prog);

// Shared by perf and timer.profile (attach_perf.cpp): opens `attr` for the target process
// (per_process: inherited by its children) or on every online CPU, and links `prog` to each.
bool attach_sampling_event(AttachContext& cx, struct perf_event_attr& attr, bool per_process,
                           struct bpf_program* prog);
// The raw tracepoint ("sys_enter" or "sys_exit") a program of the module attaches to when it is
// one of the syscall dispatchers (runtime/bpf/stp_bpf_probes.h names them stp_sys_enter_<slot>,
// stp_sys_exit_<slot>); nullptr for any other program.
const char* syscall_dispatcher_tracepoint(const char* program_name);

// Keeps `l` in cx.links; false (errno from libbpf) when it is null.
bool keep_link(AttachContext& cx, struct bpf_link* l);

}  // namespace ukstap::loader
