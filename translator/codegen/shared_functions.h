// Pass 3: which script functions the BPF object holds once, as a subprogram every probe calls,
// instead of inlined into each caller (the default: `static __always_inline`).
//
// Pass 4's time is the code clang generates (docs/DESIGN.md "Pass 4"): errsnoop.stp's 360
// syscall return probes each inlined errno_p, errno_str, execname, pid and tid. A shared copy
// is a BPF-to-BPF call, which costs a call frame (the verifier allows 8 in a chain, with the
// runtime's own subprograms and foreach callbacks on top) and, when JITed, a native frame. So
// only functions that call no other script function, or only such leaves, are shared (two
// frames more at most: strace.stp's report() and its ctime/tid), only when called from two
// places or more (one call site gains nothing), and never when it or a callee is embedded C that
// names the program context `ctx` or a stack hook (the kernel-stack hooks use `ctx` inside
// their macros; a kernel stack read in a subprogram would see its extra frame).
#pragma once

#include <string>

#include "ast/ast.h"
#include "passes/call_graph.h"

namespace ukstap::codegen {

bool bpf_shared_function(const passes::CallGraph& g, const ast::Function* f);

// The C declaration of stp_fn_NAME, without `;` or body: `static __always_inline void
// stp_fn_NAME(struct stp_context *c, struct stp_globals *g STP_FN_CTX_PARAM)`, or for a shared
// function STP_FN_SHARED (runtime/bpf/stp_bpf.h: a subprogram in BPF, inlined natively) with the
// context as `void *stp_fn_c`: a subprogram's parameter types go into the object's BTF, and
// struct stp_context holds every probe's locals (thousands of member names, each looked up in
// clang-14's BTF string table by a linear scan).
std::string fn_declaration(const passes::CallGraph& g, const ast::Function* f, const std::string& name);

// What opens the body of a shared function: `c` from stp_fn_c ("" for the others).
std::string fn_context_local(const passes::CallGraph& g, const ast::Function* f);

}  // namespace ukstap::codegen
