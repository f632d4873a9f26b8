#include "passes/skip_badvars.h"

namespace ukstap::passes {

namespace {

// Visits every expression slot of the tree and swaps the bad $variables in it for a 0. The
// slots are the fields ast.h declares as Expression*; each override fixes its node's slots,
// then recurses through the base class into what they now hold.
class BadTargetReplacer : public ast::TraversingVisitor {
 public:
  BadTargetReplacer(Session& s, const std::set<const ast::TargetSymbol*>& bad) : s_(s), bad_(bad) {}

  void fix(ast::Expression*& slot) {
    auto* t = dynamic_cast<ast::TargetSymbol*>(slot);
    if (!t || !bad_.count(t)) return;
    auto* zero = s_.arena.node<ast::LiteralNumber>(t->tok);
    zero->value = 0;
    zero->type = ast::Type::Long;
    slot = zero;
  }
  void fix_all(std::vector<ast::Expression*>& slots) {
    for (auto*& e : slots) fix(e);
  }

  void visit(ast::BinaryExpression& e) override { fix(e.left), fix(e.right), TraversingVisitor::visit(e); }
  void visit(ast::UnaryExpression& e) override { fix(e.operand), TraversingVisitor::visit(e); }
  void visit(ast::LogicalOrExpr& e) override { fix(e.left), fix(e.right), TraversingVisitor::visit(e); }
  void visit(ast::LogicalAndExpr& e) override { fix(e.left), fix(e.right), TraversingVisitor::visit(e); }
  void visit(ast::ComparisonExpr& e) override { fix(e.left), fix(e.right), TraversingVisitor::visit(e); }
  void visit(ast::ConcatenationExpr& e) override { fix(e.left), fix(e.right), TraversingVisitor::visit(e); }
  void visit(ast::RegexMatch& e) override { fix(e.left), TraversingVisitor::visit(e); }
  void visit(ast::TernaryExpression& e) override {
    fix(e.condition), fix(e.truevalue), fix(e.falsevalue), TraversingVisitor::visit(e);
  }
  // The right side only: a bad $variable as the target of a write stays (see the header).
  void visit(ast::AssignmentExpr& e) override { fix(e.right), TraversingVisitor::visit(e); }
  void visit(ast::TargetSymbol& e) override { fix_components(e.components), TraversingVisitor::visit(e); }
  void visit(ast::CastOp& e) override {
    fix(e.operand), fix_components(e.components), TraversingVisitor::visit(e);
  }
  void visit(ast::AtVarOp& e) override { fix_components(e.components), TraversingVisitor::visit(e); }
  void visit(ast::EntryOp& e) override { fix(e.operand), TraversingVisitor::visit(e); }
  void visit(ast::ArrayIndex& e) override { fix_all(e.indexes), TraversingVisitor::visit(e); }
  void visit(ast::FunctionCall& e) override { fix_all(e.args), TraversingVisitor::visit(e); }
  void visit(ast::PrintFormat& e) override { fix_all(e.args), TraversingVisitor::visit(e); }
  void visit(ast::ExprStatement& s) override { fix(s.value), TraversingVisitor::visit(s); }
  void visit(ast::IfStatement& s) override { fix(s.condition), TraversingVisitor::visit(s); }
  void visit(ast::ForLoop& s) override { fix(s.cond), TraversingVisitor::visit(s); }
  void visit(ast::ForeachLoop& s) override {
    fix_all(s.array_slice), fix(s.limit), TraversingVisitor::visit(s);
  }
  void visit(ast::ReturnStatement& s) override { fix(s.value), TraversingVisitor::visit(s); }

 private:
  void fix_components(std::vector<ast::TargetComponent>& comps) {
    for (auto& c : comps)
      if (c.kind == ast::TargetComponent::Kind::ExpressionIndex) fix(c.expr_index);
  }

  Session& s_;
  const std::set<const ast::TargetSymbol*>& bad_;
};

}  // namespace

void replace_bad_targets(Session& s, DerivedProbe& p, const std::set<const ast::TargetSymbol*>& bad) {
  if (bad.empty()) return;
  BadTargetReplacer r(s, bad);
  if (p.body) p.body->accept(r);
  if (p.condition) {
    r.fix(p.condition);
    p.condition->accept(r);
  }
}

}  // namespace ukstap::passes
