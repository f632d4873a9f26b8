#include "passes/kernel_function_vars.h"

#include "driver/diagnostics.h"

namespace ukstap::passes {

std::optional<btf::AccessStart> kernel_function_start(const DerivedProbe* p, const ast::TargetSymbol& e) {
  const auto* kf = p ? p->family.get<probes::KernelFunctionPoint>() : nullptr;
  if (!kf) return std::nullopt;
  bool fentry = kf->mechanism == probes::KernelFunctionPoint::Mechanism::Fentry;
  btf::AccessStart st;
  st.what = e.name;
  if (e.name == "$return") {
    if (!kf->is_return || !kf->return_type) return std::nullopt;
    st.type_id = kf->return_type;
    st.value = fentry ? "STP_KF_ARG(c, " + std::to_string(kf->params.size()) + ")" : "STP_KP_RET(c)";
    return st;
  }
  for (size_t i = 0; i < kf->params.size(); ++i) {
    if ("$" + kf->params[i].name != e.name) continue;
    // Known at pass 2 only when forced (-D): else pass 3, which chose, reports it.
    if (kf->is_return && !fentry && kf->mechanism_chosen)
      throw SemanticError("'" + e.name + "' in a kretprobe: the argument registers are gone at "
                              "return; write @entry(" + e.name + ")",
                          e.tok);
    st.type_id = kf->params[i].type_id;
    st.value = fentry ? "STP_KF_ARG(c, " + std::to_string(i) + ")"
                      : "STP_KP_ARG(c, " + std::to_string(i + 1) + ")";
    return st;
  }
  return std::nullopt;
}

}  // namespace ukstap::passes
