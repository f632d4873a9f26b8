#include "passes/analyses.h"

#include <memory>

#include "passes/symbol_key_merge.h"

namespace ukstap::passes {

int run_analyses(Session& s) {
  s.analyses.reset();
  auto a = std::make_shared<Analyses>();
  a->calls = build_call_graph(s);
  a->placement = place_probes(s);
  a->reach = compute_reachability(s, a->calls, a->placement);
  a->dispatch = plan_syscall_dispatch(s, a->reach.walks_kernel_stack);
  a->bt_tokens = find_backtrace_tokens(s);
  a->sym_tokens = check_symbol_tokens(s);
  if (a->sym_tokens.errors) return a->sym_tokens.errors;
  if (int e = check_symbol_key_merge(s, a->sym_tokens, a->placement, a->reach, a->text_keyed_literal)) return e;
  s.analyses = std::move(a);
  return 0;
}

}  // namespace ukstap::passes
