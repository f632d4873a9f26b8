// Pass 2: elaboration. See elaborate_steps.h for the order of the steps.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "ast/clone.h"
#include "driver/passes.h"
#include "parse/parser.h"
#include "passes/analyses.h"
#include "passes/derive_probes.h"
#include "passes/elaborate_steps.h"
#include "passes/print_signatures.h"

namespace ukstap {

namespace passes {

namespace {

using PieceOwners = std::vector<std::pair<const ast::Statement*, ast::StapFile*>>;

// Makes the derived probes of one probe of the script.
int derive_probe(Session& s, const SymbolTable& symbols, ast::Probe* probe,
                 ast::StapFile* file, PieceOwners& owners, std::vector<DerivedProbe*>& out) {
  int errors = 0;
  for (auto* loc : probe->locations) {
    std::vector<Derivation> ds;
    try {
      derive_points(s, symbols, *loc, ds);
    } catch (const SemanticError& e) {
      s.diag.semantic_error(e);
      ++errors;
      continue;
    }
    for (auto& d : ds) {
      auto* dp = new_derived_probe(s);
      dp->point = d.resolved.point;
      dp->chain = d.chain;
      dp->alias_name = d.alias_name;
      dp->source = probe;
      dp->family = d.resolved.family;
      dp->target_vars = d.resolved.target_vars;
      dp->body = s.arena.node<ast::Block>(probe->body ? probe->body->tok : loc->tok);
      auto add_piece = [&](const ast::Block* b, ast::StapFile* f) {
        ast::Block* copy = ast::clone(s.arena, b);
        dp->body->statements.push_back(copy);
        owners.push_back({copy, f});
      };
      for (auto& pro : d.prologues) add_piece(pro.block, pro.file);
      if (probe->body) add_piece(probe->body, file);
      for (auto& epi : d.epilogues) add_piece(epi.block, epi.file);
      for (auto* cond : d.conditions) {
        ast::Expression* c = ast::clone(s.arena, cond);
        if (!dp->condition) {
          dp->condition = c;
        } else {
          auto* both = s.arena.node<ast::LogicalAndExpr>(c->tok);
          both->left = dp->condition;
          both->right = c;
          dp->condition = both;
        }
      }
      out.push_back(dp);
    }
    if (loc->sufficient && !ds.empty()) break;
  }
  return errors;
}

// -T SECONDS: SystemTap adds `probe timer.ms(S*1000) { exit() }` before the user's probes.
ast::StapFile* timeout_probe(Session& s) {
  if (s.opts.timeout_s <= 0) return nullptr;
  long ms = std::lround(s.opts.timeout_s * 1000);
  std::string text = "probe timer.ms(" + std::to_string(ms) + ") { exit() }\n";
  const SourceFile* src = s.add_source("<timeout>", text, /*is_tapset=*/true);
  parse::MacroLibrary none;
  return parse::parse_file(s, src, none);
}

void mark_origins(Session& s) {
  for (auto* f : s.tapset_files) {
    if (!f) continue;
    for (auto* fn : f->functions) fn->from_tapset = true;
    for (auto* g : f->globals) {
      g->from_tapset = true;
      g->is_global = true;
    }
  }
  if (s.user_file)
    for (auto* g : s.user_file->globals) g->is_global = true;
}

// Globals in declaration order, the user's first; functions sorted by name, as stap -p2 does.
void publish(Session& s, const SymbolTable& symbols, UsedSymbols& used) {
  s.globals.clear();
  for (auto* f : symbols.files())
    for (auto* g : f->globals)
      if (used.global_set.count(g)) s.globals.push_back(g);
  s.functions = used.functions;
  std::stable_sort(s.functions.begin(), s.functions.end(),
                   [](auto* a, auto* b) { return a->name < b->name; });
  // File-level embedded code of every tapset that contributes something in use.
  s.embeds.clear();
  for (auto* f : symbols.files()) {
    if (!f->is_tapset || f->embeds.empty()) continue;
    bool contributes = false;
    for (auto* fn : f->functions) contributes |= used.function_set.count(fn) > 0;
    for (auto* g : f->globals) contributes |= used.global_set.count(g) > 0;
    if (contributes) s.embeds.insert(s.embeds.end(), f->embeds.begin(), f->embeds.end());
  }
}

int resolve_all(Session& s, const SymbolTable& symbols, const std::vector<DerivedProbe*>& probes,
                const PieceOwners& owners, UsedSymbols& used, size_t& next_fn) {
  int errors = 0;
  for (auto* dp : probes) errors += resolve_probe_symbols(s, symbols, *dp, owners, used);
  errors += resolve_pending_functions(s, symbols, used, next_fn);
  return errors;
}

// As SystemTap: a tapset file that contributes a function or global in use brings its own
// probes too (target_set.stp's fork tracking, ctime.stp's time-zone begin probe). Repeats until
// no more file is pulled in, as the pulled probes may use other tapsets. `pulled` starts with
// the files whose probes are already elaborated (@entry's synthetic file: pulling it again
// would add its entry probes a second time, without the operands add_entry_probes filled in).
int pull_tapset_probes(Session& s, const SymbolTable& symbols, PieceOwners& owners,
                       UsedSymbols& used, size_t& next_fn,
                       std::vector<const ast::StapFile*> pulled) {
  int errors = 0;
  for (bool more = true; more;) {
    more = false;
    for (auto* f : symbols.files()) {
      if (!f->is_tapset || f->probes.empty()) continue;
      if (std::find(pulled.begin(), pulled.end(), f) != pulled.end()) continue;
      bool contributes = false;
      for (auto* fn : f->functions) contributes |= used.function_set.count(fn) > 0;
      for (auto* g : f->globals) contributes |= used.global_set.count(g) > 0;
      if (!contributes) continue;
      pulled.push_back(f);
      std::vector<DerivedProbe*> derived;
      for (auto* p : f->probes) errors += derive_probe(s, symbols, p, f, owners, derived);
      errors += resolve_all(s, symbols, derived, owners, used, next_fn);
      s.probes.insert(s.probes.end(), derived.begin(), derived.end());
      more = true;
    }
  }
  return errors;
}

}  // namespace

// Elaborates `probes` from `files` (the user's script, or a synthetic one for -L) into s.
int elaborate_probes(Session& s, const std::vector<ast::StapFile*>& files, bool optimize) {
  mark_origins(s);
  SymbolTable symbols(s);
  PieceOwners owners;
  UsedSymbols used;
  size_t next_fn = 0;
  int errors = 0;

  std::vector<DerivedProbe*> derived;
  for (auto* f : files)
    for (auto* p : f->probes) errors += derive_probe(s, symbols, p, f, owners, derived);
  size_t files_before = s.tapset_files.size();
  errors += add_entry_probes(s, derived, owners);
  if (s.tapset_files.size() != files_before) symbols = SymbolTable(s);  // + @entry's globals
  s.probes = derived;
  errors += resolve_all(s, symbols, s.probes, owners, used, next_fn);
  errors += pull_tapset_probes(s, symbols, owners, used, next_fn,
                               {s.tapset_files.begin() + files_before, s.tapset_files.end()});
  publish(s, symbols, used);
  if (errors) return errors;

  errors += check_semantics(s);
  errors += infer_types(s);
  if (errors) return errors;

  auto display = add_global_display(s, symbols);
  if (!display.empty()) {
    errors += resolve_all(s, symbols, display, owners, used, next_fn);
    s.probes.insert(s.probes.end(), display.begin(), display.end());
    publish(s, symbols, used);
    if (!errors) errors += infer_types(s);
  }
  if (!errors && optimize) passes::optimize(s);
  return errors;
}

}  // namespace passes

int pass2_elaborate(Session& s) {
  if (!s.user_file) return 1;
  std::vector<ast::StapFile*> files;
  if (auto* t = passes::timeout_probe(s)) files.push_back(t);
  files.push_back(s.user_file);
  int errors = passes::elaborate_probes(s, files, !s.opts.unoptimized);
  if (errors == 0) errors += passes::check_global_options(s);
  if (errors == 0 && s.probes.empty()) {
    s.diag.semantic_error(SemanticError("no probes found"));
    errors = 1;
  }
  if (errors == 0) errors += passes::run_analyses(s);
  s.diag.summarize_semantic_errors();
  return errors ? 1 : 0;
}

}  // namespace ukstap
