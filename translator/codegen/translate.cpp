// Pass 3: translate the elaborated program into C for the runtime (runtime/README.md).
#include <ostream>

#include "codegen/emitter.h"
#include "driver/passes.h"
#include "passes/call_graph.h"
#include "probes/kernel_function_support.h"

namespace ukstap {

int pass3_translate(Session& s) {
  if (!s.analyses) {  // pass2_elaborate sets them; a caller that skipped it gets one clear line
    s.diag.semantic_error(SemanticError("internal error: pass 3 has no pass-2 analyses"));
    return 1;
  }
  if (passes::report_recursion(s, s.analyses->calls)) {
    s.diag.summarize_semantic_errors();
    return 1;
  }
  try {  // what the kernel offers kernel.function probes: asked here, not at pass 2
    probes::choose_kernel_function_mechanisms(s);
  } catch (const SemanticError& e) {
    s.diag.semantic_error(e);
    s.diag.summarize_semantic_errors();
    return 1;
  }
  s.module = std::make_shared<codegen::ModuleInfo>();
  codegen::Emitter em(s, *s.analyses, *s.module);
  int errors = em.run();
  s.diag.summarize_semantic_errors();
  return errors ? 1 : 0;
}

void print_pass3(Session& s, std::ostream& out) {
  if (s.module) out << s.module->source;
}

}  // namespace ukstap
