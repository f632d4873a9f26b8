#include "codegen/shared_functions.h"

#include <cctype>

namespace ukstap::codegen {

bool bpf_shared_function(const passes::CallGraph& g, const ast::Function* f) {
  if (!g.of(f).empty()) return false;  // calls another script function
  if (f->has_embedded_body()) {
    const std::string& code = static_cast<const ast::EmbeddedCode*>(f->body)->code;
    for (size_t p = code.find("ctx"); p != std::string::npos; p = code.find("ctx", p + 1)) {
      bool before = p > 0 && (std::isalnum((unsigned char)code[p - 1]) || code[p - 1] == '_');
      bool after = p + 3 < code.size() && (std::isalnum((unsigned char)code[p + 3]) || code[p + 3] == '_');
      if (!before && !after) return false;  // the identifier `ctx`
    }
    // The kernel-stack hooks (_stp_kstack_*, tapsets/RUNTIME-HOOKS.md) read `ctx` inside macros.
    if (code.find("stack") != std::string::npos) return false;
  }
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
