// __input.char, __input.line: the probes tapsets/input.stp's input.char and input.line alias
// (stapprobes INPUT). They run natively, from the loader's event loop, for each character or
// line ukstap reads from its standard input (loader/input_reader.h).
#include <string>

#include "driver/session.h"
#include "probes/internal.h"

namespace ukstap::probes {

namespace {

void build_input(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  ResolvedPoint rp;
  rp.point = make_point(s, *m.pp, concrete_components(m));
  InputPoint in;
  in.unit = m.pattern->comps[1].name == "line" ? InputPoint::Unit::Line : InputPoint::Unit::Char;
  rp.family = in;
  out.push_back(std::move(rp));
}

}  // namespace

void add_input_patterns(std::vector<Pattern>& out) {
  for (const char* unit : {"char", "line"})
    out.push_back({{{"__input", ArgKind::None}, {unit, ArgKind::None}}, build_input});
}

}  // namespace ukstap::probes
