#include "codegen/kernel_function_values.h"

#include "codegen/c_text.h"
#include "codegen/emitter.h"
#include "passes/kernel_function_vars.h"
#include "passes/kernel_types.h"

namespace ukstap::codegen {

namespace {

// "name=0x..." pieces of the parameters (and $return) into a new string temp.
std::string pseudo(const probes::KernelFunctionPoint& kf, const DerivedProbe* p, const ast::TargetSymbol& e,
                   btf::CodeSink& sink) {
  std::string t = sink.tmp_str();
  sink.line("stp_sfmt_begin(c, " + t + ");");
  if (e.name == "$$locals") return t;
  bool first = true;
  auto piece = [&](const std::string& name) {
    ast::TargetSymbol v = e;
    v.name = "$" + name;
    v.components.clear();
    v.addressof = false;
    v.type = ast::Type::Long;
    auto st = passes::kernel_function_start(p, v);
    if (!st) return;
    auto r = btf::walk_access(passes::kernel_btf_or_throw(e.tok), *st, {}, false, e.tok, &sink);
    sink.line("stp_sfmt_lit(c, " + t + ", " + c_string_literal((first ? "" : " ") + name + "=") + ");");
    sink.line("stp_sfmt_long(c, " + t + ", " + r.value + ", 'x', STP_FLAG_ALT, 0, -1);");
    first = false;
  };
  if (e.name == "$$return") {
    if (kf.is_return && kf.return_type) piece("return");
    return t;
  }
  // In a kretprobe the argument registers are gone: an empty string would be a silent wrong
  // answer (fexit has them), so it is refused as $param is (passes/kernel_function_vars.cpp).
  bool kretprobe = kf.is_return && kf.mechanism == probes::KernelFunctionPoint::Mechanism::Kprobe;
  if (kretprobe && !kf.params.empty())
    throw TranslateError("'" + e.name + "' in a kretprobe: the argument registers are gone at "
                         "return; write @entry($PARAM) for each, or use fentry/fexit",
                         e.tok);
  for (const auto& prm : kf.params) piece(prm.name);
  return t;
}

}  // namespace

std::optional<std::string> kernel_function_value(const DerivedProbe* p, const ast::TargetSymbol& e,
                                                 btf::CodeSink& sink) {
  const auto* kf = p ? p->family.get<probes::KernelFunctionPoint>() : nullptr;
  if (!kf) return std::nullopt;
  if (e.name == "$$parms" || e.name == "$$vars" || e.name == "$$locals" || e.name == "$$return")
    return pseudo(*kf, p, e, sink);
  auto st = passes::kernel_function_start(p, e);
  if (!st) return std::nullopt;
  return btf::walk_access(passes::kernel_btf_or_throw(e.tok), *st, e.components, e.addressof, e.tok,
                          &sink, e.type == ast::Type::String)
      .value;
}

}  // namespace ukstap::codegen
