// Checks that do not depend on types: control flow that cannot be, target writes without -g,
// and SystemTap's "never-assigned local variable" warning.
#include <algorithm>
#include <map>
#include <set>

#include "passes/elaborate_steps.h"
#include "passes/symbol_table.h"

namespace ukstap::passes {

namespace {

class Checker : public ast::TraversingVisitor {
 public:
  Checker(Session& s, bool in_function, bool privileged)
      : s_(s), in_function_(in_function), privileged_(privileged) {}
  int errors = 0;
  std::set<const ast::Vardecl*> written;  // locals given a value somewhere

  void visit(ast::ForLoop& s) override {
    ++loops_;
    TraversingVisitor::visit(s);
    --loops_;
  }
  void visit(ast::ForeachLoop& s) override {
    for (auto* i : s.indexes) written.insert(i->referent);
    if (s.value) written.insert(s.value->referent);
    ++loops_;
    TraversingVisitor::visit(s);
    --loops_;
  }
  void visit(ast::BreakStatement& s) override {
    if (!loops_) fail("break statement outside loop", s.tok);
  }
  void visit(ast::ContinueStatement& s) override {
    if (!loops_) fail("continue statement outside loop", s.tok);
  }
  void visit(ast::NextStatement& s) override {
    if (in_function_) fail("next statement in a function", s.tok);
  }
  void visit(ast::ReturnStatement& s) override {
    if (!in_function_) fail("return statement outside function", s.tok);
    TraversingVisitor::visit(s);
  }
  // Pass 2 rewrote every @entry of a probe (passes/entry_values.cpp); one in a function has no
  // return probe to belong to.
  void visit(ast::EntryOp& e) override {
    if (in_function_) fail("@entry is only valid in a .return probe, not in a function", e.tok);
    TraversingVisitor::visit(e);
  }
  void visit(ast::TryBlock& s) override {
    if (s.catch_var) written.insert(s.catch_var->referent);
    TraversingVisitor::visit(s);
  }
  void visit(ast::AssignmentExpr& e) override {
    note_write(e.left);
    TraversingVisitor::visit(e);
  }
  void visit(ast::PreCrement& e) override {
    note_write(e.operand);
    TraversingVisitor::visit(e);
  }
  void visit(ast::PostCrement& e) override {
    note_write(e.operand);
    TraversingVisitor::visit(e);
  }

 private:
  void note_write(ast::Expression* lhs) {
    if (auto* sym = dynamic_cast<ast::Symbol*>(lhs)) written.insert(sym->referent);
    if (dynamic_cast<ast::TargetSymbol*>(lhs) && !privileged_ && !s_.opts.guru_mode)
      fail("write to target variable not permitted; need stap -g", lhs->tok);
  }
  void fail(const std::string& msg, const Token* tok) {
    s_.diag.semantic_error(SemanticError(msg, tok));
    ++errors;
  }
  Session& s_;
  bool in_function_;
  bool privileged_;
  int loops_ = 0;
};

// "never-assigned local variable 'x'": read but never given a value. As stap, with the
// variables it may be a misspelling of (" (similar: x, y)"): the assigned locals and parameters
// of the same probe or function, and the globals in use.
void warn_unassigned(Session& s, const std::vector<ast::Vardecl*>& locals,
                     const std::set<const ast::Vardecl*>& written) {
  for (auto* l : locals) {
    if (written.count(l)) continue;
    std::vector<std::string> names;
    for (auto* v : written)
      if (v && v != l && !v->is_global) names.push_back(v->name);
    std::sort(names.begin(), names.end());  // `written` is ordered by address
    for (auto* g : s.globals)
      if (g && !g->is_private && !g->synthetic) names.push_back(g->name);
    auto similar = closest_names(l->name, names);
    s.diag.warning("never-assigned local variable '" + l->name + "'" +
                       (similar.empty() ? "" : " (similar: " + join(similar, ", ") + ")"),
                   l->tok);
  }
}

// SystemTap keeps one histogram per statistic: its pass 2 refuses a second kind, or a second
// @hist_linear with other parameters, on the same statistic ("multiple histogram types
// declared on 'NAME'"). @hist_log twice, or the same @hist_linear twice, is one histogram.
class HistogramChecker : public ast::TraversingVisitor {
 public:
  explicit HistogramChecker(Session& s) : s_(s) {}
  int errors = 0;
  void visit(ast::HistogramOp& h) override {
    const ast::Vardecl* v = nullptr;
    if (auto* sym = dynamic_cast<ast::Symbol*>(h.stat)) v = sym->referent;
    if (auto* ai = dynamic_cast<ast::ArrayIndex*>(h.stat))
      if (auto* sym = dynamic_cast<ast::Symbol*>(ai->base)) v = sym->referent;
    if (v) {
      auto [it, fresh] = first_.emplace(v, &h);
      const ast::HistogramOp& f = *it->second;
      if (!fresh && (f.kind != h.kind || f.params != h.params) && reported_.insert(v).second) {
        s_.diag.semantic_error(
            SemanticError("multiple histogram types declared on '" + v->name + "'", h.tok));
        ++errors;
      }
    }
    TraversingVisitor::visit(h);
  }

 private:
  Session& s_;
  std::map<const ast::Vardecl*, const ast::HistogramOp*> first_;
  std::set<const ast::Vardecl*> reported_;
};

}  // namespace

int check_semantics(Session& s) {
  int errors = 0;
  for (auto* p : s.probes) {
    // A procfs probe's $value is its result, not a kernel variable: writing it needs no -g.
    Checker c(s, false, (p->source && p->source->privileged) ||
                            p->family.is(probes::ProbeKind::Procfs));
    // Alias prologues come from tapsets, which may write $targets; the user's body may not.
    p->body->accept(c);
    errors += c.errors;
    warn_unassigned(s, p->locals, c.written);
  }
  for (auto* f : s.functions) {
    Checker c(s, true, f->from_tapset);
    if (f->body) f->body->accept(c);
    errors += c.errors;
    std::set<const ast::Vardecl*> written = c.written;
    for (auto* a : f->formal_args) written.insert(a);
    warn_unassigned(s, f->locals, written);
  }
  HistogramChecker hists(s);
  for (auto* p : s.probes) p->body->accept(hists);
  for (auto* f : s.functions)
    if (f->body) f->body->accept(hists);
  return errors + hists.errors;
}

}  // namespace ukstap::passes
