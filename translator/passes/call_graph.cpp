#include "passes/call_graph.h"

#include <functional>

namespace ukstap::passes {

namespace {

struct CallFinder : ast::TraversingVisitor {
  std::vector<ast::Function*> calls;
  void visit(ast::FunctionCall& e) override {
    if (e.referent) calls.push_back(e.referent);
    TraversingVisitor::visit(e);
  }
};

// Depth-first from each function in `order`: the first callee found on the current path.
const ast::Function* find_cycle(const CallGraph& g, const std::vector<ast::Function*>& order) {
  std::map<const ast::Function*, int> state;  // 0 unseen, 1 on the path, 2 done
  const ast::Function* found = nullptr;
  std::function<void(const ast::Function*)> dfs = [&](const ast::Function* f) {
    state[f] = 1;
    for (auto* callee : g.of(f)) {
      if (found) return;
      if (state[callee] == 1) {
        found = callee;
        return;
      }
      if (state[callee] == 0) dfs(callee);
    }
    state[f] = 2;
  };
  for (auto* f : order) {
    if (found) break;
    if (!state[f]) dfs(f);
  }
  return found;
}

}  // namespace

const std::vector<ast::Function*>& CallGraph::of(const ast::Function* f) const {
  static const std::vector<ast::Function*> none;
  auto it = callees.find(f);
  return it == callees.end() ? none : it->second;
}

CallGraph build_call_graph(const Session& s) {
  CallGraph g;
  for (auto* f : s.functions) {
    CallFinder cf;
    if (f->body) f->body->accept(cf);
    g.callees[f] = std::move(cf.calls);
  }
  for (auto* p : s.probes) {
    CallFinder cf;
    if (p->body) p->body->accept(cf);
    if (p->condition) p->condition->accept(cf);
    g.probe_callees[p] = std::move(cf.calls);
  }
  g.recursive = find_cycle(g, s.functions);
  return g;
}

int report_recursion(Session& s, const CallGraph& g) {
  if (!g.recursive) return 0;
  s.diag.semantic_error(SemanticError("recursive function calls are not supported yet (function '" +
                                          g.recursive->name + "')",
                                      g.recursive->tok));
  return 1;
}

}  // namespace ukstap::passes
