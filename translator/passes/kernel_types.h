// Kernel types in pass 2: what `$next->pid`, `$next_comm[0]`, `&$prev->se` and
// `@cast(p, "task_struct")->tgid` are (their ukstap type, or one error line), and which
// tracepoint probes read their C arguments from BTF (tp_btf) rather than the event's record.
#pragma once

#include <optional>
#include <string>

#include "ast/ast.h"
#include "btf/kernel_access.h"
#include "driver/session.h"

namespace ukstap::passes {

// The argument/field named `name` ("$next") of a tracepoint point; null when none.
const probes::TraceBtfArg* tracepoint_btf_arg(const probes::TracepointPoint& tp, const std::string& name);
const probes::TraceField* tracepoint_field(const probes::TracepointPoint& tp, const std::string& name);

// A $target this module types: a BTF tracepoint argument, or a format field with components
// (char array indexing). Returns false when it is not one (the caller's plain lookup applies).
// `quiet` (for @defined): a failure sets Unknown instead of throwing.
// `char_array` (may be null): set when the access ends at a char array (Session::kernel_char_arrays).
// A netfilter probe's $skb, $in or $out with members or & (`$skb->len`): where it starts, the
// pointer's BTF type ("struct sk_buff"); nullopt for any other target.
std::optional<btf::AccessStart> netfilter_target_start(const DerivedProbe* p, const ast::TargetSymbol& e);

bool kernel_target_type(const DerivedProbe& p, const ast::TargetSymbol& e, bool quiet, ast::Type& out,
                        bool* char_array = nullptr);

// @cast(expr, "type"[, "kernel..."])->...: its type; Unknown when quiet and it does not resolve.
ast::Type kernel_cast_type(const ast::CastOp& e, bool quiet, bool* char_array = nullptr);

// Where the BTF walk of a @cast starts (pass 3 fills `value`). Throws SemanticError.
btf::AccessStart cast_start(const btf::KernelBtf& k, const ast::CastOp& e);
// The kernel's BTF, or a SemanticError naming why there is none.
const btf::KernelBtf& kernel_btf_or_throw(const Token* tok);

// After symbol resolution: a tracepoint probe that reads a BTF-only argument becomes a tp_btf
// probe (TracepointPoint::use_btf_args); reading a record-only field there too is an error.
int choose_tracepoint_context(Session& s, DerivedProbe& p);
// Before resolution: whether the probe will be a tp_btf probe (tracepoint_context.cpp), so that
// @defined of a record-only field folds to 0 there (tracepoint_field_unreadable).
void prefer_tracepoint_btf(
    DerivedProbe& p,
    const std::vector<std::pair<const ast::Statement*, ast::StapFile*>>& piece_owners,
    const ast::StapFile* user_file);
bool tracepoint_field_unreadable(const DerivedProbe& p, const ast::TargetSymbol& e);

}  // namespace ukstap::passes
