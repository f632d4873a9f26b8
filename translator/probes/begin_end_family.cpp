// begin, begin(N), end, end(N), error, error(N), never.
#include <string>

#include "driver/session.h"
#include "probes/internal.h"

namespace ukstap::probes {

namespace {

void build_simple(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  const std::string& name = m.pattern->comps[0].name;
  ResolvedPoint rp;
  rp.point = make_point(s, *m.pp, concrete_components(m));
  int64_t priority = m.num(name, 0);
  if (name == "begin") rp.family = BeginPoint{priority};
  else if (name == "end") rp.family = EndPoint{priority};
  else if (name == "error") rp.family = ErrorPoint{priority};
  else rp.family = NeverPoint{};
  out.push_back(std::move(rp));
}

}  // namespace

void add_begin_end_patterns(std::vector<Pattern>& out) {
  for (const char* n : {"begin", "end", "error"}) {
    out.push_back({{{n, ArgKind::None}}, build_simple});
    out.push_back({{{n, ArgKind::Number}}, build_simple});
  }
  out.push_back({{{"never", ArgKind::None}}, build_simple});
}

}  // namespace ukstap::probes
