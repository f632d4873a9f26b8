// Pass 3: translate the elaborated program into C for the runtime (runtime/README.md).
#include <ostream>

#include "codegen/emitter.h"
#include "driver/passes.h"

namespace ukstap {

int pass3_translate(Session& s) {
  s.module = std::make_shared<codegen::ModuleInfo>();
  codegen::Emitter em(s, *s.module);
  int errors = em.run();
  s.diag.summarize_semantic_errors();
  return errors ? 1 : 0;
}

void print_pass3(Session& s, std::ostream& out) {
  if (s.module) out << s.module->source;
}

}  // namespace ukstap
