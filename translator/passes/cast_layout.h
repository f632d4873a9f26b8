// `&@cast(0, "TYPE", MODULE)[N]` (the cast_sizeof macros: N times the type's size) and, for a
// header module, `&@cast(0, "TYPE", MODULE)->a->b` (offsetof): address arithmetic on a null pointer, which reads
// no memory, so it folds to a number in pass 2 and works in any probe (begin, end, timers). The
// layout comes from the kernel's BTF for a kernel type ("", "kernel", "kernel<linux/x.h>"), and
// from the C compiler for a header module ("<stdio.h>", "</usr/include/stdio.h>"), whose types
// are user space's: SystemTap compiles such headers too (langref, @cast).
#pragma once

#include <cstdint>

#include "ast/ast.h"

namespace ukstap::passes {

// Whether `e` is such a layout expression.
bool cast_layout_pattern(const ast::CastOp& e);
// Its value. Throws SemanticError (an unknown type or member, no compiler).
int64_t cast_layout_value(const ast::CastOp& e);
// A header module: "<...>" (not "kernel<...>").
bool cast_header_module(const std::string& module);

}  // namespace ukstap::passes
