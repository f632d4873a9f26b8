// Symbol resolution: names → declarations, for probe bodies and the functions they call.
#include <algorithm>
#include <map>

#include "passes/elaborate_steps.h"
#include "passes/kernel_module_c.h"
#include "passes/kernel_types.h"
#include "passes/skip_badvars.h"
#include "passes/stap_tapset_names.h"

namespace ukstap::passes {

namespace {

bool is_pretty_target(const std::string& name, const std::vector<ast::TargetComponent>& comps) {
  if (name.rfind("$$", 0) == 0) return true;
  return !comps.empty() && comps.back().kind == ast::TargetComponent::Kind::PrettyPrint;
}

// A char array ("char comm[16]") reads as a string, as in SystemTap; everything else is a long.
ast::Type target_type(const std::string& type_text) {
  if (type_text.find("char") != std::string::npos && type_text.find('[') != std::string::npos)
    return ast::Type::String;
  if (type_text == "string") return ast::Type::String;
  return ast::Type::Long;
}

class Resolver : public ast::TraversingVisitor {
 public:
  Resolver(Session& s, const SymbolTable& symbols, UsedSymbols& used)
      : s_(s), symbols_(symbols), used_(used) {}

  int errors = 0;
  std::set<const ast::TargetSymbol*> bad_targets;  // --skip-badvars: to be read as 0

  void resolve_probe(DerivedProbe& p, ast::Statement* piece, ast::StapFile* file) {
    probe_ = &p;
    function_ = nullptr;
    locals_ = &p.locals;
    file_ = file;
    run(piece);
  }
  void resolve_condition(DerivedProbe& p, ast::Expression* cond, ast::StapFile* file) {
    probe_ = &p;
    function_ = nullptr;
    locals_ = &p.locals;
    file_ = file;
    try {
      cond->accept(*this);
    } catch (const SemanticError& e) {
      report(e);
    }
  }
  void resolve_function(ast::Function& f) {
    probe_ = nullptr;
    function_ = &f;
    locals_ = &f.locals;
    file_ = symbols_.file_of(&f);
    // Embedded C in use, and the file-level C of its file (the headers and helpers it relies
    // on), must be C ukstap can compile (kernel_module_c.h). Checked here, when used, so that
    // -p1 stays a syntax check and a tapset's unused kernel C costs nothing.
    if (auto* ec = dynamic_cast<ast::EmbeddedCode*>(f.body)) {
      std::string what = passes::kernel_module_only_use(ec->code);
      if (what.empty() && file_)
        for (auto* top : file_->embeds)
          if (what.empty() && !(what = passes::kernel_module_only_use(top->code)).empty())
            return report(SemanticError(kernel_module_c_message(what), top->tok));
      if (!what.empty()) return report(SemanticError(kernel_module_c_message(what), f.tok));
    }
    if (f.body) run(f.body);
  }

 private:
  void run(ast::Statement* st) {
    try {
      st->accept(*this);
    } catch (const SemanticError& e) {
      report(e);
    }
  }
  void report(const SemanticError& e) {
    s_.diag.semantic_error(e);
    ++errors;
  }

  ast::Vardecl* find_local(const std::string& name) {
    if (function_)
      for (auto* a : function_->formal_args)
        if (a->name == name) return a;
    for (auto* l : *locals_)
      if (l->name == name) return l;
    return nullptr;
  }

  // A global visible from the code being resolved. A tapset alias's body is spliced into the
  // user's probe, and SystemTap has one namespace for all globals (langref "Variables"): there
  // a user global wins over a new local of the alias (`global count; probe syscall.read
  // {...}`: the alias's `count` is the global). Tapset functions stay isolated (find_global).
  // As SystemTap (elaborate.cxx find_var), that binding is announced: "cross-file global
  // variable reference to <the global> from: <the alias's identifier>", since the alias then
  // overwrites the user's variable. A tapset's own globals are found by the first lookup.
  ast::Vardecl* find_global(const std::string& name, const Token* tok) {
    ast::Vardecl* g = symbols_.find_global(name, file_);
    if (!g && probe_ && file_ && file_->is_tapset) {
      g = symbols_.find_global(name, nullptr);
      if (g && tok && g->tok && !g->synthetic)
        s_.diag.warning("cross-file global variable reference to " + describe_token(*g->tok) +
                            " from",
                        tok);
    }
    return g;
  }

  void use_global(ast::Vardecl* g) {
    if (used_.global_set.insert(g).second) used_.globals.push_back(g);
  }

  // A name in value position: a parameter, a local, a global, or a new local.
  void bind(ast::Symbol& e) {
    if (e.referent) return;
    if (auto* l = find_local(e.name)) {
      e.referent = l;
      return;
    }
    if (auto* g = find_global(e.name, e.tok)) {
      e.referent = g;
      use_global(g);
      return;
    }
    auto* l = s_.arena.node<ast::Vardecl>(e.tok);
    l->name = e.name;
    locals_->push_back(l);
    e.referent = l;
  }

  // A name that must be a global array or aggregate.
  void bind_global(ast::Symbol& e, const char* what) {
    if (!find_local(e.name))
      if (auto* g = find_global(e.name, e.tok)) {
        e.referent = g;
        use_global(g);
        return;
      }
    // A global of SystemTap's tapsets (argv, the *mib counters) is no typo of the script's.
    if (const char* tapset = stap_global_tapset(e.name))
      throw SemanticError("unresolved global '" + e.name +
                              "': it is declared by SystemTap's tapset " + tapset +
                              ", which ukstap's tapsets do not provide",
                          e.tok);
    throw SemanticError(std::string(what) + " locals not supported, missing global declaration?",
                        e.tok);
  }

  void bind_indexable(ast::Expression* base, const char* what) {
    if (auto* sym = dynamic_cast<ast::Symbol*>(base))
      bind_global(*sym, what);
    else if (base)
      base->accept(*this);
  }

 public:
  void visit(ast::Symbol& e) override { bind(e); }

  void visit(ast::ArrayIndex& e) override {
    bind_indexable(e.base, "array");
    for (auto* i : e.indexes)
      if (i) i->accept(*this);
  }

  void visit(ast::ForeachLoop& s) override {
    bind_indexable(s.base, "array");
    for (auto* i : s.indexes) bind(*i);
    if (s.value) bind(*s.value);
    for (auto* x : s.array_slice)
      if (x) x->accept(*this);
    if (s.limit) s.limit->accept(*this);
    if (s.body) s.body->accept(*this);
  }

  void visit(ast::AssignmentExpr& e) override {
    if (e.op == "<<<") {
      if (auto* sym = dynamic_cast<ast::Symbol*>(e.left)) bind_global(*sym, "aggregate");
      else e.left->accept(*this);
    } else {
      e.left->accept(*this);
    }
    e.right->accept(*this);
  }

  void visit(ast::StatOp& e) override { bind_indexable(e.stat, "aggregate"); }
  void visit(ast::HistogramOp& e) override { bind_indexable(e.stat, "aggregate"); }

  void visit(ast::TryBlock& s) override {
    if (s.try_block) s.try_block->accept(*this);
    if (s.catch_var) bind(*s.catch_var);
    if (s.catch_block) s.catch_block->accept(*this);
  }

  void visit(ast::FunctionCall& e) override {
    for (auto* a : e.args) a->accept(*this);
    if (e.referent) return;
    ast::Function* f = symbols_.find_function(e.name, file_, e.args.size());
    if (!f) {
      auto similar = symbols_.similar_functions(e.name);
      std::string msg = "unresolved function " + e.name;
      if (!similar.empty()) msg += " (similar: " + join(similar, ", ") + ")";
      throw SemanticError(msg, e.tok);
    }
    if (f->formal_args.size() != e.args.size())
      throw SemanticError("arity mismatch found (function '" + e.name + "' takes " +
                              std::to_string(f->formal_args.size()) + " args)",
                          e.tok);
    e.referent = f;
    if (used_.function_set.insert(f).second) used_.functions.push_back(f);
  }

  void visit(ast::TargetSymbol& e) override {
    for (auto& c : e.components)
      if (c.expr_index) c.expr_index->accept(*this);
    // BTF tracepoint arguments and members ($next->pid), char field indexing (kernel_types.h).
    bool chars = false;
    if (probe_ && kernel_target_type(*probe_, e, /*quiet=*/false, e.type, &chars)) {
      if (chars) s_.kernel_char_arrays.insert(&e);
      return;
    }
    // --skip-badvars: a $variable the point does not offer becomes 0 (passes/skip_badvars.h).
    if (s_.opts.skip_badvars && probe_ &&
        resolve_target(e.name, e.components, e.tok, /*quiet=*/true) == ast::Type::Unknown) {
      bad_targets.insert(&e);
      e.type = ast::Type::Long;
      return;
    }
    e.type = resolve_target(e.name, e.components, e.tok, /*quiet=*/false);
  }

  void visit(ast::CastOp& e) override {
    if (e.operand) e.operand->accept(*this);
    for (auto& c : e.components)
      if (c.expr_index) c.expr_index->accept(*this);
    bool chars = false;
    try {
      e.type = kernel_cast_type(e, /*quiet=*/false, &chars);
    } catch (const SemanticError& err) {
      // SystemTap looks a process probe's @cast type up in the probed program's DWARF; ukstap
      // only in the kernel's BTF, whose same-named type ("struct pt") is not the program's.
      if (!probe_ || !probe_->family.is(probes::ProbeKind::Uprobe) || !e.module.empty()) throw;
      throw SemanticError("@cast to \"" + e.type_name +
                              "\" in a process probe: user-space types are not supported "
                              "(@cast resolves against the kernel's BTF, where " +
                              err.what() + ")",
                          err.tok ? err.tok : e.tok);
    }
    if (chars) s_.kernel_char_arrays.insert(&e);
  }

  void visit(ast::DefinedOp& e) override {
    e.value = defined_value(e.operand);
    e.type = ast::Type::Long;
  }

  // @defined folds in pass 2, and a branch it rules out is dropped before anything in it is
  // resolved: `if (@defined($x)) y = $x` must not fail where $x does not exist.
  void visit(ast::IfStatement& s) override {
    int v = static_value(s.condition);
    if (v < 0) return ast::TraversingVisitor::visit(s);
    s.condition = literal(s.condition->tok, v);
    if (v) {
      s.else_stmt = nullptr;
      if (s.then_stmt) s.then_stmt->accept(*this);
    } else {
      s.then_stmt = s_.arena.node<ast::NullStatement>(s.tok);
      if (s.else_stmt) s.else_stmt->accept(*this);
    }
  }

  void visit(ast::TernaryExpression& e) override {
    int v = static_value(e.condition);
    if (v < 0) return ast::TraversingVisitor::visit(e);
    e.condition = literal(e.condition->tok, v);
    // The dead branch becomes the live one, so both have the same type and nothing in the
    // dead branch has to resolve.
    if (v)
      e.falsevalue = e.truevalue;
    else
      e.truevalue = e.falsevalue;
    e.truevalue->accept(*this);
  }

 private:
  ast::LiteralNumber* literal(const Token* tok, int64_t v) {
    auto* n = s_.arena.node<ast::LiteralNumber>(tok);
    n->value = v;
    n->type = ast::Type::Long;
    return n;
  }

  // 1/0 when `e` is decided now (@defined, literals, !, &&, || of those), else -1.
  int static_value(ast::Expression* e) {
    if (auto* d = dynamic_cast<ast::DefinedOp*>(e)) {
      d->value = defined_value(d->operand);
      return d->value;
    }
    if (auto* n = dynamic_cast<ast::LiteralNumber*>(e)) return n->value != 0;
    if (auto* u = dynamic_cast<ast::UnaryExpression*>(e)) {
      if (u->op != "!") return -1;
      int v = static_value(u->operand);
      return v < 0 ? -1 : !v;
    }
    if (auto* a = dynamic_cast<ast::LogicalAndExpr*>(e)) {
      int l = static_value(a->left);
      if (l == 0) return 0;
      return l == 1 ? static_value(a->right) : -1;
    }
    if (auto* o = dynamic_cast<ast::LogicalOrExpr*>(e)) {
      int l = static_value(o->left);
      if (l == 1) return 1;
      return l == 0 ? static_value(o->right) : -1;
    }
    return -1;
  }

  int defined_value(ast::Expression* operand) {
    if (auto* t = dynamic_cast<ast::TargetSymbol*>(operand)) {
      if (probe_ && tracepoint_field_unreadable(*probe_, *t)) return 0;  // a tp_btf probe
      ast::Type kt;
      if (probe_ && kernel_target_type(*probe_, *t, /*quiet=*/true, kt)) return kt != ast::Type::Unknown;
      return resolve_target(t->name, t->components, t->tok, /*quiet=*/true) !=
             ast::Type::Unknown;
    }
    if (auto* c = dynamic_cast<ast::CastOp*>(operand))
      return kernel_cast_type(*c, /*quiet=*/true) != ast::Type::Unknown;
    if (dynamic_cast<ast::AtVarOp*>(operand))
      return 0;  // no DWARF type information for them yet
    return 1;  // plain expressions are always defined
  }

  // The type of $name in the current probe, or Unknown (throwing unless quiet).
  ast::Type resolve_target(const std::string& name,
                           const std::vector<ast::TargetComponent>& comps, const Token* tok,
                           bool quiet) {
    if (!probe_) {
      if (quiet) return ast::Type::Unknown;
      throw SemanticError("target variable " + name + " used outside a probe handler", tok);
    }
    const auto& vars = probe_->target_vars;
    if (name == "$$vars" || name == "$$parms" || name == "$$locals" ||
        (name == "$$return" && !vars.empty())) {
      if (!vars.empty()) return ast::Type::String;
    } else {
      for (auto& [n, t] : vars)
        if (n == name) return is_pretty_target(name, comps) ? ast::Type::String : target_type(t);
    }
    if (quiet) return ast::Type::Unknown;
    std::vector<std::string> alts;
    for (auto& [n, t] : vars) alts.push_back(n);
    std::string kind = probe_->family.is(probes::ProbeKind::Tracepoint) ? "tracepoint variable" : "target variable";
    std::string msg = "unable to find " + kind + " '" + name + "'";
    if (!alts.empty()) msg += " (alternatives: " + join(alts, " ") + ")";
    else msg += " (probe point " + probe_->point->str() + " has no target variables)";
    throw SemanticError(msg, tok);
  }

  Session& s_;
  const SymbolTable& symbols_;
  UsedSymbols& used_;
  DerivedProbe* probe_ = nullptr;
  ast::Function* function_ = nullptr;
  std::vector<ast::Vardecl*>* locals_ = nullptr;
  const ast::StapFile* file_ = nullptr;
};

}  // namespace

int resolve_probe_symbols(
    Session& s, const SymbolTable& symbols, DerivedProbe& p,
    const std::vector<std::pair<const ast::Statement*, ast::StapFile*>>& piece_owners,
    UsedSymbols& used) {
  Resolver r(s, symbols, used);
  prefer_tracepoint_btf(p, piece_owners, s.user_file);
  // Each spliced piece resolves private names against the file it came from.
  for (auto* st : p.body->statements) {
    ast::StapFile* file = s.user_file;
    for (auto& [piece, f] : piece_owners)
      if (piece == st) file = f;
    r.resolve_probe(p, st, file);
  }
  if (p.condition) r.resolve_condition(p, p.condition, s.user_file);
  replace_bad_targets(s, p, r.bad_targets);
  if (!r.errors) r.errors += choose_tracepoint_context(s, p);
  return r.errors;
}

int resolve_pending_functions(Session& s, const SymbolTable& symbols, UsedSymbols& used,
                              size_t& next_function) {
  int errors = 0;
  // Resolving a function can discover more functions: walk the growing list.
  while (next_function < used.functions.size()) {
    Resolver r(s, symbols, used);
    r.resolve_function(*used.functions[next_function++]);
    errors += r.errors;
  }
  return errors;
}

}  // namespace ukstap::passes
