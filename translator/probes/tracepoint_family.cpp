// kernel.trace("SYSTEM:EVENT"): tracepoints from tracefs, globs allowed in both parts; "EVENT"
// alone means any system.
#include <string>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/cache.h"
#include "probes/internal.h"
#include "probes/syscall_numbers.h"

namespace ukstap::probes {

namespace {

Tracefs& session_tracefs(Session& s, const Token* tok) {
  Cache& c = session_cache(s);
  if (!c.tracefs && !c.tracefs_tried) {
    c.tracefs_tried = true;
    std::string root = find_tracefs(c.tracefs_error);
    if (!root.empty()) c.tracefs = std::make_unique<Tracefs>(root);
  }
  if (!c.tracefs)
    throw SemanticError("kernel.trace probes need tracefs: " + c.tracefs_error, tok);
  return *c.tracefs;
}

void build_tracepoint(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  std::string spec = m.str("trace");
  const Token* tok = m.tok("trace");
  if (spec.empty()) throw SemanticError("empty tracepoint name", tok);
  std::string sys_pat = "*", ev_pat = spec;
  if (size_t colon = spec.find(':'); colon != std::string::npos) {
    sys_pat = spec.substr(0, colon);
    ev_pat = spec.substr(colon + 1);
    if (sys_pat.empty() || ev_pat.empty())
      throw SemanticError("invalid tracepoint name '" + spec + "' (expected \"SYSTEM:EVENT\")",
                          tok);
  }
  Tracefs& tfs = session_tracefs(s, tok);
  for (const std::string& sys : tfs.systems()) {
    if (!glob_match(sys_pat, sys)) continue;
    for (const std::string& ev : tfs.events(sys)) {
      if (!glob_match(ev_pat, ev)) continue;
      const TraceEvent* te = tfs.event(sys, ev);
      if (!te) continue;  // not an attachable event (no readable format)
      auto comps = concrete_components(m);
      for (auto& c : comps)
        if (c.functor == "trace") c.str = sys + ":" + ev;
      ResolvedPoint rp;
      rp.point = make_point(s, *m.pp, comps);
      rp.family = "tracepoint";
      rp.params["system"] = sys;
      rp.params["event"] = ev;
      rp.params["id"] = std::to_string(te->id);
      // syscalls:sys_enter_NAME/sys_exit_NAME go through the syscall dispatcher when NAME's
      // number is known (docs/DESIGN.md "Syscall probes share one raw tracepoint").
      if (sys == "syscalls") {
        std::string name = ev.rfind("sys_enter_", 0) == 0 ? ev.substr(10)
                           : ev.rfind("sys_exit_", 0) == 0 ? ev.substr(9) : "";
        int nr = name.empty() ? -1 : syscall_number(name);
        if (nr >= 0) rp.params["syscall_nr"] = std::to_string(nr);
      }
      std::string fields;
      for (auto& f : te->fields) {
        if (f.name.rfind("common_", 0) == 0) continue;
        fields += f.name + ":" + std::to_string(f.offset) + ":" + std::to_string(f.size) + ":" +
                  (f.is_signed ? "1" : "0") + ":" + f.type + ";";
        if (trace_field_visible(f)) rp.target_vars.push_back({"$" + f.name, trace_field_type_text(f)});
      }
      rp.params["fields"] = fields;
      out.push_back(std::move(rp));
    }
  }
}

}  // namespace

void add_tracepoint_patterns(std::vector<Pattern>& out) {
  out.push_back({{{"kernel", ArgKind::None}, {"trace", ArgKind::String}}, build_tracepoint});
}

}  // namespace ukstap::probes
