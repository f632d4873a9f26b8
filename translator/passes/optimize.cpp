// SystemTap's pass-2 optimizer, the part that matters for probe cost: an assignment to a local
// that nothing reads is dropped when its right side has no side effects, repeatedly, and locals
// and functions left unused disappear. Tapset aliases compute every variable a script might want
// (`argstr`, `flags_str`, quoted file names): without this, every syscall event would pay for
// all of them. `-u` turns it off.
#include <functional>
#include <map>
#include <set>

#include "passes/elaborate_steps.h"

namespace ukstap::passes {

namespace {

// Which functions may have effects beyond their return value: embedded C unless it says
// /* pure */, script functions that write globals, print, or call impure functions.
class Purity {
 public:
  bool pure(ast::Function* f) {
    auto it = memo_.find(f);
    if (it != memo_.end()) return it->second;
    memo_[f] = false;  // recursion: assume impure
    bool p;
    if (f->has_embedded_body()) {
      p = false;
      for (auto& pr : f->pragmas) p |= pr == "pure";
    } else {
      p = !f->body || !has_effects(f->body, true);
    }
    memo_[f] = p;
    return p;
  }

  // Does the node (and what it calls) have effects other than on the frame's own locals?
  bool has_effects(ast::Statement* s, bool in_function) { return check(s, in_function); }
  bool has_effects(ast::Expression* e) { return check(e, false); }

 private:
  struct Finder : ast::TraversingVisitor {
    Purity& purity;
    bool in_function;
    bool found = false;
    Finder(Purity& p, bool f) : purity(p), in_function(f) {}
    static bool global_lvalue(ast::Expression* e) {
      if (auto* s = dynamic_cast<ast::Symbol*>(e)) return s->referent && s->referent->is_global;
      return dynamic_cast<ast::ArrayIndex*>(e) != nullptr;  // arrays are always global
    }
    void visit(ast::AssignmentExpr& e) override {
      // Writing a local is invisible outside; in a probe body we are asked about an expression
      // whose own assignment is the one being removed, so any nested assignment counts.
      if (!in_function || global_lvalue(e.left) || e.op == "<<<") found = true;
      TraversingVisitor::visit(e);
    }
    void visit(ast::PreCrement& e) override {
      if (!in_function || global_lvalue(e.operand)) found = true;
      TraversingVisitor::visit(e);
    }
    void visit(ast::PostCrement& e) override {
      if (!in_function || global_lvalue(e.operand)) found = true;
      TraversingVisitor::visit(e);
    }
    void visit(ast::FunctionCall& e) override {
      if (!e.referent || !purity.pure(e.referent)) found = true;
      TraversingVisitor::visit(e);
    }
    void visit(ast::PrintFormat& e) override {
      if (e.to_stream) found = true;
      TraversingVisitor::visit(e);
    }
    void visit(ast::DeleteStatement& s) override {
      if (!in_function || global_lvalue(s.value)) found = true;
      TraversingVisitor::visit(s);
    }
    void visit(ast::EmbeddedCode&) override { found = true; }
    void visit(ast::NextStatement&) override { found = true; }
    // Division can raise "division by 0": an error is an effect.
    void visit(ast::BinaryExpression& e) override {
      if (e.op == "/" || e.op == "%") {
        auto* n = dynamic_cast<ast::LiteralNumber*>(e.right);
        if (!n || n->value == 0) found = true;
      }
      TraversingVisitor::visit(e);
    }
    void visit(ast::StatOp& e) override {
      if (e.op != "count" && e.op != "sum") found = true;  // "empty aggregate"
      TraversingVisitor::visit(e);
    }
  };
  template <typename N>
  bool check(N* n, bool in_function) {
    if (!n) return false;
    Finder f(*this, in_function);
    n->accept(f);
    return f.found;
  }
  std::map<ast::Function*, bool> memo_;
};

// Locals that are read somewhere (a Symbol not in the left position of a plain assignment).
struct ReadFinder : ast::TraversingVisitor {
  std::set<const ast::Vardecl*> read;
  void visit(ast::Symbol& e) override { read.insert(e.referent); }
  void visit(ast::AssignmentExpr& e) override {
    auto* sym = dynamic_cast<ast::Symbol*>(e.left);
    if (sym && e.op == "=") {
      e.right->accept(*this);
      return;
    }
    TraversingVisitor::visit(e);
  }
};

// Replaces `x = pure_expr;` statements whose x is never read with null statements.
struct Eliminator : ast::TraversingVisitor {
  Session& s;
  Purity& purity;
  const std::set<const ast::Vardecl*>& read;
  bool changed = false;
  Eliminator(Session& s, Purity& p, const std::set<const ast::Vardecl*>& r)
      : s(s), purity(p), read(r) {}

  bool removable(ast::Statement* st) {
    auto* es = dynamic_cast<ast::ExprStatement*>(st);
    if (!es) return false;
    auto* as = dynamic_cast<ast::AssignmentExpr*>(es->value);
    if (!as || as->op != "=") return false;
    auto* sym = dynamic_cast<ast::Symbol*>(as->left);
    if (!sym || !sym->referent || sym->referent->is_global || read.count(sym->referent))
      return false;
    return !purity.has_effects(as->right);
  }
  // `if (c) ;` (both branches empty once their assignments went) with a condition without
  // effects reads nothing any more: the tapsets' `if (flags & O_CREAT) argstr = ... else
  // argstr = ...` kept flags, the quoted file name and the flag string of every open probe.
  bool empty_if(ast::Statement* st) {
    auto* is = dynamic_cast<ast::IfStatement*>(st);
    auto empty = [](ast::Statement* b) {
      if (!b || dynamic_cast<ast::NullStatement*>(b)) return true;
      auto* blk = dynamic_cast<ast::Block*>(b);
      if (!blk) return false;
      for (auto* x : blk->statements)
        if (!dynamic_cast<ast::NullStatement*>(x)) return false;
      return true;
    };
    return is && empty(is->then_stmt) && empty(is->else_stmt) && !purity.has_effects(is->condition);
  }
  // Replaces `x = pure_expr;` by a null statement (stap's warning when the script wrote it).
  bool drop_assignment(ast::Statement*& st) {
    if (!removable(st)) return false;
    auto* as = static_cast<ast::AssignmentExpr*>(static_cast<ast::ExprStatement*>(st)->value);
    const Token* tok = as->tok;
    if (tok && tok->loc.file && !tok->loc.file->is_tapset)
      s.diag.warning("Eliding assignment to '" + static_cast<ast::Symbol*>(as->left)->name + "'",
                     tok);
    st = s.arena.node<ast::NullStatement>(st->tok);
    changed = true;
    return true;
  }
  // A branch that is one statement (`if (c) x = e`) is not in a block of its own; nor is the
  // `if` of an `else if`: an empty one goes too, so a whole chain left empty is elided.
  void visit(ast::IfStatement& is) override {
    is.condition->accept(*this);
    for (ast::Statement** st : {&is.then_stmt, &is.else_stmt}) {
      if (!*st || drop_assignment(*st)) continue;
      (*st)->accept(*this);
      if (empty_if(*st)) {
        *st = s.arena.node<ast::NullStatement>((*st)->tok);
        changed = true;
      }
    }
  }
  void visit(ast::Block& b) override {
    for (auto*& st : b.statements) {
      if (empty_if(st)) {
        st = s.arena.node<ast::NullStatement>(st->tok);
        changed = true;
      } else if (!drop_assignment(st)) {
        st->accept(*this);
      }
    }
  }
};

// Drops locals nothing refers to any more.
void prune_locals(std::vector<ast::Vardecl*>& locals,
                  const std::function<void(ast::TraversingVisitor&)>& walk) {
  struct All : ast::TraversingVisitor {
    std::set<const ast::Vardecl*> used;
    void visit(ast::Symbol& e) override { used.insert(e.referent); }
    void visit(ast::ForeachLoop& s) override {
      for (auto* i : s.indexes) used.insert(i->referent);
      if (s.value) used.insert(s.value->referent);
      TraversingVisitor::visit(s);
    }
    void visit(ast::TryBlock& s) override {
      if (s.catch_var) used.insert(s.catch_var->referent);
      TraversingVisitor::visit(s);
    }
  } all;
  walk(all);
  std::vector<ast::Vardecl*> kept;
  for (auto* l : locals)
    if (all.used.count(l)) kept.push_back(l);
  locals = kept;
}

struct CallCollector : ast::TraversingVisitor {
  std::vector<ast::Function*> order;
  std::set<ast::Function*> seen;
  void visit(ast::FunctionCall& e) override {
    TraversingVisitor::visit(e);
    if (e.referent && seen.insert(e.referent).second) {
      order.push_back(e.referent);
      if (e.referent->body) e.referent->body->accept(*this);
    }
  }
};

}  // namespace

void optimize(Session& s) {
  Purity purity;
  for (auto* p : s.probes) {
    for (int round = 0; round < 20; ++round) {
      ReadFinder rf;
      p->body->accept(rf);
      if (p->condition) p->condition->accept(rf);
      Eliminator el(s, purity, rf.read);
      p->body->accept(el);
      if (!el.changed) break;
    }
    prune_locals(p->locals, [&](ast::TraversingVisitor& v) {
      p->body->accept(v);
      if (p->condition) p->condition->accept(v);
    });
  }
  // Functions still called by some probe (in first-call order), and globals still referenced.
  CallCollector calls;
  for (auto* p : s.probes) {
    p->body->accept(calls);
    if (p->condition) p->condition->accept(calls);
  }
  std::vector<ast::Function*> kept;
  for (auto* f : s.functions)
    if (calls.seen.count(f)) kept.push_back(f);
  s.functions = kept;
  struct GlobalUse : ast::TraversingVisitor {
    std::set<const ast::Vardecl*> used;
    void visit(ast::Symbol& e) override { used.insert(e.referent); }
  } gu;
  for (auto* p : s.probes) {
    p->body->accept(gu);
    if (p->condition) p->condition->accept(gu);
  }
  for (auto* f : s.functions)
    if (f->body) f->body->accept(gu);
  std::vector<ast::Vardecl*> globals;
  for (auto* g : s.globals)
    if (gu.used.count(g)) globals.push_back(g);
  s.globals = globals;
}

}  // namespace ukstap::passes
