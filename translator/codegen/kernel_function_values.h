// Pass 3 for kernel.function probes: a parameter or $return with its members
// (passes/kernel_function_vars.h says where each is) and the pseudo-variables:
//   $$parms   "name=0x... name=0x..." over the parameters, each as %#x (SystemTap's format);
//   $$vars    the same: BTF knows no locals, so $$vars has only the parameters;
//   $$locals  "": BTF describes a function's prototype, not its local variables (SystemTap
//             reads those from DWARF);
//   $$return  "return=0x..." in a .return probe ("" for a void function).
#pragma once

#include <optional>
#include <string>

#include "ast/ast.h"
#include "btf/kernel_access.h"
#include "driver/session.h"

namespace ukstap::codegen {

// nullopt when `p` is not a kernel.function probe or `e` is none of its variables.
std::optional<std::string> kernel_function_value(const DerivedProbe* p, const ast::TargetSymbol& e,
                                                 btf::CodeSink& sink);

}  // namespace ukstap::codegen
