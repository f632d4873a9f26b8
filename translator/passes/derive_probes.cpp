#include "passes/derive_probes.h"

#include <set>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "passes/stap_tapset_names.h"

namespace ukstap::passes {

namespace {

constexpr int kMaxAliasDepth = 32;

bool args_match(const ast::Expression* pat, const ast::Expression* name) {
  if (!pat && !name) return true;
  if (!pat || !name) return false;
  auto* pn = dynamic_cast<const ast::LiteralNumber*>(pat);
  auto* nn = dynamic_cast<const ast::LiteralNumber*>(name);
  if (pn && nn) return pn->value == nn->value;
  auto* ps = dynamic_cast<const ast::LiteralString*>(pat);
  auto* ns = dynamic_cast<const ast::LiteralString*>(name);
  if (ps && ns) return probes::glob_match(ps->value, ns->value);
  return false;
}

bool match_from(const ast::ProbePoint& pat, size_t pi, const ast::ProbePoint& name, size_t ni) {
  if (pi == pat.components.size()) return ni == name.components.size();
  const auto& pc = pat.components[pi];
  if (pc.functor == "**" && !pc.arg) {
    // `**` swallows zero or more whole components.
    for (size_t k = ni; k <= name.components.size(); ++k)
      if (match_from(pat, pi + 1, name, k)) return true;
    return false;
  }
  if (ni == name.components.size()) return false;
  const auto& nc = name.components[ni];
  if (!probes::glob_match(pc.functor, nc.functor)) return false;
  if (!args_match(pc.arg, nc.arg)) return false;
  return match_from(pat, pi + 1, name, ni + 1);
}

// How many leading components of `pat` match some alias name's leading components (for the
// "probe point mismatch" diagnostic), with the candidate names at the first mismatching depth.
size_t matching_prefix(const ast::ProbePoint& pat, const SymbolTable& symbols,
                       std::vector<std::string>& candidates) {
  size_t best = 0;
  std::vector<std::vector<std::string>> by_depth(pat.components.size() + 1);
  std::set<std::pair<size_t, std::string>> seen;
  for (auto& a : symbols.aliases()) {
    for (auto* name : a.alias->alias_names) {
      size_t d = 0;
      while (d < pat.components.size() && d < name->components.size() &&
             probes::glob_match(pat.components[d].functor, name->components[d].functor))
        ++d;
      best = std::max(best, d);
      // The names available right after the matched prefix.
      if (d < name->components.size() && d <= pat.components.size() &&
          seen.insert({d, name->components[d].functor}).second)
        by_depth[d].push_back(name->components[d].functor);
    }
  }
  candidates = best < by_depth.size() ? by_depth[best] : std::vector<std::string>{};
  return best;
}

struct Context {
  std::vector<const ast::ProbePoint*> chain;  // outer points, written one first
  std::vector<BodyPiece> prologues;
  std::vector<BodyPiece> epilogues;
  std::vector<const ast::Expression*> conditions;
  const ast::ProbePoint* alias_name = nullptr;
};

// An alias's bodies around the handler: deeper aliases run their prologue first and their
// epilogue last (both forms: `probe a = b { prologue }, { epilogue }` and `probe a += b { }`).
void add_alias_bodies(Context& inner, const auto& entry) {
  BodyPiece piece{entry.alias->body, entry.file};
  if (entry.alias->body) {
    if (entry.alias->epilogue_style)
      inner.epilogues.push_back(piece);
    else
      inner.prologues.insert(inner.prologues.begin(), piece);
  }
  if (entry.alias->epilogue) inner.epilogues.push_back({entry.alias->epilogue, entry.file});
}

void derive(Session& s, const SymbolTable& symbols, const ast::ProbePoint& pp, Context ctx,
            int depth, std::vector<Derivation>& out);

// Resolves the locations of one probe or alias body in order, honouring `?` and `!`.
void derive_locations(Session& s, const SymbolTable& symbols,
                      const std::vector<ast::ProbePoint*>& locations, const Context& ctx,
                      int depth, std::vector<Derivation>& out) {
  for (auto* loc : locations) {
    size_t before = out.size();
    try {
      derive(s, symbols, *loc, ctx, depth, out);
    } catch (const SemanticError&) {
      if (!loc->optional) throw;
      out.resize(before);
    }
    if (loc->sufficient && out.size() > before) break;
  }
}

// SystemTap's alias suffixes (langref, "Alias suffixes"): when only the leading components of
// a point name an alias (`miscellany.return` for `probe miscellany = syscall.{open,close}`), the
// rest is appended to each of the alias's points (syscall.open.return, syscall.close.return),
// which are then resolved, and the alias's prologue/epilogue run as for the alias itself. The
// longest alias prefix wins; a whole-name match (an alias named miscellany.return) was tried
// first. Returns false when no prefix names an alias.
bool derive_alias_suffix(Session& s, const SymbolTable& symbols, const ast::ProbePoint& pp,
                         const Context& ctx, int depth, std::vector<Derivation>& out) {
  for (size_t k = pp.components.size(); k-- > 1;) {
    ast::ProbePoint prefix;
    prefix.components.assign(pp.components.begin(), pp.components.begin() + k);
    prefix.tok = pp.tok;
    bool matched = false;
    for (auto& entry : symbols.aliases()) {
      for (auto* name : entry.alias->alias_names) {
        if (!point_matches(prefix, *name)) continue;
        matched = true;
        Context inner = ctx;
        inner.chain.push_back(name);
        if (!inner.alias_name) inner.alias_name = name;
        add_alias_bodies(inner, entry);
        std::vector<ast::ProbePoint*> suffixed;
        for (auto* loc : entry.alias->locations) {
          auto* q = s.arena.make<ast::ProbePoint>();
          *q = *loc;
          q->components.insert(q->components.end(), pp.components.begin() + k,
                               pp.components.end());
          suffixed.push_back(q);
        }
        size_t before = out.size();
        derive_locations(s, symbols, suffixed, inner, depth + 1, out);
        if (out.size() == before && !pp.has_wildcard() && !pp.optional)
          throw SemanticError("no match", name->tok ? name->tok : pp.tok);
      }
    }
    if (matched) return true;
  }
  return false;
}

void derive(Session& s, const SymbolTable& symbols, const ast::ProbePoint& pp, Context ctx,
            int depth, std::vector<Derivation>& out) {
  if (depth > kMaxAliasDepth)
    throw SemanticError("recursive loop in alias expansion", pp.tok);
  if (pp.condition) ctx.conditions.push_back(pp.condition);
  ctx.chain.push_back(&pp);

  // A point whose first component is plain text (kernel.trace("syscalls:sys_enter_read"), the
  // 361 points syscall.* derives) matches only names with that first component: compared
  // first, as match_from would, without its glob test for each of the ~9,000 alias names
  // (3 M glob tests, half of pass 2 for `probe syscall.*`).
  const std::string* head = nullptr;
  if (!pp.components.empty() && !probes::has_glob(pp.components[0].functor))
    head = &pp.components[0].functor;
  bool matched_alias = false;
  for (auto& entry : symbols.aliases()) {
    for (auto* name : entry.alias->alias_names) {
      if (head && !name->components.empty() && name->components[0].functor != *head) continue;
      if (!point_matches(pp, *name)) continue;
      matched_alias = true;
      Context inner = ctx;
      if (inner.chain.back() != name && name->str() != pp.str()) inner.chain.push_back(name);
      if (!inner.alias_name) inner.alias_name = name;
      add_alias_bodies(inner, entry);
      size_t before = out.size();
      try {
        derive_locations(s, symbols, entry.alias->locations, inner, depth + 1, out);
      } catch (const SemanticError&) {
        // -l/-L with a wildcard lists what this machine serves: an alias it cannot resolve
        // (stap.pass0 without SystemTap's stap installed) is left out, as stap's listing mode
        // does, instead of failing the whole pattern and dropping every other alias it matched.
        if (s.opts.list_pattern.empty() || !pp.has_wildcard()) throw;
        out.resize(before);
        continue;
      }
      if (out.size() == before && !pp.has_wildcard() && !pp.optional)
        throw SemanticError("no match", name->tok ? name->tok : pp.tok);
    }
  }
  if (matched_alias) return;

  const auto& first = pp.components.empty() ? std::string() : pp.components[0].functor;
  if (const char* why = stap_point_unavailable(pp.str()))
    throw SemanticError("probe point " + pp.str() + " is not available: " + why, pp.tok);
  if (!probes::is_builtin_family(first) && derive_alias_suffix(s, symbols, pp, ctx, depth, out))
    return;
  if (probes::is_builtin_family(first)) {
    std::vector<probes::ResolvedPoint> points;
    try {
      probes::resolve_builtin(s, pp, points);
    } catch (const SemanticError& e) {
      throw SemanticError("while resolving probe point", pp.tok, e);
    }
    if (points.empty() && !pp.optional)
      throw SemanticError("while resolving probe point", pp.tok, SemanticError("no match"));
    for (auto& rp : points) {
      Derivation d;
      d.resolved = rp;
      d.chain.assign(ctx.chain.rbegin(), ctx.chain.rend());
      d.alias_name = ctx.alias_name;
      d.prologues = ctx.prologues;
      d.epilogues = ctx.epilogues;
      d.conditions = ctx.conditions;
      out.push_back(std::move(d));
    }
    return;
  }

  // Neither an alias nor a built-in: say which component is wrong and what would be close.
  std::vector<std::string> candidates;
  size_t depth_ok = matching_prefix(pp, symbols, candidates);
  if (depth_ok == 0) {
    for (const auto* fam : {"begin", "end", "error", "never", "timer", "kernel", "process",
                            "perf", "syscall", "syscall_any"})
      candidates.push_back(fam);
  }
  // An alias family and a probe family can share a name (syscall): suggest each name once.
  {
    std::set<std::string> once;
    std::vector<std::string> unique;
    for (auto& c : candidates)
      if (once.insert(c).second) unique.push_back(c);
    candidates.swap(unique);
  }
  const Token* first_tok = pp.components.empty() ? pp.tok : pp.components[0].tok;
  if (depth_ok == 0 && !pp.components.empty()) {
    // A SystemTap tapset alias ukstap does not define: name it and where SystemTap has it.
    if (const char* tapset = stap_alias_tapset(pp.components[0].functor))
      throw SemanticError("while resolving probe point", first_tok,
                          SemanticError("probe point mismatch: " + pp.str() +
                                            " is a probe alias of SystemTap's tapset " + tapset +
                                            ", which ukstap's tapsets do not define",
                                        first_tok));
  }
  size_t at = std::min(depth_ok, pp.components.empty() ? 0 : pp.components.size() - 1);
  const Token* bad = pp.components.empty() ? pp.tok : pp.components[at].tok;
  std::string what = pp.components.empty() ? "" : pp.components[at].functor;
  auto similar = closest_names(what, candidates);
  std::string msg = "probe point mismatch";
  if (!similar.empty()) msg += " (similar: " + join(similar, ", ") + ")";
  if (pp.has_wildcard() && depth_ok == pp.components.size()) msg = "no match";
  throw SemanticError("while resolving probe point", pp.components.empty() ? pp.tok
                                                                           : pp.components[0].tok,
                      SemanticError(msg, bad ? bad : pp.tok));
}

}  // namespace

bool point_matches(const ast::ProbePoint& pattern, const ast::ProbePoint& name) {
  return match_from(pattern, 0, name, 0);
}

// Points this kernel cannot serve (probes::NetfilterPoint::unservable): under a wildcard
// (`netfilter.*.*`) they are left out when others remain, said with -v; otherwise the first
// one's reason is the error.
void drop_unservable(Session& s, const ast::ProbePoint& written, std::vector<Derivation>& out,
                     size_t before) {
  auto why = [](const Derivation& d) -> const std::string* {
    auto* nf = d.resolved.family.get<probes::NetfilterPoint>();
    return nf && !nf->unservable.empty() ? &nf->unservable : nullptr;
  };
  const std::string* first = nullptr;
  size_t servable = 0;
  for (size_t i = before; i < out.size(); ++i) {
    if (const std::string* w = why(out[i])) first = first ? first : w;
    else ++servable;
  }
  if (!first) return;
  if (!written.has_wildcard() || servable == 0) throw SemanticError(*first, written.tok);
  std::vector<Derivation> kept(out.begin(), out.begin() + before);
  for (size_t i = before; i < out.size(); ++i) {
    if (!why(out[i])) {
      kept.push_back(std::move(out[i]));
      continue;
    }
    if (s.opts.verbose > 0)
      s.diag.stream() << "skipping " << out[i].resolved.point->str() << " (matched by "
                      << written.str() << "): " << *why(out[i]) << "\n";
  }
  out.swap(kept);
}

void derive_points(Session& s, const SymbolTable& symbols, const ast::ProbePoint& written,
                   std::vector<Derivation>& out) {
  size_t before = out.size();
  try {
    derive(s, symbols, written, Context{}, 0, out);
    drop_unservable(s, written, out, before);
  } catch (const SemanticError& e) {
    if (written.optional) {
      out.resize(before);
      return;
    }
    // Wrap a bare cause in the chain stap prints; a failure inside an alias's own points
    // (a tapset line) also gets the script's point first, so the chain starts at the user's
    // probe.
    const Token* at = written.components.empty() ? written.tok : written.components[0].tok;
    if (std::string(e.what()) == "while resolving probe point" && e.tok == at) throw;
    throw SemanticError("while resolving probe point", at, e);
  }
}

}  // namespace ukstap::passes
