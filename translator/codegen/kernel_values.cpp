#include "codegen/kernel_values.h"

#include "codegen/emitter.h"
#include "codegen/kernel_function_values.h"
#include "passes/kernel_types.h"

namespace ukstap::codegen {

std::optional<std::string> kernel_target_value(const DerivedProbe* p, const ast::TargetSymbol& e,
                                               btf::CodeSink& sink) {
  if (auto v = kernel_function_value(p, e, sink)) return v;  // kernel.function's $vars
  if (auto st = passes::netfilter_target_start(p, e))  // $skb->len in a netfilter probe
    return btf::walk_access(passes::kernel_btf_or_throw(e.tok), *st, e.components, e.addressof,
                            e.tok, &sink, e.type == ast::Type::String).value;
  const auto* tp = p ? p->family.get<probes::TracepointPoint>() : nullptr;
  if (!tp) return std::nullopt;
  const auto* a = passes::tracepoint_btf_arg(*tp, e.name);
  const auto* f = passes::tracepoint_field(*tp, e.name);
  if (a && tp->use_btf_args) {
    // A tp_btf program's context: the tracepoint's arguments, one u64 each.
    btf::AccessStart st;
    st.what = e.name;
    st.type_id = a->type_id;
    st.value = "STP_RAW_ARG(c, " + std::to_string(a->index) + ")";
    const btf::KernelBtf& k = passes::kernel_btf_or_throw(e.tok);
    return btf::walk_access(k, st, e.components, e.addressof, e.tok, &sink,
                            e.type == ast::Type::String).value;
  }
  if (a && !f)
    throw TranslateError("BTF argument " + e.name + " outside a tp_btf probe", e.tok);
  if (!f || (e.components.empty() && !e.addressof)) return std::nullopt;
  // `$next_comm[i]` (pass 2 allowed only one index on a char array field).
  const auto& c = e.components.front();
  if (c.kind == ast::TargetComponent::Kind::LiteralIndex)
    return "STP_TP_LONG(c, " + std::to_string(f->offset + c.num_index) + ", 1, 1)";
  std::string i = sink.eval_long(c.expr_index);
  return "((" + i + ") >= 0 && (" + i + ") < " + std::to_string(f->size) + " ? STP_TP_CHAR(c, " +
         std::to_string(f->offset) + ", " + i + ") : 0)";
}

std::string kernel_cast_value(const ast::CastOp& e, const std::string& operand, btf::CodeSink& sink) {
  const btf::KernelBtf& k = passes::kernel_btf_or_throw(e.tok);
  btf::AccessStart st = passes::cast_start(k, e);
  st.value = operand;
  return btf::walk_access(k, st, e.components, e.addressof, e.tok, &sink,
                          e.type == ast::Type::String).value;
}

}  // namespace ukstap::codegen
