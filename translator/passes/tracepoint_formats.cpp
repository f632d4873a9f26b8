#include "passes/tracepoint_formats.h"

#include "probes/cache.h"
#include "probes/internal.h"

namespace ukstap::passes {

const probes::TraceEvent* TracepointFormats::of(const DerivedProbe& p) const {
  auto it = events.find(&p);
  return it == events.end() ? nullptr : it->second;
}

TracepointFormats read_tracepoint_formats(Session& s) {
  TracepointFormats out;
  for (auto* p : s.probes) {
    if (p->family != "tracepoint") continue;
    auto& cache = probes::session_cache(s);
    if (!cache.tracefs) continue;
    auto sys = p->params.find("system"), ev = p->params.find("event");
    if (sys == p->params.end() || ev == p->params.end()) continue;
    out.events[p] = cache.tracefs->event(sys->second, ev->second);
  }
  return out;
}

}  // namespace ukstap::passes
