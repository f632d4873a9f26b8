// -l / -L PATTERN and --dump-functions.
#include <algorithm>
#include <map>
#include <ostream>
#include <set>

#include "driver/passes.h"
#include "parse/parser.h"
#include "passes/derive_probes.h"
#include "passes/elaborate_steps.h"
#include "passes/print_signatures.h"
#include "probes/cache.h"
#include "probes/internal.h"

namespace ukstap {

namespace {

// The pattern as a one-probe script with an empty body, so it goes through the same alias and
// wildcard expansion as any script.
ast::StapFile* pattern_file(Session& s) {
  std::string text = "probe " + s.opts.list_pattern + " {}\n";
  const SourceFile* src = s.add_source("<input>", text, /*is_tapset=*/false);
  parse::MacroLibrary none;
  return parse::parse_file(s, src, none);
}

// Aliases are matched by the pattern itself, but the built-in families are found by their first
// component's name, so a pattern starting with a wildcard (`*`, `**`, `t*.**`) reaches none of
// them. As stap's matcher walks its tree, the wildcard is tried against every family's name
// here: `*` then lists begin, end, error, never (the one-component points), `**` every point
// without a parameter (timer.profile, perf.sw.cpu_clock, process.begin, input.char, ...), and
// also every tracepoint, whose parameter is known (`kernel.trace("*")`, tracefs's
// available_events). Forms that need a path, a PID or a number are not points until given one:
// --dump-probe-types lists them.
std::vector<ast::ProbePoint*> builtin_expansions(Session& s, const ast::ProbePoint& written) {
  std::vector<ast::ProbePoint*> out;
  if (written.components.empty()) return out;
  const std::string& first = written.components[0].functor;
  if (written.components[0].arg || !probes::has_glob(first)) return out;
  bool swallow = first.find("**") != std::string::npos;
  auto with_first = [&](const std::string& family, bool keep_swallowing) {
    auto* q = s.arena.make<ast::ProbePoint>();
    *q = written;
    q->components[0].functor = family;
    if (keep_swallowing)
      q->components.insert(q->components.begin() + 1, ast::ProbePointComponent{"**", nullptr,
                                                                                written.tok});
    out.push_back(q);
  };
  for (const auto& family : probes::builtin_names_after({})) {
    // ukstap's own families (__input: input.stp's implementation) only when asked by name
    if (family.rfind("__", 0) == 0 && first.rfind("__", 0) != 0) continue;
    if (swallow) {
      with_first(family, false);
      with_first(family, true);
    } else if (probes::glob_match(first, family)) {
      with_first(family, false);
    }
  }
  if (swallow && written.components.size() == 1) {
    std::string text = "probe kernel.trace(\"*\") ? {}\n";
    const SourceFile* src = s.add_source("<input>", text, /*is_tapset=*/false);
    parse::MacroLibrary none;
    if (auto* f = parse::parse_file(s, src, none); f && !f->probes.empty())
      out.insert(out.end(), f->probes[0]->locations.begin(), f->probes[0]->locations.end());
  }
  return out;
}

std::string listed_name(const DerivedProbe& p) {
  return p.alias_name ? p.alias_name->str() : p.point->str();
}

}  // namespace

int list_probes(Session& s, std::ostream& out) {
  ast::StapFile* file = pattern_file(s);
  if (!file || file->probes.empty()) return 1;

  // Names first, without symbol resolution, so -l stays fast over every syscall; -L goes on
  // only when something matched (stap prints nothing for a pattern that matches nothing).
  passes::SymbolTable symbols(s);
  std::set<std::string> names;
  std::vector<ast::ProbePoint*> written = file->probes[0]->locations;
  for (auto* loc : file->probes[0]->locations) {
    auto more = builtin_expansions(s, *loc);
    written.insert(written.end(), more.begin(), more.end());
  }
  for (auto* loc : written) {
    std::vector<passes::Derivation> ds;
    try {
      passes::derive_points(s, symbols, *loc, ds);
    } catch (const SemanticError&) {
      continue;
    }
    for (auto& d : ds) {
      // An alias standing for `never` here (syscall.send on x86_64: tapsets/syscalls/
      // socketcall.stp) resolves, but nothing of this kernel fires it: not listed.
      if (d.alias_name && d.resolved.point->str() == "never") continue;
      names.insert(d.alias_name ? d.alias_name->str() : d.resolved.point->str());
    }
  }
  if (names.empty()) {
    // stap prints nothing for no match; but when tracepoints could not even be read (an
    // unprivileged user), say so rather than let "nothing" look like the answer.
    const auto& cache = probes::session_cache(s);
    if (cache.tracefs_tried && !cache.tracefs)
      s.diag.stream() << "ukstap: no match; tracepoints were not searched: " << cache.tracefs_error
                      << "\n";
    return 1;
  }
  if (!s.opts.list_with_vars) {
    for (auto& n : names) out << n << "\n";
    return 0;
  }

  // -L: the alias's locals with their inferred types, then the $variables of a built-in point.
  s.user_file = file;
  if (passes::elaborate_probes(s, {file}) != 0 && s.probes.empty()) return 1;
  // Not listed: the probes a used tapset file brings along (its `probe begin`), which are not
  // matches of the pattern.
  std::set<const ast::Probe*> tapset_own;
  for (auto* f : s.tapset_files)
    if (f) tapset_own.insert(f->probes.begin(), f->probes.end());
  std::map<std::string, std::vector<const DerivedProbe*>> by_name;
  for (auto* p : s.probes)
    if ((!p->source || !p->source->synthetic) && !tapset_own.count(p->source))
      by_name[listed_name(*p)].push_back(p);
  for (auto& [name, probes] : by_name) {
    std::string line = name;
    std::set<std::string> seen;
    for (auto* p : probes)
      for (auto* l : p->locals) {
        if (l->name.rfind("__", 0) == 0 || !seen.insert(l->name).second) continue;
        line += " " + l->name + ":" + ast::type_name(l->type);
      }
    // An alias's body and the code after it see the $variables of the point(s) it stands for:
    // stap -L lists them after the alias's own locals.
    {
      for (const auto& var : probes.front()->target_vars) {
        bool common = std::all_of(probes.begin(), probes.end(), [&](const DerivedProbe* p) {
          return std::find(p->target_vars.begin(), p->target_vars.end(), var) !=
                 p->target_vars.end();
        });
        // $$name/$$provider (.mark, .plt: parts of the point's name) are not listed by stap -L
        if (common && var.first.rfind("$$", 0) != 0) line += " " + var.first + ":" + var.second;
      }
    }
    out << line << "\n";
  }
  return by_name.empty() ? 1 : 0;
}

void dump_functions(Session& s, std::ostream& out) {
  passes::SymbolTable symbols(s);
  passes::UsedSymbols used;
  for (auto* f : s.tapset_files)
    for (auto* fn : f ? f->functions : std::vector<ast::Function*>{})
      if (!fn->is_private && used.function_set.insert(fn).second) {
        fn->from_tapset = true;
        used.functions.push_back(fn);
      }
  size_t next = 0;
  passes::resolve_pending_functions(s, symbols, used, next);
  s.probes.clear();
  s.functions = used.functions;
  passes::infer_types(s);
  std::vector<std::string> lines;
  for (auto* fn : used.functions) {
    if (fn->is_private || !fn->from_tapset) continue;
    std::string line = passes::function_signature(*fn);
    for (auto& pragma : fn->pragmas) {
      bool privilege = pragma.find("unprivileged") != std::string::npos;
      if (privilege || s.opts.verbose > 0) line += " /* " + pragma + " */";
    }
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  for (auto& l : lines) out << l << "\n";
}

}  // namespace ukstap
