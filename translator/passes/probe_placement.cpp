#include "passes/probe_placement.h"

#include "probes/family_point.h"

namespace ukstap::passes {

ProbeSide probe_side(const DerivedProbe& p) {
  // The kind table says (probes/probe_kind.h); timer points decide by their own fields: the
  // interval timers tick in user space, timer.profile samples on every CPU (a perf event).
  if (p.family.is(probes::ProbeKind::Never)) return ProbeSide::None;
  return p.family.native() ? ProbeSide::Native : ProbeSide::Kernel;
}

ProbeSide ProbePlacement::of(const DerivedProbe& p) const {
  auto it = side.find(&p);
  return it == side.end() ? probe_side(p) : it->second;
}

ProbePlacement place_probes(const Session& s) {
  ProbePlacement out;
  for (auto* p : s.probes) out.side[p] = probe_side(*p);
  return out;
}

}  // namespace ukstap::passes
