#include "passes/probe_placement.h"

namespace ukstap::passes {

ProbeSide probe_side(const DerivedProbe& p) {
  const std::string& fam = p.family;
  if (fam == "never") return ProbeSide::None;
  if (fam == "begin" || fam == "end" || fam == "error") return ProbeSide::Native;
  // timer.profile samples on every CPU (a perf event); the interval timers tick in user space.
  if (fam == "timer") {
    auto kind = p.params.find("kind");
    return kind != p.params.end() && kind->second == "profile" ? ProbeSide::Kernel
                                                               : ProbeSide::Native;
  }
  // Everything else attaches in the kernel; a family pass 3 cannot translate is reported there.
  return ProbeSide::Kernel;
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
