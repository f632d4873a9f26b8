#include "codegen/shared_functions.h"

#include <cctype>

namespace ukstap::codegen {

namespace {

// Embedded C that names the program context `ctx` or a stack hook (the kernel-stack hooks,
// _stp_kstack_* and _stp_kernel_pc in tapsets/RUNTIME-HOOKS.md, read `ctx` inside their
// macros; a kernel stack read in a subprogram would see the subprogram's own frame).
bool uses_context(const ast::Function* f) {
  if (!f->has_embedded_body()) return false;
  const std::string& code = static_cast<const ast::EmbeddedCode*>(f->body)->code;
  for (size_t p = code.find("ctx"); p != std::string::npos; p = code.find("ctx", p + 1)) {
    bool before = p > 0 && (std::isalnum((unsigned char)code[p - 1]) || code[p - 1] == '_');
    bool after = p + 3 < code.size() && (std::isalnum((unsigned char)code[p + 3]) || code[p + 3] == '_');
    if (!before && !after) return true;  // the identifier `ctx`
  }
  // _stp_kernel_pc() (addr()) names no `ctx` but is a kernel-stack read too (stp_bpf_kstack.h).
  return code.find("stack") != std::string::npos || code.find("_stp_kernel_pc") != std::string::npos;
}

// Whether f and everything it calls stays within `height` levels of calls below f and uses no
// context.
bool within(const passes::CallGraph& g, const ast::Function* f, int height) {
  if (uses_context(f)) return false;
  for (auto* c : g.of(f))
    if (height == 0 || !within(g, c, height - 1)) return false;
  return true;
}

}  // namespace

bool bpf_shared_function(const passes::CallGraph& g, const ast::Function* f) {
  // At most three levels of script functions (three frames more): strace.stp's report() ->
  // gettimeofday_us() -> gettimeofday_ns().
  if (!within(g, f, 2)) return false;
  size_t sites = 0;
  for (auto& [probe, callees] : g.probe_callees)
    for (auto* c : callees) sites += c == f;
  for (auto& [fn, callees] : g.callees)
    for (auto* c : callees) sites += c == f;
  return sites >= 2;
}

std::string fn_declaration(const passes::CallGraph& g, const ast::Function* f, const std::string& name) {
  if (bpf_shared_function(g, f))
    return "STP_FN_SHARED void stp_fn_" + name + "(void *stp_fn_c, struct stp_globals *g STP_FN_CTX_PARAM)";
  return "static __always_inline void stp_fn_" + name +
         "(struct stp_context *c, struct stp_globals *g STP_FN_CTX_PARAM)";
}

std::string fn_context_local(const passes::CallGraph& g, const ast::Function* f) {
  return bpf_shared_function(g, f) ? "  struct stp_context *c = stp_fn_c;\n" : "";
}

}  // namespace ukstap::codegen
