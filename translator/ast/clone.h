// Deep copies of AST subtrees into an arena (alias expansion, inlining of probe bodies).
//
// Tokens are shared (they are immutable). Resolution results are NOT copied: Symbol::referent
// and FunctionCall::referent are null in the copy and every Expression::type is Unknown (with a
// null type_tok), so the copy is resolved afresh in its new context. A null input gives null.
#pragma once

#include <type_traits>

#include "ast/ast.h"

namespace ukstap::ast {

Expression* clone(Arena& arena, const Expression* e);
Statement* clone(Arena& arena, const Statement* s);
Block* clone(Arena& arena, const Block* b);
ProbePoint* clone(Arena& arena, const ProbePoint* pp);

// Typed convenience: clone_as(arena, sym) returns a Symbol*.
template <typename T>
T* clone_as(Arena& arena, const T* n) {
  if constexpr (std::is_base_of_v<Expression, T>)
    return static_cast<T*>(clone(arena, static_cast<const Expression*>(n)));
  else
    return static_cast<T*>(clone(arena, static_cast<const Statement*>(n)));
}

}  // namespace ukstap::ast
