// kernel.trace("SYSTEM:EVENT"): tracepoints from tracefs, globs allowed in both parts; "EVENT"
// alone means any system.
#include <string>

#include "btf/kernel_btf.h"
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

// Whether the event's record is what the dispatcher rebuilds from the registers (runtime/bpf/
// stp_bpf_probes.h): __syscall_nr at 8, then up to six 8-byte arguments from 16 (sys_enter) or
// an 8-byte ret at 16 (sys_exit), nothing else. A kernel whose syscall events carry more (user
// strings copied into the record, say) keeps the per-event tracepoints.
bool syscall_record_layout(const TraceEvent& te, bool exit) {
  int args = 0;
  for (const auto& f : te.fields) {
    if (f.name.rfind("common_", 0) == 0) continue;
    if (f.name == "__syscall_nr") {
      if (f.offset != 8 || f.size != 4) return false;
    } else if (exit) {
      if (f.name != "ret" || f.offset != 16 || f.size != 8) return false;
    } else {
      if (f.offset != 16 + 8 * args || f.size != 8 || args >= 6) return false;
      ++args;
    }
  }
  return true;
}

// The tracepoint's C arguments ($prev, $next of sched_switch: struct task_struct*), from
// kernel BTF; none when the kernel has no BTF or BTF no prototype for the event (syscalls:*).
// An argument named as a format field ($prev_state) is listed once, as the field.
void add_btf_args(TracepointPoint& tp, ResolvedPoint& rp) {
  if (tp.system == "syscalls") return;  // ftrace's syscall events have no C prototype
  std::string why;
  const btf::KernelBtf* k = btf::KernelBtf::get(why);
  if (!k) return;
  for (const auto& a : btf::tracepoint_args(*k, tp.event)) {
    tp.btf_args.push_back({a.name, a.index, a.type_id});
    bool is_field = false;
    for (const auto& f : tp.fields) is_field |= f.name == a.name;
    if (!is_field) {
      rp.target_vars.push_back({"$" + a.name, k->describe(a.type_id)});
      continue;
    }
    // A pointer field the record keeps as `void *` (timer_expire_entry's timer): -L shows
    // the argument's type, which $timer->function reads through.
    for (auto& [n, type] : rp.target_vars)
      if (n == "$" + a.name && type.find('*') != std::string::npos) type = k->describe(a.type_id);
  }
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
  // Plain names (the 361 points of syscall.*) are compared, not glob-matched against each of
  // ~2,000 events: a tenth of pass 2's time went to the glob test of the same pattern.
  const bool sys_plain = !has_glob(sys_pat), ev_plain = !has_glob(ev_pat);
  for (const std::string& sys : tfs.systems()) {
    if (sys_plain ? sys != sys_pat : !glob_match(sys_pat, sys)) continue;
    for (const std::string& ev : tfs.events(sys)) {
      if (ev_plain ? ev != ev_pat : !glob_match(ev_pat, ev)) continue;
      const TraceEvent* te = tfs.event(sys, ev);
      if (!te) continue;  // not an attachable event (no readable format)
      auto comps = concrete_components(m);
      for (auto& c : comps)
        if (c.functor == "trace") c.str = sys + ":" + ev;
      ResolvedPoint rp;
      rp.point = make_point(s, *m.pp, comps);
      TracepointPoint tp;
      tp.system = sys;
      tp.event = ev;
      tp.id = te->id;
      // syscalls:sys_enter_NAME/sys_exit_NAME go through the syscall dispatcher when NAME's
      // number is known (docs/DESIGN.md "Syscall probes share one raw tracepoint").
      if (sys == "syscalls") {
        bool exit = ev.rfind("sys_exit_", 0) == 0;
        std::string name = ev.rfind("sys_enter_", 0) == 0 ? ev.substr(10) : exit ? ev.substr(9) : "";
        int nr = name.empty() ? -1 : syscall_number(name, s.tapset_dirs());
        if (nr >= 0 && syscall_record_layout(*te, exit)) tp.syscall_nr = nr;
      }
      for (auto& f : te->fields) {
        if (f.name.rfind("common_", 0) == 0) continue;
        tp.fields.push_back(f);
        if (trace_field_visible(f)) rp.target_vars.push_back({"$" + f.name, trace_field_type_text(f)});
      }
      add_btf_args(tp, rp);
      rp.family = std::move(tp);
      out.push_back(std::move(rp));
    }
  }
}

}  // namespace

void add_tracepoint_patterns(std::vector<Pattern>& out) {
  out.push_back({{{"kernel", ArgKind::None}, {"trace", ArgKind::String}}, build_tracepoint});
}

}  // namespace ukstap::probes
