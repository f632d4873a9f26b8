#include "passes/reachability.h"

#include <functional>

namespace ukstap::passes {

namespace {

bool mentions(const std::string& code, const char* a, const char* b) {
  return code.find(a) != std::string::npos || code.find(b) != std::string::npos;
}

}  // namespace

bool Reachability::reaches(const ast::Function* f, ProbeSide side) const {
  if (side == ProbeSide::Kernel) return kernel_functions.count(f) > 0;
  if (side == ProbeSide::Native) return native_functions.count(f) > 0;
  return false;
}

Reachability compute_reachability(const Session& s, const CallGraph& calls,
                                  const ProbePlacement& placement) {
  Reachability r;
  std::function<void(ast::Function*, std::set<const ast::Function*>&)> reach =
      [&](ast::Function* f, std::set<const ast::Function*>& set) {
        if (!set.insert(f).second) return;
        for (auto* g : calls.of(f)) reach(g, set);
      };
  for (auto* p : s.probes) {
    ProbeSide side = placement.of(*p);
    if (side == ProbeSide::None) continue;
    bool native = side == ProbeSide::Native;
    auto it = calls.probe_callees.find(p);
    if (it != calls.probe_callees.end())
      for (auto* f : it->second) reach(f, native ? r.native_functions : r.kernel_functions);
  }
  for (auto* f : s.functions) {
    if (!f->has_embedded_body() || !(r.kernel_functions.count(f) || r.native_functions.count(f)))
      continue;
    const std::string& code = static_cast<const ast::EmbeddedCode*>(f->body)->code;
    r.uses_user_stacks |= mentions(code, "_stp_ustack_", "_stp_usym_");
    r.uses_kernel_stacks |= mentions(code, "_stp_kstack_", "_stp_ksym_");
    r.walks_kernel_stack |= mentions(code, "_stp_kstack_", "_stp_kernel_pc");
  }
  return r;
}

}  // namespace ukstap::passes
