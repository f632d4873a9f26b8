// The kind table (probe_kind.h).
#include "probes/probe_kind.h"

#include <iterator>

namespace ukstap::probes {

namespace {

// Indexed by ProbeKind: the static_assert below keeps the rows in the enum's order.
constexpr ProbeKindInfo kKinds[] = {
    {ProbeKind::Begin, "begin", Side::Native},
    {ProbeKind::End, "end", Side::Native},
    {ProbeKind::Error, "error", Side::Native},
    {ProbeKind::Never, "never", Side::Kernel},  // never emitted: the side does not matter
    {ProbeKind::Timer, "timer", Side::PerPoint},
    {ProbeKind::Tracepoint, "tracepoint", Side::Kernel},
    {ProbeKind::Process, "process", Side::Kernel},
    {ProbeKind::Uprobe, "uprobe", Side::Kernel},
    {ProbeKind::Perf, "perf", Side::Kernel},
    {ProbeKind::Procfs, "procfs", Side::Native},
    {ProbeKind::Input, "input", Side::Native},
    {ProbeKind::Netfilter, "netfilter", Side::Kernel},
    {ProbeKind::KernelFunction, "kernel.function", Side::Kernel},
};
static_assert(std::size(kKinds) == kProbeKindCount);

constexpr bool rows_in_order() {
  for (size_t i = 0; i < std::size(kKinds); ++i)
    if (static_cast<size_t>(kKinds[i].kind) != i) return false;
  return true;
}
static_assert(rows_in_order(), "kKinds must list the kinds in ProbeKind's order");

}  // namespace

const ProbeKindInfo& kind_info(ProbeKind k) { return kKinds[static_cast<size_t>(k)]; }

}  // namespace ukstap::probes
