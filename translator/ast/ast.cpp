// accept() dispatch, the traversing visitor and small AST helpers.
#include "ast/ast.h"

#include <sstream>

#include "ast/printer.h"

namespace ukstap::ast {

const char* type_name(Type t) {
  switch (t) {
    case Type::Unknown: return "unknown";
    case Type::Long: return "long";
    case Type::String: return "string";
    case Type::Stats: return "stats";
  }
  return "unknown";
}

// ------------------------------------------------------------------------------------ accept()

#define UKSTAP_ACCEPT(T) \
  void T::accept(Visitor& v) { v.visit(*this); }

UKSTAP_ACCEPT(LiteralNumber)
UKSTAP_ACCEPT(LiteralString)
UKSTAP_ACCEPT(BinaryExpression)
UKSTAP_ACCEPT(UnaryExpression)
UKSTAP_ACCEPT(PreCrement)
UKSTAP_ACCEPT(PostCrement)
UKSTAP_ACCEPT(LogicalOrExpr)
UKSTAP_ACCEPT(LogicalAndExpr)
UKSTAP_ACCEPT(ComparisonExpr)
UKSTAP_ACCEPT(ConcatenationExpr)
UKSTAP_ACCEPT(RegexMatch)
UKSTAP_ACCEPT(TernaryExpression)
UKSTAP_ACCEPT(AssignmentExpr)
UKSTAP_ACCEPT(Symbol)
UKSTAP_ACCEPT(TargetSymbol)
UKSTAP_ACCEPT(CastOp)
UKSTAP_ACCEPT(AtVarOp)
UKSTAP_ACCEPT(DefinedOp)
UKSTAP_ACCEPT(EntryOp)
UKSTAP_ACCEPT(PerfOp)
UKSTAP_ACCEPT(HistogramOp)
UKSTAP_ACCEPT(StatOp)
UKSTAP_ACCEPT(ArrayIndex)
UKSTAP_ACCEPT(ArrayIn)
UKSTAP_ACCEPT(FunctionCall)
UKSTAP_ACCEPT(PrintFormat)
UKSTAP_ACCEPT(Block)
UKSTAP_ACCEPT(TryBlock)
UKSTAP_ACCEPT(EmbeddedCode)
UKSTAP_ACCEPT(NullStatement)
UKSTAP_ACCEPT(ExprStatement)
UKSTAP_ACCEPT(IfStatement)
UKSTAP_ACCEPT(ForLoop)
UKSTAP_ACCEPT(ForeachLoop)
UKSTAP_ACCEPT(ReturnStatement)
UKSTAP_ACCEPT(DeleteStatement)
UKSTAP_ACCEPT(NextStatement)
UKSTAP_ACCEPT(BreakStatement)
UKSTAP_ACCEPT(ContinueStatement)

#undef UKSTAP_ACCEPT

// Vardecl is not an Expression/Statement, so it has no visit(); it hands its initializer over.
void Vardecl::accept(Visitor& v) {
  if (init) init->accept(v);
}

// ------------------------------------------------------------------------------ file-level bits

bool Function::has_embedded_body() const {
  return body != nullptr && dynamic_cast<const EmbeddedCode*>(body) != nullptr;
}

std::string ProbePoint::str() const {
  std::string out;
  for (size_t i = 0; i < components.size(); ++i) {
    if (i > 0) out += '.';
    const ProbePointComponent& c = components[i];
    out += c.functor;
    if (c.arg) {
      out += '(';
      if (auto* n = dynamic_cast<const LiteralNumber*>(c.arg))
        out += std::to_string(n->value);
      else if (auto* s = dynamic_cast<const LiteralString*>(c.arg))
        out += quote_string(s->value);
      else
        out += to_string(*c.arg);
      out += ')';
    }
  }
  return out;
}

static bool has_glob_char(const std::string& s) {
  return s.find_first_of("*?[{") != std::string::npos;
}

bool ProbePoint::has_wildcard() const {
  for (const ProbePointComponent& c : components) {
    if (has_glob_char(c.functor)) return true;
    if (auto* s = dynamic_cast<const LiteralString*>(c.arg))
      if (has_glob_char(s->value)) return true;
  }
  return false;
}

// ----------------------------------------------------------------------- the traversing visitor

static inline void visit_opt(Visitor& v, Expression* e) {
  if (e) e->accept(v);
}
static inline void visit_opt(Visitor& v, Statement* s) {
  if (s) s->accept(v);
}

void TraversingVisitor::visit_components(std::vector<TargetComponent>& comps) {
  for (TargetComponent& c : comps)
    if (c.kind == TargetComponent::Kind::ExpressionIndex) visit_opt(*this, c.expr_index);
}

void TraversingVisitor::visit(LiteralNumber&) {}
void TraversingVisitor::visit(LiteralString&) {}
void TraversingVisitor::visit(BinaryExpression& e) {
  visit_opt(*this, e.left);
  visit_opt(*this, e.right);
}
void TraversingVisitor::visit(UnaryExpression& e) { visit_opt(*this, e.operand); }
void TraversingVisitor::visit(PreCrement& e) { visit_opt(*this, e.operand); }
void TraversingVisitor::visit(PostCrement& e) { visit_opt(*this, e.operand); }
void TraversingVisitor::visit(LogicalOrExpr& e) {
  visit_opt(*this, e.left);
  visit_opt(*this, e.right);
}
void TraversingVisitor::visit(LogicalAndExpr& e) {
  visit_opt(*this, e.left);
  visit_opt(*this, e.right);
}
void TraversingVisitor::visit(ComparisonExpr& e) {
  visit_opt(*this, e.left);
  visit_opt(*this, e.right);
}
void TraversingVisitor::visit(ConcatenationExpr& e) {
  visit_opt(*this, e.left);
  visit_opt(*this, e.right);
}
void TraversingVisitor::visit(RegexMatch& e) {
  visit_opt(*this, e.left);
  visit_opt(*this, e.regex);
}
void TraversingVisitor::visit(TernaryExpression& e) {
  visit_opt(*this, e.condition);
  visit_opt(*this, e.truevalue);
  if (!e.folded()) visit_opt(*this, e.falsevalue);
}
void TraversingVisitor::visit(AssignmentExpr& e) {
  visit_opt(*this, e.left);
  visit_opt(*this, e.right);
}
void TraversingVisitor::visit(Symbol&) {}
void TraversingVisitor::visit(TargetSymbol& e) { visit_components(e.components); }
void TraversingVisitor::visit(CastOp& e) {
  visit_opt(*this, e.operand);
  visit_components(e.components);
}
void TraversingVisitor::visit(AtVarOp& e) { visit_components(e.components); }
void TraversingVisitor::visit(DefinedOp& e) { visit_opt(*this, e.operand); }
void TraversingVisitor::visit(EntryOp& e) { visit_opt(*this, e.operand); }
void TraversingVisitor::visit(PerfOp& e) { visit_opt(*this, e.operand); }
void TraversingVisitor::visit(HistogramOp& e) { visit_opt(*this, e.stat); }
void TraversingVisitor::visit(StatOp& e) { visit_opt(*this, e.stat); }
void TraversingVisitor::visit(ArrayIndex& e) {
  // Source order: the base comes first (`a[i]`), unlike SystemTap's indexes-then-base.
  visit_opt(*this, e.base);
  for (Expression* i : e.indexes) visit_opt(*this, i);
}
void TraversingVisitor::visit(ArrayIn& e) { visit_opt(*this, e.operand); }
void TraversingVisitor::visit(FunctionCall& e) {
  for (Expression* a : e.args) visit_opt(*this, a);
}
void TraversingVisitor::visit(PrintFormat& e) {
  visit_opt(*this, e.hist);
  for (Expression* a : e.args) visit_opt(*this, a);
}

void TraversingVisitor::visit(Block& s) {
  for (Statement* st : s.statements) visit_opt(*this, st);
}
void TraversingVisitor::visit(TryBlock& s) {
  visit_opt(*this, s.try_block);
  visit_opt(*this, s.catch_var);
  visit_opt(*this, s.catch_block);
}
void TraversingVisitor::visit(EmbeddedCode&) {}
void TraversingVisitor::visit(NullStatement&) {}
void TraversingVisitor::visit(ExprStatement& s) { visit_opt(*this, s.value); }
void TraversingVisitor::visit(IfStatement& s) {
  visit_opt(*this, s.condition);
  visit_opt(*this, s.then_stmt);
  visit_opt(*this, s.else_stmt);
}
void TraversingVisitor::visit(ForLoop& s) {
  visit_opt(*this, s.init);
  visit_opt(*this, s.cond);
  visit_opt(*this, s.incr);
  visit_opt(*this, s.body);
}
void TraversingVisitor::visit(ForeachLoop& s) {
  // Source order: foreach (value = [indexes] in base[array_slice] limit L) body
  visit_opt(*this, s.value);
  for (Symbol* i : s.indexes) visit_opt(*this, i);
  visit_opt(*this, s.base);
  for (Expression* e : s.array_slice) visit_opt(*this, e);
  visit_opt(*this, s.limit);
  visit_opt(*this, s.body);
}
void TraversingVisitor::visit(ReturnStatement& s) { visit_opt(*this, s.value); }
void TraversingVisitor::visit(DeleteStatement& s) { visit_opt(*this, s.value); }
void TraversingVisitor::visit(NextStatement&) {}
void TraversingVisitor::visit(BreakStatement&) {}
void TraversingVisitor::visit(ContinueStatement&) {}

}  // namespace ukstap::ast
