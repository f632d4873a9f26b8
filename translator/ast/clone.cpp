#include "ast/clone.h"

namespace ukstap::ast {

namespace {

class Cloner : public Visitor {
 public:
  explicit Cloner(Arena& a) : a_(a) {}

  Expression* expr(const Expression* e) {
    if (!e) return nullptr;
    Expression* saved = e_;
    const_cast<Expression*>(e)->accept(*this);
    Expression* r = e_;
    e_ = saved;
    return r;
  }
  Statement* stmt(const Statement* s) {
    if (!s) return nullptr;
    Statement* saved = s_;
    const_cast<Statement*>(s)->accept(*this);
    Statement* r = s_;
    s_ = saved;
    return r;
  }
  template <typename T>
  T* ex(const T* e) {
    return static_cast<T*>(expr(e));
  }
  template <typename T>
  T* st(const T* s) {
    return static_cast<T*>(stmt(s));
  }

  std::vector<TargetComponent> comps(const std::vector<TargetComponent>& in) {
    std::vector<TargetComponent> out = in;
    for (TargetComponent& c : out) c.expr_index = expr(c.expr_index);
    return out;
  }
  std::vector<Expression*> exprs(const std::vector<Expression*>& in) {
    std::vector<Expression*> out;
    out.reserve(in.size());
    for (const Expression* e : in) out.push_back(expr(e));
    return out;
  }

  // A fresh node of the same class with the token copied; resolution state left default.
  template <typename T>
  T* fresh(const T& src) {
    return a_.node<T>(src.tok);
  }

  // ------------------------------------------------------------------------------ expressions
  void visit(LiteralNumber& e) override {
    auto* n = fresh(e);
    n->value = e.value;
    e_ = n;
  }
  void visit(LiteralString& e) override {
    auto* n = fresh(e);
    n->value = e.value;
    e_ = n;
  }
  void visit(BinaryExpression& e) override {
    auto* n = fresh(e);
    n->left = expr(e.left);
    n->op = e.op;
    n->right = expr(e.right);
    e_ = n;
  }
  void visit(UnaryExpression& e) override {
    auto* n = fresh(e);
    n->op = e.op;
    n->operand = expr(e.operand);
    e_ = n;
  }
  void visit(PreCrement& e) override {
    auto* n = fresh(e);
    n->op = e.op;
    n->operand = expr(e.operand);
    e_ = n;
  }
  void visit(PostCrement& e) override {
    auto* n = fresh(e);
    n->operand = expr(e.operand);
    n->op = e.op;
    e_ = n;
  }
  void visit(LogicalOrExpr& e) override {
    auto* n = fresh(e);
    n->left = expr(e.left);
    n->right = expr(e.right);
    e_ = n;
  }
  void visit(LogicalAndExpr& e) override {
    auto* n = fresh(e);
    n->left = expr(e.left);
    n->right = expr(e.right);
    e_ = n;
  }
  void visit(ComparisonExpr& e) override {
    auto* n = fresh(e);
    n->left = expr(e.left);
    n->op = e.op;
    n->right = expr(e.right);
    e_ = n;
  }
  void visit(ConcatenationExpr& e) override {
    auto* n = fresh(e);
    n->left = expr(e.left);
    n->right = expr(e.right);
    e_ = n;
  }
  void visit(RegexMatch& e) override {
    auto* n = fresh(e);
    n->left = expr(e.left);
    n->op = e.op;
    n->regex = ex(e.regex);
    e_ = n;
  }
  void visit(TernaryExpression& e) override {
    auto* n = fresh(e);
    n->condition = expr(e.condition);
    n->truevalue = expr(e.truevalue);
    n->falsevalue = e.folded() ? n->truevalue : expr(e.falsevalue);
    e_ = n;
  }
  void visit(AssignmentExpr& e) override {
    auto* n = fresh(e);
    n->left = expr(e.left);
    n->op = e.op;
    n->right = expr(e.right);
    e_ = n;
  }
  void visit(Symbol& e) override {
    auto* n = fresh(e);
    n->name = e.name;  // referent stays null
    e_ = n;
  }
  void visit(TargetSymbol& e) override {
    auto* n = fresh(e);
    n->name = e.name;
    n->addressof = e.addressof;
    n->components = comps(e.components);
    e_ = n;
  }
  void visit(CastOp& e) override {
    auto* n = fresh(e);
    n->operand = expr(e.operand);
    n->type_name = e.type_name;
    n->module = e.module;
    n->addressof = e.addressof;
    n->components = comps(e.components);
    e_ = n;
  }
  void visit(AtVarOp& e) override {
    auto* n = fresh(e);
    n->target_name = e.target_name;
    n->cu_name = e.cu_name;
    n->module = e.module;
    n->addressof = e.addressof;
    n->components = comps(e.components);
    e_ = n;
  }
  void visit(DefinedOp& e) override {
    auto* n = fresh(e);
    n->operand = expr(e.operand);
    e_ = n;
  }
  void visit(EntryOp& e) override {
    auto* n = fresh(e);
    n->operand = expr(e.operand);
    e_ = n;
  }
  void visit(PerfOp& e) override {
    auto* n = fresh(e);
    n->operand = ex(e.operand);
    e_ = n;
  }
  void visit(HistogramOp& e) override {
    auto* n = fresh(e);
    n->kind = e.kind;
    n->stat = expr(e.stat);
    n->params = e.params;
    e_ = n;
  }
  void visit(StatOp& e) override {
    auto* n = fresh(e);
    n->op = e.op;
    n->stat = expr(e.stat);
    n->params = e.params;
    e_ = n;
  }
  void visit(ArrayIndex& e) override {
    auto* n = fresh(e);
    n->base = expr(e.base);
    n->indexes = exprs(e.indexes);
    e_ = n;
  }
  void visit(ArrayIn& e) override {
    auto* n = fresh(e);
    n->operand = ex(e.operand);
    e_ = n;
  }
  void visit(FunctionCall& e) override {
    auto* n = fresh(e);
    n->name = e.name;
    n->args = exprs(e.args);  // referent stays null
    e_ = n;
  }
  void visit(PrintFormat& e) override {
    auto* n = fresh(e);
    n->name = e.name;
    n->to_stream = e.to_stream;
    n->with_format = e.with_format;
    n->with_delim = e.with_delim;
    n->with_newline = e.with_newline;
    n->raw_format = e.raw_format;
    n->components = e.components;
    n->delimiter = e.delimiter;
    n->args = exprs(e.args);
    n->hist = ex(e.hist);
    e_ = n;
  }

  // ------------------------------------------------------------------------------- statements
  void visit(Block& s) override {
    auto* n = fresh(s);
    n->statements.reserve(s.statements.size());
    for (const Statement* x : s.statements) n->statements.push_back(stmt(x));
    s_ = n;
  }
  void visit(TryBlock& s) override {
    auto* n = fresh(s);
    n->try_block = stmt(s.try_block);
    n->catch_var = ex(s.catch_var);
    n->catch_block = stmt(s.catch_block);
    s_ = n;
  }
  void visit(EmbeddedCode& s) override {
    auto* n = fresh(s);
    n->code = s.code;
    s_ = n;
  }
  void visit(NullStatement& s) override { s_ = fresh(s); }
  void visit(ExprStatement& s) override {
    auto* n = fresh(s);
    n->value = expr(s.value);
    s_ = n;
  }
  void visit(IfStatement& s) override {
    auto* n = fresh(s);
    n->condition = expr(s.condition);
    n->then_stmt = stmt(s.then_stmt);
    n->else_stmt = stmt(s.else_stmt);
    s_ = n;
  }
  void visit(ForLoop& s) override {
    auto* n = fresh(s);
    n->init = st(s.init);
    n->cond = expr(s.cond);
    n->incr = st(s.incr);
    n->body = stmt(s.body);
    s_ = n;
  }
  void visit(ForeachLoop& s) override {
    auto* n = fresh(s);
    n->indexes.reserve(s.indexes.size());
    for (const Symbol* i : s.indexes) n->indexes.push_back(ex(i));
    n->array_slice = exprs(s.array_slice);
    n->base = expr(s.base);
    n->value = ex(s.value);
    n->sort_direction = s.sort_direction;
    n->sort_column = s.sort_column;
    n->sort_aggr = s.sort_aggr;
    n->limit = expr(s.limit);
    n->body = stmt(s.body);
    s_ = n;
  }
  void visit(ReturnStatement& s) override {
    auto* n = fresh(s);
    n->value = expr(s.value);
    s_ = n;
  }
  void visit(DeleteStatement& s) override {
    auto* n = fresh(s);
    n->value = expr(s.value);
    s_ = n;
  }
  void visit(NextStatement& s) override { s_ = fresh(s); }
  void visit(BreakStatement& s) override { s_ = fresh(s); }
  void visit(ContinueStatement& s) override { s_ = fresh(s); }

 private:
  Arena& a_;
  Expression* e_ = nullptr;
  Statement* s_ = nullptr;
};

}  // namespace

Expression* clone(Arena& arena, const Expression* e) {
  Cloner c(arena);
  return c.expr(e);
}

Statement* clone(Arena& arena, const Statement* s) {
  Cloner c(arena);
  return c.stmt(s);
}

Block* clone(Arena& arena, const Block* b) {
  Cloner c(arena);
  return static_cast<Block*>(c.stmt(b));
}

ProbePoint* clone(Arena& arena, const ProbePoint* pp) {
  if (!pp) return nullptr;
  Cloner c(arena);
  auto* n = arena.make<ProbePoint>();
  n->components.reserve(pp->components.size());
  for (const ProbePointComponent& comp : pp->components) {
    ProbePointComponent nc;
    nc.functor = comp.functor;
    nc.arg = c.expr(comp.arg);
    nc.tok = comp.tok;
    n->components.push_back(nc);
  }
  n->optional = pp->optional;
  n->sufficient = pp->sufficient;
  n->condition = c.expr(pp->condition);
  n->tok = pp->tok;
  return n;
}

}  // namespace ukstap::ast
