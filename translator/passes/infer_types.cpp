// Type inference: long, string and statistics, for variables, array keys and values, function
// parameters and results. Types flow both ways (an assignment types its left side from its right
// and the other way round), so the visitor runs to a fixed point, then reports what is left.
#include <algorithm>
#include <initializer_list>
#include <map>
#include <tuple>

#include "passes/elaborate_steps.h"

namespace ukstap::passes {

namespace {

using ast::Type;

class TypeInference : public ast::TraversingVisitor {
 public:
  explicit TypeInference(Session& s) : s_(s) {}

  bool changed = false;
  // Errors keyed by token and text, so a mismatch seen in every iteration is reported once.
  std::map<std::tuple<const Token*, std::string>, SemanticError> errors;
  std::vector<std::pair<ast::PrintFormat*, ast::Expression*>> print_args;  // checked at the end

  void run_probe(DerivedProbe& p) {
    function_ = nullptr;
    if (p.condition) {
      p.condition->accept(*this);
      expect(p.condition, Type::Long, p.condition->tok);
    }
    p.body->accept(*this);
  }
  void run_function(ast::Function& f) {
    function_ = &f;
    if (f.body) f.body->accept(*this);
  }

  void mismatch(const Token* tok, Type expected, Type found, const Token* first) {
    std::string msg = std::string("type mismatch: expected ") + ast::type_name(expected) +
                      " but found " + ast::type_name(found);
    if (first && first != tok)
      errors.emplace(std::make_tuple(tok, msg),
                     SemanticError(msg, tok,
                                   SemanticError(std::string("type was first inferred here (") +
                                                     ast::type_name(found) + ")",
                                                 first)));
    else
      errors.emplace(std::make_tuple(tok, msg), SemanticError(msg, tok));
  }
  void error(const Token* tok, const std::string& msg) {
    errors.emplace(std::make_tuple(tok, msg), SemanticError(msg, tok));
  }

  void set_type(Type& slot, const Token*& slot_tok, Type t, const Token* tok) {
    if (t == Type::Unknown) return;
    if (slot == Type::Unknown) {
      slot = t;
      slot_tok = tok;
      changed = true;
    } else if (slot != t) {
      mismatch(tok, t, slot, slot_tok);
    }
  }

  void set_arity(ast::Vardecl* v, int n, const Token* tok) {
    if (v->arity == -1) {
      v->arity = n;
      v->index_types.assign(n, Type::Unknown);
      changed = true;
    } else if (v->arity != n) {
      error(tok, "inconsistent arity (" + std::to_string(n) + " vs " + std::to_string(v->arity) +
                     ")");
    }
  }

  // The context wants `e` to be of type t: record it on e and on whatever e stands for.
  void expect(ast::Expression* e, Type t, const Token* tok) {
    if (!e || t == Type::Unknown) return;
    if (t == Type::String && e->type == Type::Long && s_.kernel_char_arrays.count(e)) {
      // A kernel char array where a string is wanted: its characters (passes/kernel_types.h).
      e->type = Type::String;
      changed = true;
      return;
    }
    if (auto* sym = dynamic_cast<ast::Symbol*>(e)) {
      if (sym->referent) set_type(sym->referent->type, sym->referent->type_tok, t, e->tok);
    } else if (auto* ai = dynamic_cast<ast::ArrayIndex*>(e)) {
      if (auto* base = dynamic_cast<ast::Symbol*>(ai->base); base && base->referent)
        set_type(base->referent->type, base->referent->type_tok, t, e->tok);
    } else if (auto* fc = dynamic_cast<ast::FunctionCall*>(e)) {
      if (fc->referent) set_type(fc->referent->type, fc->referent->type_tok, t, e->tok);
    } else if (auto* te = dynamic_cast<ast::TernaryExpression*>(e)) {
      expect(te->truevalue, t, tok);
      if (!te->folded()) expect(te->falsevalue, t, tok);
    } else if (auto* as = dynamic_cast<ast::AssignmentExpr*>(e)) {
      if (as->op == "=") {
        expect(as->left, t, tok);
        expect(as->right, t, tok);
      }
    } else if (auto* en = dynamic_cast<ast::EntryOp*>(e)) {
      expect(en->operand, t, tok);
    }
    if (e->type == Type::Unknown) {
      e->type = t;
      e->type_tok = tok;
      changed = true;
    } else if (e->type != t) {
      mismatch(e->tok, t, e->type, e->type_tok);
    }
  }

  // e is where an aggregate must be (x <<< v, @count(x), @hist_log(x)).
  void expect_stats(ast::Expression* e) {
    if (auto* sym = dynamic_cast<ast::Symbol*>(e)) {
      if (sym->referent) {
        set_arity(sym->referent, 0, e->tok);
        set_type(sym->referent->type, sym->referent->type_tok, Type::Stats, e->tok);
      }
      e->type = Type::Stats;
    } else if (auto* ai = dynamic_cast<ast::ArrayIndex*>(e)) {
      ai->accept(*this);
      expect(ai, Type::Stats, e->tok);
    } else if (e) {
      e->accept(*this);
      if (e->type != Type::Stats) error(e->tok, "expected an aggregate (statistics) value");
    }
  }

  void settle(ast::Expression& e, Type t) {
    if (e.type == Type::Unknown && t != Type::Unknown) {
      e.type = t;
      changed = true;
    }
  }

  // Both sides must end with the same type; whichever is known decides.
  void unify(ast::Expression* a, ast::Expression* b, const Token* tok) {
    Type t = a->type != Type::Unknown ? a->type : b->type;
    // `$next->comm == "sh"`: the kernel char array side reads as a string.
    if ((s_.kernel_char_arrays.count(a) && b->type == Type::String) ||
        (s_.kernel_char_arrays.count(b) && a->type == Type::String))
      t = Type::String;
    expect(a, t, tok);
    expect(b, t, tok);
  }

  void visit(ast::LiteralNumber& e) override { settle(e, Type::Long); }
  void visit(ast::LiteralString& e) override { settle(e, Type::String); }

  // An operator whose operands are `operand_type` and whose result is `result`, after its
  // children were visited.
  template <typename E>
  void typed_op(E& e, std::initializer_list<ast::Expression*> operands, Type operand_type,
                Type result) {
    TraversingVisitor::visit(e);
    for (auto* o : operands) expect(o, operand_type, e.tok);
    settle(e, result);
  }
  void visit(ast::BinaryExpression& e) override { typed_op(e, {e.left, e.right}, Type::Long, Type::Long); }
  void visit(ast::UnaryExpression& e) override { typed_op(e, {e.operand}, Type::Long, Type::Long); }
  void visit(ast::PreCrement& e) override { typed_op(e, {e.operand}, Type::Long, Type::Long); }
  void visit(ast::PostCrement& e) override { typed_op(e, {e.operand}, Type::Long, Type::Long); }
  void visit(ast::LogicalOrExpr& e) override { typed_op(e, {e.left, e.right}, Type::Long, Type::Long); }
  void visit(ast::LogicalAndExpr& e) override { typed_op(e, {e.left, e.right}, Type::Long, Type::Long); }
  void visit(ast::ComparisonExpr& e) override {
    TraversingVisitor::visit(e);
    unify(e.left, e.right, e.tok);
    settle(e, Type::Long);
  }
  void visit(ast::ConcatenationExpr& e) override {
    typed_op(e, {e.left, e.right}, Type::String, Type::String);
  }
  void visit(ast::RegexMatch& e) override { typed_op(e, {e.left}, Type::String, Type::Long); }
  void visit(ast::TernaryExpression& e) override {
    TraversingVisitor::visit(e);
    expect(e.condition, Type::Long, e.tok);
    Type t = e.type;
    if (t == Type::Unknown) t = e.truevalue->type;
    if (t == Type::Unknown) t = e.falsevalue->type;
    expect(e.truevalue, t, e.tok);
    if (!e.folded()) expect(e.falsevalue, t, e.tok);
    settle(e, t);
  }
  void visit(ast::AssignmentExpr& e) override {
    e.right->accept(*this);
    if (e.op == "<<<") {
      expect_stats(e.left);
      expect(e.right, Type::Long, e.tok);
      settle(e, Type::Long);
      return;
    }
    e.left->accept(*this);
    if (e.op == "=") {
      unify(e.left, e.right, e.tok);
      settle(e, e.left->type);
    } else if (e.op == ".=") {
      expect(e.left, Type::String, e.tok);
      expect(e.right, Type::String, e.tok);
      settle(e, Type::String);
    } else {
      expect(e.left, Type::Long, e.tok);
      expect(e.right, Type::Long, e.tok);
      settle(e, Type::Long);
    }
  }
  void visit(ast::Symbol& e) override {
    if (!e.referent) return;
    if (e.referent->arity > 0 && e.referent->is_global)
      error(e.tok, "inconsistent arity (0 vs " + std::to_string(e.referent->arity) + ")");
    else if (e.referent->arity == -1)
      set_arity(e.referent, 0, e.tok);
    settle(e, e.referent->type);
  }
  void visit(ast::TargetSymbol& e) override {
    TraversingVisitor::visit(e);
    settle(e, Type::Long);
  }
  void visit(ast::CastOp& e) override {
    TraversingVisitor::visit(e);
    settle(e, Type::Long);
  }
  void visit(ast::AtVarOp& e) override {
    TraversingVisitor::visit(e);
    settle(e, Type::Long);
  }
  void visit(ast::DefinedOp& e) override { settle(e, Type::Long); }
  void visit(ast::EntryOp& e) override {
    TraversingVisitor::visit(e);
    settle(e, e.operand->type);
  }
  void visit(ast::PerfOp& e) override { settle(e, Type::Long); }
  void visit(ast::HistogramOp& e) override { expect_stats(e.stat); }
  void visit(ast::StatOp& e) override {
    expect_stats(e.stat);
    settle(e, Type::Long);
  }
  void visit(ast::ArrayIndex& e) override {
    if (auto* h = dynamic_cast<ast::HistogramOp*>(e.base)) {
      h->accept(*this);
      for (auto* i : e.indexes)
        if (i) {
          i->accept(*this);
          expect(i, Type::Long, e.tok);
        }
      settle(e, Type::Long);
      return;
    }
    auto* base = dynamic_cast<ast::Symbol*>(e.base);
    if (!base || !base->referent) return;
    ast::Vardecl* v = base->referent;
    set_arity(v, static_cast<int>(e.indexes.size()), e.tok);
    key_types(v, e.indexes, e.tok);
    settle(e, v->type);
  }
  void key_types(ast::Vardecl* v, const std::vector<ast::Expression*>& keys, const Token* tok) {
    if (v->arity != static_cast<int>(keys.size())) return;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (!keys[k]) continue;  // '*' wildcard
      keys[k]->accept(*this);
      const Token* dummy = nullptr;
      set_type(v->index_types[k], dummy, keys[k]->type, keys[k]->tok);
      expect(keys[k], v->index_types[k], tok);
    }
  }
  void visit(ast::ArrayIn& e) override {
    e.operand->accept(*this);
    settle(e, Type::Long);
  }
  void visit(ast::FunctionCall& e) override {
    ast::Function* f = e.referent;
    for (size_t k = 0; k < e.args.size(); ++k) {
      e.args[k]->accept(*this);
      if (!f || k >= f->formal_args.size()) continue;
      ast::Vardecl* formal = f->formal_args[k];
      if (formal->type != Type::Unknown)
        expect(e.args[k], formal->type, e.args[k]->tok);
      else
        set_type(formal->type, formal->type_tok, e.args[k]->type, e.args[k]->tok);
    }
    if (f) settle(e, f->type);
  }
  void visit(ast::PrintFormat& e) override {
    for (auto* a : e.args) a->accept(*this);
    if (e.hist) e.hist->accept(*this);
    if (e.with_format) {
      size_t arg = 0;
      auto take = [&](Type t) {
        if (arg < e.args.size()) expect(e.args[arg], t, e.args[arg]->tok);
        ++arg;
      };
      for (auto& c : e.components) {
        if (c.conv == ast::FormatComponent::Conv::Literal) continue;
        if (c.width == -2) take(Type::Long);
        if (c.precision == -2) take(Type::Long);
        take(c.conv == ast::FormatComponent::Conv::String ? Type::String : Type::Long);
      }
      if (arg != e.args.size())
        error(e.tok, "Wrong number of args to formatted print operator");
    } else {
      for (auto* a : e.args) print_args.push_back({&e, a});
    }
    settle(e, e.to_stream ? Type::Long : Type::String);
  }

  void visit(ast::TryBlock& s) override {
    TraversingVisitor::visit(s);
    if (s.catch_var) expect(s.catch_var, Type::String, s.catch_var->tok);
  }
  void visit(ast::IfStatement& s) override {
    TraversingVisitor::visit(s);
    expect(s.condition, Type::Long, s.condition->tok);
  }
  void visit(ast::ForLoop& s) override {
    TraversingVisitor::visit(s);
    if (s.cond) expect(s.cond, Type::Long, s.cond->tok);
  }
  void visit(ast::ForeachLoop& s) override {
    if (auto* h = dynamic_cast<ast::HistogramOp*>(s.base)) {
      h->accept(*this);
      for (auto* i : s.indexes) expect(i, Type::Long, i->tok);
      if (s.value) expect(s.value, Type::Long, s.value->tok);
    } else if (auto* base = dynamic_cast<ast::Symbol*>(s.base); base && base->referent) {
      ast::Vardecl* v = base->referent;
      set_arity(v, static_cast<int>(s.indexes.size()), s.tok);
      std::vector<ast::Expression*> keys(s.indexes.begin(), s.indexes.end());
      key_types(v, keys, s.tok);
      if (!s.array_slice.empty()) key_types(v, s.array_slice, s.tok);
      if (s.value)
        expect(s.value, v->type == Type::Stats ? Type::Long : v->type, s.value->tok);
    }
    if (s.limit) {
      s.limit->accept(*this);
      expect(s.limit, Type::Long, s.limit->tok);
    }
    if (s.body) s.body->accept(*this);
  }
  void visit(ast::ReturnStatement& s) override {
    if (!s.value) return;
    s.value->accept(*this);
    if (!function_) return;
    if (function_->type != Type::Unknown)
      expect(s.value, function_->type, s.value->tok);
    else
      set_type(function_->type, function_->type_tok, s.value->type, s.value->tok);
  }
  void visit(ast::DeleteStatement& s) override {
    // `delete arr` names a whole array: no arity implied.
    if (dynamic_cast<ast::Symbol*>(s.value)) return;
    if (s.value) s.value->accept(*this);
  }

 private:
  Session& s_;
  ast::Function* function_ = nullptr;
};

// Finds the first token that refers to each variable, for "unresolved type" messages.
void report_unresolved(const std::vector<ast::Vardecl*>& vars, TypeInference& ti) {
  for (auto* v : vars) {
    if (v->type != Type::Unknown) {
      for (size_t k = 0; k < v->index_types.size(); ++k)
        if (v->index_types[k] == Type::Unknown)
          ti.error(v->tok, "unresolved type for identifier '" + v->name + "'");
      continue;
    }
    ti.error(v->tok, "unresolved type for identifier '" + v->name + "'");
  }
}

}  // namespace

int infer_types(Session& s) {
  TypeInference ti(s);
  for (int iter = 0; iter < 50; ++iter) {
    ti.changed = false;
    ti.errors.clear();
    ti.print_args.clear();
    for (auto* p : s.probes) ti.run_probe(*p);
    for (auto* f : s.functions) ti.run_function(*f);
    if (!ti.changed) break;
  }
  // Declared-but-unused globals are not in s.globals; every used variable must have a type.
  report_unresolved(s.globals, ti);
  for (auto* p : s.probes) report_unresolved(p->locals, ti);
  for (auto* f : s.functions) {
    report_unresolved(f->formal_args, ti);
    report_unresolved(f->locals, ti);
  }
  for (auto& [pf, arg] : ti.print_args) {
    if (arg->type == Type::Stats)
      ti.error(arg->tok, "type mismatch: expected long or string but found stats");
    else if (arg->type == Type::Unknown && !dynamic_cast<ast::Symbol*>(arg))
      ti.error(arg->tok, "unresolved type");
  }
  // Report in source order.
  std::vector<const SemanticError*> errs;
  for (auto& [k, e] : ti.errors) errs.push_back(&e);
  std::stable_sort(errs.begin(), errs.end(), [](const SemanticError* a, const SemanticError* b) {
    auto key = [](const SemanticError* e) {
      const Token* t = e->tok;
      return std::make_tuple(t && t->loc.file ? t->loc.file->is_tapset : true,
                             t ? t->loc.line : 0, t ? t->loc.column : 0);
    };
    return key(a) < key(b);
  });
  for (auto* e : errs) s.diag.semantic_error(*e);
  return static_cast<int>(errs.size());
}

}  // namespace ukstap::passes
