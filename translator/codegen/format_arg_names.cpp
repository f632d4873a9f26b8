// Field names of printed values (format_arg_names.h).
#include "codegen/format_arg_names.h"

#include <cctype>
#include <set>

namespace ukstap::codegen {
namespace {

std::string sanitize(const std::string& s) {
  std::string o;
  for (char ch : s) o += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ? ch : '_';
  while (!o.empty() && o.front() == '_') o.erase(0, 1);  // "$$parms" -> "parms"; CTF hides a leading '_'
  if (!o.empty() && std::isdigit(static_cast<unsigned char>(o[0]))) o = "v" + o;
  return o;
}

std::string name_of(const ast::Expression* e) {
  if (auto* s = dynamic_cast<const ast::Symbol*>(e)) return s->name;
  if (auto* t = dynamic_cast<const ast::TargetSymbol*>(e)) {
    for (auto it = t->components.rbegin(); it != t->components.rend(); ++it)
      if (it->kind == ast::TargetComponent::Kind::StructMember) return it->member;
    return t->name;
  }
  if (auto* f = dynamic_cast<const ast::FunctionCall*>(e)) return f->name;
  if (auto* a = dynamic_cast<const ast::ArrayIndex*>(e)) return name_of(a->base);
  return "";
}

}  // namespace

std::vector<std::string> format_arg_names(const std::vector<ast::Expression*>& args) {
  std::vector<std::string> out;
  std::set<std::string> used;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string n = sanitize(name_of(args[i]));
    if (n.empty()) n = "arg" + std::to_string(i);
    std::string u = n;
    for (int k = 1; used.count(u); ++k) u = n + "_" + std::to_string(k);
    used.insert(u);
    out.push_back(u);
  }
  return out;
}

}  // namespace ukstap::codegen
