// Pass 3: which script functions the BPF object holds once, as a subprogram every probe calls,
// instead of inlined into each caller (the default: `static __always_inline`).
//
// Pass 4's time is the code clang generates (docs/DESIGN.md "Pass 4"): errsnoop.stp's 360
// syscall return probes each inlined errno_p, errno_str, execname, pid and tid. A shared copy
// is a BPF-to-BPF call, which costs a call frame (the verifier allows 8 in a chain, with the
// runtime's own subprograms and foreach callbacks on top) and, when JITed, a native frame. So
// only functions that call no other script function are shared (one frame more at most), only
// when called from two places or more (one call site gains nothing), and never embedded C that
// names the program context `ctx` or a stack hook (the kernel-stack hooks use `ctx` inside
// their macros; a kernel stack read in a subprogram would see its extra frame).
#pragma once

#include "ast/ast.h"
#include "passes/call_graph.h"

namespace ukstap::codegen {

bool bpf_shared_function(const passes::CallGraph& g, const ast::Function* f);

// The C declaration specifiers of stp_fn_NAME: STP_FN_SHARED (runtime/bpf/stp_bpf.h: a
// subprogram in BPF, inlined natively) or `static __always_inline`.
const char* fn_linkage(const passes::CallGraph& g, const ast::Function* f);

}  // namespace ukstap::codegen
