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

// Indexed by probes::ProbeKind; null: the kind has no kernel program (runs natively, or never).
constexpr Entry kAttach[] = {
    nullptr,                                                 // Begin
    nullptr,                                                 // End
    nullptr,                                                 // Error
    nullptr,                                                 // Never
    typed<probes::TimerPoint, attach_timer>,                 // Timer (timer.profile)
    typed<probes::TracepointPoint, attach_tracepoint>,       // Tracepoint
    typed<probes::ProcessPoint, attach_process>,             // Process
    typed<probes::UprobePoint, attach_uprobe>,               // Uprobe
    typed<probes::PerfPoint, attach_perf>,                   // Perf
};
static_assert(std::size(kAttach) == probes::kProbeKindCount);

}  // namespace

bool keep_link(AttachContext& cx, struct bpf_link* l) {
  if (!l) return false;
  cx.links->push_back(l);
  return true;
}

bool attach_probe(AttachContext& cx, const ProbeInfo& p, struct bpf_program* prog) {
  errno = 0;
  Entry entry = kAttach[static_cast<size_t>(p.family.kind())];
  if (!entry || p.native) {
    errno = EINVAL;
    return false;
  }
  return entry(cx, p, prog);
}

}  // namespace ukstap::loader
