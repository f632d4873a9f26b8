// -G VAR=VALUE, checked once pass 2 knows the globals and their types: VAR must be a scalar
// global of the script (or a public tapset global in use), and VALUE must suit its type: a
// whole number (decimal, 0x hex or 0 octal, as in scripts, within 64 bits) for a long, any
// text for a string. Pass 3 then initializes it (codegen/emitter.cpp globals_init).
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "passes/elaborate_steps.h"

namespace ukstap::passes {

namespace {

const ast::Vardecl* find_global(const Session& s, const std::string& name) {
  for (const auto* g : s.globals)
    if (g->name == name && !g->is_private) return g;
  if (s.user_file)
    for (const auto* g : s.user_file->globals)
      if (g->name == name) return g;
  return nullptr;
}

}  // namespace

bool global_option_number(const std::string& text, int64_t& out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 0);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

int check_global_options(Session& s) {
  int errors = 0;
  for (const auto& [name, value] : s.opts.globals_init) {
    std::string opt = "-G " + name + "=" + value + ": ";
    const ast::Vardecl* g = find_global(s, name);
    std::string why;
    int64_t n;
    if (!g)
      why = "the script has no global '" + name + "'";
    else if (g->arity > 0 || g->type == ast::Type::Stats)
      why = "'" + name + "' is an array or aggregate; -G sets scalar globals only";
    else if (g->type == ast::Type::Long && !global_option_number(value, n))
      why = "global '" + name + "' is a long and '" + value + "' is not a whole number (64-bit)";
    if (why.empty()) continue;
    s.diag.semantic_error(SemanticError(opt + why));
    ++errors;
  }
  return errors;
}

}  // namespace ukstap::passes
