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
  // Walking a user-space probe that runs while the kernel probes are attached (timer.s, procfs,
  // input): the loader folds only once they are detached (loader/symbol_key_merge.h), since a
  // fold that writes back while a BPF program's read-then-write of one entry straddles it loses
  // counts. begin, end and error run with nothing attached.
  bool midrun = false;
  std::set<const ast::Function*> followed;  // user-space functions walked from their callers
  const ast::Expression* statement_value = nullptr;  // the whole value of an expression statement
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

  // Only kernel probes may add to such an array, and only as a statement: a write in user space
  // makes a key after the fold that serves the reads (`end { f[usymname(pc)] += n[pc] }` then
  // reads one address's part), and the value of `++a[k]` in a kernel probe is one address's part.
  bool write_refused(const ast::Vardecl* v, const std::string& origin, const ast::Expression& e,
                     const Token* at) {
    if (!kernel) {
      report(v, origin, "only a kernel probe may add to it (in user space key it by the address, "
                        "a[addr], and print the name of each key)", at);
      return true;
    }
    if (&e != statement_value) {
      report(v, origin, "a kernel probe cannot use the value of one entry", at);
      return true;
    }
    return false;
  }
  void visit(ast::ExprStatement& e) override {
    statement_value = e.value;
    ast::TraversingVisitor::visit(e);
  }
  // A user-space function called from user-space probe code: walked with its caller's context.
  void visit(ast::FunctionCall& e) override {
    ast::TraversingVisitor::visit(e);
    if (!kernel && e.referent && e.referent->body && !e.referent->has_embedded_body() &&
        followed.insert(e.referent).second) {
      const ast::Expression* outer = statement_value;
      e.referent->body->accept(*this);
      statement_value = outer;
    }
  }

  void visit(ast::AssignmentExpr& e) override {
    std::string origin;
    if (const ast::Vardecl* v = merged(e.left, &origin)) {
      const Token* at = e.tok ? e.tok : e.left->tok;
      if (write_refused(v, origin, e, at)) {
        indexes_of(e.left);
        if (e.right) e.right->accept(*this);
        return;
      }
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
      const Token* at = operand->tok ? operand->tok : e.tok;
      if (!write_refused(v, origin, e, at)) writes(v, origin, "", at);
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
    if (kernel || midrun)
      if (const ast::Vardecl* v = merged(&e, &origin))
        report(v, origin, kernel ? "a kernel probe cannot read or delete one entry (do it in an "
                                   "end probe, which runs in user space)"
                                 : "it is merged once the kernel probes stop: read or delete it "
                                   "in an end probe, not while they run",
               e.tok);
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::ForeachLoop& e) override {
    auto* sym = dynamic_cast<ast::Symbol*>(e.base);
    if ((kernel || midrun) && sym && sym->referent)
      if (auto it = t.keys.lower_bound(std::make_pair(static_cast<const ast::Vardecl*>(sym->referent), size_t(0)));
          it != t.keys.end() && it->first.first == sym->referent)
        report(sym->referent, it->second,
               kernel ? "a kernel probe cannot walk it with foreach (do it in an end probe, which "
                        "runs in user space)"
                      : "it is merged once the kernel probes stop: walk it in an end probe, not "
                        "while they run",
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
      c.midrun = !c.kernel && !p->family.is(probes::ProbeKind::Begin) &&
                 !p->family.is(probes::ProbeKind::End) && !p->family.is(probes::ProbeKind::Error);
      c.followed.clear();
      p->body->accept(c);
    }
  // Kernel-side functions on their own (user-space ones were walked from their callers).
  c.midrun = false;
  c.kernel = true;
  for (auto* f : s.functions)
    if (f && f->body && !f->has_embedded_body() && reach.reaches(f, ProbeSide::Kernel))
      f->body->accept(c);
  for (auto& [v, kind] : c.value_kind)
    if (!kind.empty()) assigned.insert(v);
  return c.errors;
}

}  // namespace ukstap::passes
