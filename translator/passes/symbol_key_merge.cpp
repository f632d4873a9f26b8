#include "passes/symbol_key_merge.h"

#include <map>
#include <set>

namespace ukstap::passes {

bool merged_by_text(const SymbolTokens& t, const ast::Vardecl* array, size_t k) {
  return t.keys.count(std::make_pair(array, k)) != 0;
}

namespace {

struct Check : ast::TraversingVisitor {
  Session& s;
  const SymbolTokens& t;
  bool kernel = false;  // walking code that runs in a BPF program
  int errors = 0;
  std::set<const Token*> reported;  // one body may serve several points
  Check(Session& ss, const SymbolTokens& tt) : s(ss), t(tt) {}

  // The text-merged array `e` indexes (with the placeholder function, for the message), or null.
  const ast::Vardecl* merged(const ast::Expression* e, std::string* origin = nullptr) const {
    auto* a = dynamic_cast<const ast::ArrayIndex*>(e);
    auto* sym = a ? dynamic_cast<const ast::Symbol*>(a->base) : nullptr;
    if (!sym || !sym->referent) return nullptr;
    for (size_t k = 0; k < a->indexes.size(); ++k)
      if (auto it = t.keys.find(std::make_pair(static_cast<const ast::Vardecl*>(sym->referent), k));
          it != t.keys.end()) {
        if (origin) *origin = it->second;
        return sym->referent;
      }
    return nullptr;
  }
  void report(const ast::Vardecl* v, const std::string& origin, const std::string& what,
              const Token* tok) {
    if (!reported.insert(tok).second) return;
    ++errors;
    s.diag.semantic_error(SemanticError(
        "array '" + v->name + "' is keyed by " + origin + " placeholders, one per address, that "
            "user space merges by their text (SystemTap's key), exact only for counts (++, --, +=, "
            "-=) and statistics (<<<): " + what,
        tok));
  }
  void indexes_of(ast::Expression* e) {
    for (auto* i : static_cast<ast::ArrayIndex*>(e)->indexes)
      if (i) i->accept(*this);
  }

  void visit(ast::AssignmentExpr& e) override {
    std::string origin;
    if (const ast::Vardecl* v = merged(e.left, &origin)) {
      const Token* at = e.tok ? e.tok : e.left->tok;
      if (e.op == "+=" || e.op == "-=" || e.op == "<<<")
        writes(v, origin, "", at);
      else if (std::string lit = literal(e.right); e.op == "=" && !lit.empty())
        writes(v, origin, lit, at);
      else
        report(v, origin, "this '" + e.op + "' cannot be merged", at);
      indexes_of(e.left);
      if (e.right) e.right->accept(*this);
      return;
    }
    ast::TraversingVisitor::visit(e);
  }
  // `seen[usymname(a)] = 1`: every entry of a name holds the same value, so any one of them is
  // the merged one. A text is the literal (number or string) every assignment writes; "" a count.
  std::map<const ast::Vardecl*, std::string> value_kind;
  static std::string literal(const ast::Expression* e) {
    if (auto* n = dynamic_cast<const ast::LiteralNumber*>(e)) return "n" + std::to_string(n->value);
    if (auto* l = dynamic_cast<const ast::LiteralString*>(e)) return "s" + l->value;
    return "";
  }
  void writes(const ast::Vardecl* v, const std::string& origin, const std::string& kind,
              const Token* at) {
    auto [it, fresh] = value_kind.emplace(v, kind);
    if (!fresh && it->second != kind)
      report(v, origin, kind.empty() || it->second.empty()
                            ? "a count cannot be merged with an assigned value"
                            : "entries assigned different values cannot be merged",
             at);
  }
  void crement(ast::Expression* operand, ast::Expression& e) {
    std::string origin;
    if (const ast::Vardecl* v = merged(operand, &origin)) {
      writes(v, origin, "", operand->tok ? operand->tok : e.tok);
      return indexes_of(operand);
    }
    if (auto* p = dynamic_cast<ast::PreCrement*>(&e)) return ast::TraversingVisitor::visit(*p);
    ast::TraversingVisitor::visit(static_cast<ast::PostCrement&>(e));
  }
  void visit(ast::PreCrement& e) override { crement(e.operand, e); }
  void visit(ast::PostCrement& e) override { crement(e.operand, e); }
  // Any other use of an entry (a read, `in`, delete, @count(...)) is right in user space, after
  // the merge; in a kernel probe it would see one address's part.
  void visit(ast::ArrayIndex& e) override {
    std::string origin;
    if (kernel)
      if (const ast::Vardecl* v = merged(&e, &origin))
        report(v, origin, "a kernel probe cannot read or delete one entry (do it in an end or "
                          "timer.s probe, which run in user space)",
               e.tok);
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::ForeachLoop& e) override {
    auto* sym = dynamic_cast<ast::Symbol*>(e.base);
    if (kernel && sym && sym->referent)
      if (auto it = t.keys.lower_bound(std::make_pair(static_cast<const ast::Vardecl*>(sym->referent), size_t(0)));
          it != t.keys.end() && it->first.first == sym->referent)
        report(sym->referent, it->second, "a kernel probe cannot walk it with foreach (do it in "
                                          "an end or timer.s probe, which run in user space)",
               e.tok ? e.tok : sym->tok);
    ast::TraversingVisitor::visit(e);
  }
};

}  // namespace

int check_symbol_key_merge(Session& s, const SymbolTokens& t, const ProbePlacement& placement,
                           const Reachability& reach, std::set<const ast::Vardecl*>& assigned) {
  if (t.keys.empty()) return 0;
  Check c(s, t);
  for (auto* p : s.probes)
    if (p && p->body) {
      c.kernel = placement.of(*p) == ProbeSide::Kernel;
      p->body->accept(c);
    }
  for (auto* f : s.functions)
    if (f && f->body && !f->has_embedded_body()) {
      c.kernel = reach.reaches(f, ProbeSide::Kernel);
      f->body->accept(c);
    }
  for (auto& [v, kind] : c.value_kind)
    if (!kind.empty()) assigned.insert(v);
  return c.errors;
}

}  // namespace ukstap::passes
