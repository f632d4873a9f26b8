// Dispatch of built-in probe points: the pattern table of all families, matching a user's point
// (with globs in functors) against it, and the diagnostics when nothing fits.
#include "probes/provider.h"

#include <algorithm>
#include <functional>
#include <ostream>
#include <set>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/cache.h"
#include "probes/internal.h"

namespace ukstap::probes {

// ------------------------------------------------------------------------------- small helpers

std::string PatternComponent::str() const {
  switch (arg) {
    case ArgKind::None: return name;
    case ArgKind::Number: return name + "(number)";
    case ArgKind::String: return name + "(string)";
  }
  return name;
}

std::string Pattern::str() const {
  std::string out;
  for (auto& c : comps) out += (out.empty() ? "" : ".") + c.str();
  return out;
}

const ast::Expression* Match::arg(const std::string& name) const {
  for (size_t i = 0; i < comps.size(); ++i)
    if (pattern->comps[i].name == name) return comps[i] ? comps[i]->arg : nullptr;
  return nullptr;
}

bool Match::has(const std::string& name) const {
  for (auto& c : pattern->comps)
    if (c.name == name) return true;
  return false;
}

int64_t Match::num(const std::string& name, int64_t fallback) const {
  if (auto* n = dynamic_cast<const ast::LiteralNumber*>(arg(name))) return n->value;
  return fallback;
}

std::string Match::str(const std::string& name, const std::string& fallback) const {
  if (auto* s = dynamic_cast<const ast::LiteralString*>(arg(name))) return s->value;
  return fallback;
}

const Token* Match::tok(const std::string& name) const {
  for (size_t i = 0; i < comps.size(); ++i)
    if (pattern->comps[i].name == name && comps[i]) {
      if (comps[i]->arg && comps[i]->arg->tok) return comps[i]->arg->tok;
      if (comps[i]->tok) return comps[i]->tok;
    }
  return pp->tok;
}

ast::ProbePoint* make_point(Session& s, const ast::ProbePoint& like,
                            const std::vector<PointComponent>& comps) {
  auto* p = s.arena.make<ast::ProbePoint>();
  p->tok = like.tok;
  p->optional = like.optional;
  p->sufficient = like.sufficient;
  for (auto& c : comps) {
    ast::ProbePointComponent pc;
    pc.functor = c.functor;
    pc.tok = c.tok ? c.tok : like.tok;
    if (c.arg == ArgKind::Number) {
      auto* n = s.arena.node<ast::LiteralNumber>(pc.tok);
      n->value = c.num;
      n->type = ast::Type::Long;
      pc.arg = n;
    } else if (c.arg == ArgKind::String) {
      auto* n = s.arena.node<ast::LiteralString>(pc.tok);
      n->value = c.str;
      n->type = ast::Type::String;
      pc.arg = n;
    }
    p->components.push_back(std::move(pc));
  }
  return p;
}

std::vector<PointComponent> concrete_components(const Match& m) {
  std::vector<PointComponent> out;
  for (size_t i = 0; i < m.pattern->comps.size(); ++i) {
    PointComponent c;
    c.functor = m.pattern->comps[i].name;
    c.arg = m.pattern->comps[i].arg;
    const ast::ProbePointComponent* u = m.comps[i];
    c.tok = u ? u->tok : m.pp->tok;
    if (u && u->arg) {
      if (auto* n = dynamic_cast<const ast::LiteralNumber*>(u->arg)) c.num = n->value;
      if (auto* st = dynamic_cast<const ast::LiteralString*>(u->arg)) c.str = st->value;
    }
    out.push_back(std::move(c));
  }
  return out;
}

Cache& session_cache(Session& s) {
  if (!s.probe_cache) s.probe_cache = std::make_shared<Cache>();
  return *s.probe_cache;
}

// ------------------------------------------------------------------------------------ patterns

const std::vector<Pattern>& all_patterns() {
  static const std::vector<Pattern> patterns = [] {
    std::vector<Pattern> v;
    add_begin_end_patterns(v);
    add_timer_patterns(v);
    add_tracepoint_patterns(v);
    add_process_patterns(v);
    add_perf_patterns(v);
    add_procfs_patterns(v);
    add_input_patterns(v);
    add_netfilter_patterns(v);
    add_kernel_function_patterns(v);
    return v;
  }();
  return patterns;
}

namespace {

// Families this kernel or this tool cannot serve; their first functor still counts as built-in
// so the elaborator hands them to us and the user gets the reason.
const std::set<std::string> kUnservedFamilies = {"java", "python2", "python3", "hwbreakpoint"};

bool kind_ok(ArgKind k, const ast::Expression* e) {
  switch (k) {
    case ArgKind::None: return e == nullptr;
    case ArgKind::Number: return dynamic_cast<const ast::LiteralNumber*>(e) != nullptr;
    case ArgKind::String: return dynamic_cast<const ast::LiteralString*>(e) != nullptr;
  }
  return false;
}

bool functor_ok(const std::string& user, const std::string& name) {
  return user == "**" || glob_match_dotted(user, name);
}

// Matches user components [ui..) against pattern components [pi..). A user "**" (no argument)
// swallows one or more pattern components that take no argument... or any: like stap, `**`
// may stand for whole components, arguments included only when the pattern needs none.
bool match_rec(const ast::ProbePoint& pp, size_t ui, const Pattern& pat, size_t pi,
               std::vector<const ast::ProbePointComponent*>& comps) {
  if (ui == pp.components.size()) return pi == pat.comps.size();
  if (pi == pat.comps.size()) return false;
  const auto& u = pp.components[ui];
  if (u.functor == "**" && !u.arg) {
    // swallow k >= 1 argument-less pattern components
    for (size_t k = pi; k < pat.comps.size() && pat.comps[k].arg == ArgKind::None; ++k) {
      comps[k] = &u;
      if (match_rec(pp, ui + 1, pat, k + 1, comps)) return true;
    }
    return false;
  }
  if (!functor_ok(u.functor, pat.comps[pi].name) || !kind_ok(pat.comps[pi].arg, u.arg))
    return false;
  comps[pi] = &u;
  return match_rec(pp, ui + 1, pat, pi + 1, comps);
}

// How many leading user components some pattern accepts (functor and argument kind).
size_t matched_prefix(const ast::ProbePoint& pp, std::vector<std::string>& next_names,
                      std::vector<std::string>& same_name_keys) {
  size_t best = 0;
  for (auto& pat : all_patterns()) {
    size_t d = 0;
    while (d < pp.components.size() && d < pat.comps.size() &&
           pp.components[d].functor != "**" &&
           functor_ok(pp.components[d].functor, pat.comps[d].name) &&
           kind_ok(pat.comps[d].arg, pp.components[d].arg))
      ++d;
    best = std::max(best, d);
  }
  std::set<std::string> names, keys;
  for (auto& pat : all_patterns()) {
    size_t d = 0;
    while (d < best && d < pat.comps.size() &&
           functor_ok(pp.components[d].functor, pat.comps[d].name) &&
           kind_ok(pat.comps[d].arg, pp.components[d].arg))
      ++d;
    if (d != best || best >= pat.comps.size()) continue;
    names.insert(pat.comps[best].name);
    if (best < pp.components.size() &&
        functor_ok(pp.components[best].functor, pat.comps[best].name))
      keys.insert(pat.comps[best].str());
  }
  next_names.assign(names.begin(), names.end());
  same_name_keys.assign(keys.begin(), keys.end());
  return best;
}

std::string arg_kind_text(const ast::Expression* e) {
  if (!e) return "no argument";
  if (dynamic_cast<const ast::LiteralNumber*>(e)) return "a number";
  return "a string";
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

[[noreturn]] void throw_mismatch(const ast::ProbePoint& pp) {
  std::vector<std::string> next, keys;
  size_t d = matched_prefix(pp, next, keys);
  if (d >= pp.components.size()) {
    throw SemanticError("probe point is incomplete (it may continue with: " + join(next) + ")",
                        pp.components.empty() ? pp.tok : pp.components.back().tok);
  }
  const auto& u = pp.components[d];
  if (!keys.empty()) {
    // The name is right, the argument is not.
    throw SemanticError("probe point mismatch: '" + u.functor + "' does not take " +
                            arg_kind_text(u.arg) + " (similar: " + join(keys) + ")",
                        u.tok ? u.tok : pp.tok);
  }
  std::string similar = suggest_similar(u.functor, next);
  throw SemanticError(
      similar.empty() ? "probe point mismatch" : "probe point mismatch (similar: " + similar + ")",
      u.tok ? u.tok : pp.tok);
}

std::string instead_text() {
  return "use kernel.trace(\"SYSTEM:EVENT\") tracepoints (stap -l 'kernel.trace(\"*\")') or the "
         "syscall.* aliases instead";
}

// Families (or members of kernel.*) this kernel cannot serve: throws with the reason.
void reject_unserved(const ast::ProbePoint& pp) {
  if (pp.components.empty()) return;
  const auto& c0 = pp.components[0];
  const std::string& f = c0.functor;
  std::string second = pp.components.size() > 1 ? pp.components[1].functor : "";
  const Token* tok = c0.tok ? c0.tok : pp.tok;
  auto kprobe_error = [&](const std::string& what) -> SemanticError {
    if (!kprobes_available())
      return SemanticError(what + " probes need kprobes, which are not available on this kernel "
                                  "(no CONFIG_KPROBES: tracefs has no kprobe_events and there is "
                                  "no kprobe perf PMU); " + instead_text(),
                           tok);
    return SemanticError(what + " probes (kprobes) are not supported by ukstap yet; " +
                             instead_text(),
                         tok);
  };
  // kernel.function, kprobe.function, module(M).function: probes/kernel_function_family.cpp
  if ((f == "kprobe" || f == "module") && !second.empty() && !has_glob(second) && second != "function")
    throw kprobe_error(f + (f == "module" ? "(...)." : ".") + second);
  if (f == "kernel" && !second.empty() && !has_glob(second) && second != "trace" &&
      second != "function") {
    if (second == "statement")
      throw kprobe_error("kernel." + second);
    if (second == "data")
      throw SemanticError("kernel.data probes need hardware breakpoints registered from a kernel "
                          "module, and this kernel has no loadable modules (BPF only); " +
                              instead_text(),
                          tok);
    if (second == "mark")
      throw SemanticError("kernel.mark probes (kernel markers) no longer exist in Linux; " +
                              instead_text(),
                          tok);
  }
  if (f == "hwbreakpoint")
    throw SemanticError(f + " probes need a loadable kernel module, and this kernel has no "
                            "loadable modules (ukstap runs probes as BPF programs)",
                        tok);
  if (f == "java" || f == "python2" || f == "python3")
    throw SemanticError(f + " probes are not supported by ukstap", tok);
}

}  // namespace

void resolve_builtin(Session& s, const ast::ProbePoint& pp, std::vector<ResolvedPoint>& out) {
  if (pp.components.empty()) throw SemanticError("empty probe point", pp.tok);
  reject_unserved(pp);
  bool any = false;
  for (auto& pat : all_patterns()) {
    std::vector<const ast::ProbePointComponent*> comps(pat.comps.size(), nullptr);
    if (!match_rec(pp, 0, pat, 0, comps)) continue;
    any = true;
    Match m{&pp, &pat, comps};
    pat.build(s, m, out);
  }
  if (!any) throw_mismatch(pp);
}

bool is_builtin_family(const std::string& functor) {
  if (kUnservedFamilies.count(functor)) return true;
  for (auto& pat : all_patterns())
    if (pat.comps[0].name == functor) return true;
  return false;
}

void dump_probe_types(std::ostream& out) {
  std::set<std::string> lines;
  for (auto& pat : all_patterns()) lines.insert(pat.str());
  for (auto& l : lines) out << l << "\n";
}

std::vector<std::string> builtin_names_after(const std::vector<std::string>& functors) {
  std::set<std::string> names;
  for (auto& pat : all_patterns()) {
    if (pat.comps.size() <= functors.size()) continue;
    bool ok = true;
    for (size_t i = 0; i < functors.size() && ok; ++i) ok = pat.comps[i].name == functors[i];
    if (ok) names.insert(pat.comps[functors.size()].name);
  }
  if (functors.empty()) names.insert(kUnservedFamilies.begin(), kUnservedFamilies.end());
  return {names.begin(), names.end()};
}

}  // namespace ukstap::probes
