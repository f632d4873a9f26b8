// attach_probe(): the attach table, one entry per probe kind (attach.h).
#include "loader/attach.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <iterator>

namespace ukstap::loader {

namespace {

using codegen::ProbeInfo;
using Entry = bool (*)(AttachContext&, const ProbeInfo&, struct bpf_program*);

// A family's entry taking its typed point.
template <class Point, bool (*Attach)(AttachContext&, const Point&, const ProbeInfo&,
                                      struct bpf_program*)>
bool typed(AttachContext& cx, const ProbeInfo& p, struct bpf_program* prog) {
  const Point* point = p.family.get<Point>();
  if (!point) {
    errno = EINVAL;
    return false;
  }
  return Attach(cx, *point, p, prog);
}

// One row per probes::ProbeKind, in the enum's order (checked below); null: the kind has no
// kernel program (runs natively, or never).
struct Row {
  probes::ProbeKind kind;
  Entry attach;
};
constexpr Row kAttach[] = {
    {probes::ProbeKind::Begin, nullptr},
    {probes::ProbeKind::End, nullptr},
    {probes::ProbeKind::Error, nullptr},
    {probes::ProbeKind::Never, nullptr},
    {probes::ProbeKind::Timer, typed<probes::TimerPoint, attach_timer>},  // timer.profile
    {probes::ProbeKind::Tracepoint, typed<probes::TracepointPoint, attach_tracepoint>},
    {probes::ProbeKind::Process, typed<probes::ProcessPoint, attach_process>},
    {probes::ProbeKind::Uprobe, typed<probes::UprobePoint, attach_uprobe>},
    {probes::ProbeKind::Perf, typed<probes::PerfPoint, attach_perf>},
    {probes::ProbeKind::Procfs, nullptr},  // a FIFO the loader serves (procfs_files.h)
    {probes::ProbeKind::Input, nullptr},  // read from stdin by the loader (input_reader.h)
    {probes::ProbeKind::Netfilter, typed<probes::NetfilterPoint, attach_netfilter>},
    {probes::ProbeKind::KernelFunction,
     typed<probes::KernelFunctionPoint, attach_kernel_function>},
};
constexpr bool rows_in_order() {
  for (size_t i = 0; i < std::size(kAttach); ++i)
    if (static_cast<size_t>(kAttach[i].kind) != i) return false;
  return true;
}
static_assert(std::size(kAttach) == probes::kProbeKindCount, "one row per probe kind");
static_assert(rows_in_order(), "rows in probes::ProbeKind's order");

}  // namespace

bool keep_link(AttachContext& cx, struct bpf_link* l) {
  if (!l) return false;
  cx.links->push_back(l);
  return true;
}

bool attach_probe(AttachContext& cx, const ProbeInfo& p, struct bpf_program* prog) {
  errno = 0;
  Entry entry = kAttach[static_cast<size_t>(p.family.kind())].attach;
  if (!entry || p.native) {
    errno = EINVAL;
    return false;
  }
  return entry(cx, p, prog);
}

}  // namespace ukstap::loader
