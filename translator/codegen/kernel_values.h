// Kernel types in pass 3: the BPF C for BTF tracepoint arguments and their members
// ($next->pid), char field indexing ($next_comm[0]) and @cast, typed in pass 2 by
// passes/kernel_types.h.
#pragma once

#include <optional>
#include <string>

#include "ast/ast.h"
#include "btf/kernel_access.h"
#include "driver/session.h"

namespace ukstap::codegen {

// The value of `e` in probe `p` (null in a function); nullopt when `e` is not a kernel-typed
// access (the emitter's plain target variable code applies).
std::optional<std::string> kernel_target_value(const DerivedProbe* p, const ast::TargetSymbol& e,
                                               btf::CodeSink& sink);

// The value of a @cast expression; `operand` is the operand's value as C.
std::string kernel_cast_value(const ast::CastOp& e, const std::string& operand, btf::CodeSink& sink);

}  // namespace ukstap::codegen
