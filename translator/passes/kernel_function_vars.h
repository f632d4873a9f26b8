// The $variables of a kernel.function probe (probes/kernel_function_family.cpp), typed from the
// function's BTF prototype: a parameter by name ($count, $file->f_path.dentry), and $return in
// a .return probe. Where the value is depends on the program (KernelFunctionPoint::mechanism):
//   fentry/fexit      the context is the arguments, one u64 each; fexit's return value follows
//                     them (ctx[nargs]); a .return probe still sees the arguments as they were
//                     at entry (the trampoline saved them), as SystemTap's .return does.
//   kprobe/kretprobe  pt_regs: the x86-64 argument registers at entry, rax at return; at a
//                     kretprobe the argument registers are gone: @entry($x) saves one.
// $$parms/$$vars/$$locals/$$return are codegen/kernel_function_values.cpp's.
#pragma once

#include <optional>

#include "ast/ast.h"
#include "btf/kernel_access.h"
#include "driver/session.h"

namespace ukstap::passes {

// Where the BTF walk of `e` starts in probe `p` (value: the C that reads it); nullopt when `p`
// is not a kernel.function probe or `e` names neither a parameter nor $return. Throws
// SemanticError for a parameter a kretprobe cannot read.
std::optional<btf::AccessStart> kernel_function_start(const DerivedProbe* p, const ast::TargetSymbol& e);

}  // namespace ukstap::passes
