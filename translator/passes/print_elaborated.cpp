// -p2 output, as SystemTap prints it (docs/STAP-FORMATS.md §6): the used tapsets' embedded code,
// globals, functions sorted by name with their locals, and the derived probes with their alias
// chains and locals. -v adds the bodies.
#include <ostream>

#include "ast/printer.h"
#include "driver/passes.h"
#include "passes/print_signatures.h"

namespace ukstap {

namespace passes {

std::string vardecl_signature(const ast::Vardecl& v) {
  std::string s = v.name;
  if (v.is_global && v.maxsize > 0) s += "[" + std::to_string(v.maxsize) + "]";
  s += ":";
  s += ast::type_name(v.type);
  if (v.arity > 0) {
    s += " [";
    for (size_t k = 0; k < v.index_types.size(); ++k) {
      if (k) s += ", ";
      s += ast::type_name(v.index_types[k]);
    }
    s += "]";
  }
  return s;
}

std::string function_signature(const ast::Function& f) {
  std::string s = f.name + ":" + ast::type_name(f.type) + " (";
  for (size_t k = 0; k < f.formal_args.size(); ++k) {
    if (k) s += ", ";
    s += f.formal_args[k]->name + ":" + ast::type_name(f.formal_args[k]->type);
  }
  return s + ")";
}

std::string probe_signature(const DerivedProbe& p) {
  std::string s = p.point->str();
  std::string chain;
  std::string last = p.point->str();
  for (const auto* link : p.chain) {
    std::string text = link->str();
    if (chain.empty() || text != last) chain += " <- " + text;
    last = text;
  }
  if (!chain.empty()) s += " /*" + chain + " */";
  return s;
}

}  // namespace passes

void print_pass2(Session& s, std::ostream& out) {
  using passes::vardecl_signature;
  if (!s.embeds.empty()) {
    out << "# global embedded code\n";
    for (auto* e : s.embeds) out << "%{" << e->code << "%}\n";
  }
  if (!s.globals.empty()) out << "# globals\n";
  for (auto* g : s.globals) out << vardecl_signature(*g) << "\n";
  if (!s.functions.empty()) out << "# functions\n";
  for (auto* f : s.functions) {
    out << passes::function_signature(*f) << "\n";
    if (!f->locals.empty()) out << "  # locals\n";
    for (auto* l : f->locals) out << "  " << vardecl_signature(*l) << "\n";
    if (s.opts.verbose > 0 && f->body) {
      ast::print(out, *f->body, 0);
      out << "\n";
    }
  }
  if (!s.probes.empty()) out << "# probes\n";
  for (auto* p : s.probes) {
    out << passes::probe_signature(*p) << "\n";
    if (!p->locals.empty()) out << "  # locals\n";
    for (auto* l : p->locals) out << "  " << vardecl_signature(*l) << "\n";
    if (s.opts.verbose > 0 && p->body) {
      ast::print(out, *p->body, 0);
      out << "\n";
    }
  }
}

}  // namespace ukstap
