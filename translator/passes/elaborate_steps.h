// The steps of pass 2, run in this order by pass2_elaborate (passes/elaborate.cpp):
//   derive probes (derive_probes.h) → resolve symbols → semantic checks → infer types →
//   synthesize the end-of-run global display → (resolve + infer the display probes) →
//   optimize → the deciding analyses (analyses.h: call graph, probe placement, reachability,
//   syscall dispatch), whose typed results pass 3 reads.
// Each step reports its errors through s.diag and returns how many it found.
#pragma once

#include <set>
#include <vector>

#include "ast/ast.h"
#include "driver/session.h"
#include "passes/symbol_table.h"

namespace ukstap::passes {

// What symbol resolution found in use: it decides which functions and globals reach later passes.
struct UsedSymbols {
  std::vector<ast::Function*> functions;  // in first-use order
  std::set<ast::Function*> function_set;
  std::vector<ast::Vardecl*> globals;  // in first-use order
  std::set<ast::Vardecl*> global_set;
};

// Binds every Symbol and FunctionCall of the probe's body (and, transitively, of every function
// it calls) to its declaration; creates locals; folds @defined; checks $target variables
// against what the probe point offers.
int resolve_probe_symbols(Session& s, const SymbolTable& symbols, DerivedProbe& p,
                          const std::vector<std::pair<const ast::Statement*, ast::StapFile*>>&
                              piece_owners,
                          UsedSymbols& used);
int resolve_pending_functions(Session& s, const SymbolTable& symbols, UsedSymbols& used,
                              size_t& next_function);

// @entry(expr) in .return probes: adds an entry probe per such probe that saves each operand,
// and a prologue that takes the saved values back (passes/entry_values.cpp). Run after the
// probes are derived, before symbols are resolved; adds a synthetic tapset file to s.
int add_entry_probes(Session& s, std::vector<DerivedProbe*>& probes,
                     std::vector<std::pair<const ast::Statement*, ast::StapFile*>>& owners);

// break/continue outside loops, next inside functions, writes to $targets, ...
int check_semantics(Session& s);

// Infers and checks the type of every expression, variable and function in use.
int infer_types(Session& s);

// SystemTap's end-of-run display of globals the script writes but never reads: one synthetic
// `probe end` each (docs/STAP-FORMATS.md §2). Returns the new derived probes.
std::vector<DerivedProbe*> add_global_display(Session& s, const SymbolTable& symbols);

// -G VAR=VALUE against the globals in use (passes/global_options.cpp).
int check_global_options(Session& s);
// A -G value for a long global: a whole number as scripts write them (12, -3, 0x1f, 017).
bool global_option_number(const std::string& text, int64_t& out);

// Drops assignments to locals nothing reads (when side-effect free), then unused locals,
// functions and globals (passes/optimize.cpp). Not for -u, nor for -L listings.
void optimize(Session& s);

}  // namespace ukstap::passes
