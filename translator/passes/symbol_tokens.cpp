#include "passes/symbol_tokens.h"

#include <regex>
#include <set>

namespace ukstap::passes {

bool returns_symbol_token(const ast::Function& f) {
  // The runtime's token makers (RUNTIME-HOOKS.md): _stp_usym_sprint, _stp_ksym_sprint,
  // _stp_ustack_sprint(_str), _stp_kstack_sprint(_str), _stp_[uk]stack_id_sprint, all writing
  // the function's result.
  static const std::regex maker(R"(_stp_[a-z_]*sprint[a-z_]*\s*\(\s*STAP_RETVALUE)");
  if (!f.from_tapset || !f.has_embedded_body()) return false;
  auto* code = dynamic_cast<const ast::EmbeddedCode*>(f.body);
  return code && std::regex_search(code->code, maker);
}

namespace {

const ast::Vardecl* array_of(const ast::Expression* base) {
  auto* sym = dynamic_cast<const ast::Symbol*>(base);
  return sym ? sym->referent : nullptr;
}

// Which symbolizing function's token an expression's value may be ("" when none).
struct Origins {
  SymbolTokens& r;

  template <typename M, typename K>
  static std::string at(const M& m, const K& k) {
    auto it = m.find(k);
    return it == m.end() ? std::string() : it->second;
  }

  std::string of(const ast::Expression* e) const {
    if (!e) return "";
    if (auto* c = dynamic_cast<const ast::FunctionCall*>(e)) {
      if (!c->referent) return "";
      if (returns_symbol_token(*c->referent)) return c->referent->name + "()";
      return at(r.functions, c->referent);
    }
    if (auto* s = dynamic_cast<const ast::Symbol*>(e)) return at(r.variables, s->referent);
    if (auto* a = dynamic_cast<const ast::ArrayIndex*>(e)) {
      const ast::Vardecl* v = array_of(a->base);
      return v ? at(r.variables, v) : "";
    }
    if (auto* c = dynamic_cast<const ast::ConcatenationExpr*>(e)) {
      std::string o = of(c->left);
      return o.empty() ? of(c->right) : o;
    }
    if (auto* t = dynamic_cast<const ast::TernaryExpression*>(e)) {
      std::string o = of(t->truevalue);  // a folded one has one branch (ast.h): walked once
      return o.empty() && !t->folded() ? of(t->falsevalue) : o;
    }
    if (auto* p = dynamic_cast<const ast::PrintFormat*>(e)) {
      if (p->to_stream) return "";
      for (auto* a : p->args)
        if (std::string o = of(a); !o.empty()) return o;
      return "";
    }
    if (auto* a = dynamic_cast<const ast::AssignmentExpr*>(e)) {
      std::string o = of(a->right);
      return o.empty() && a->op == ".=" ? of(a->left) : o;
    }
    return "";
  }
};

// One round of propagation: variables, array values and keys, function results and parameters
// that receive a token. Run until nothing changes.
struct Flow : ast::TraversingVisitor {
  SymbolTokens& r;
  Origins o{r};
  const ast::Function* current = nullptr;
  bool changed = false;
  explicit Flow(SymbolTokens& res) : r(res) {}

  template <typename M, typename K>
  void mark(M& m, const K& k, const std::string& origin) {
    if (origin.empty() || m.count(k)) return;
    m[k] = origin;
    changed = true;
  }

  void visit(ast::AssignmentExpr& e) override {
    std::string origin = o.of(&e);
    if (auto* s = dynamic_cast<ast::Symbol*>(e.left); s && s->referent)
      mark(r.variables, static_cast<const ast::Vardecl*>(s->referent), origin);
    if (auto* a = dynamic_cast<ast::ArrayIndex*>(e.left))
      if (const ast::Vardecl* v = array_of(a->base)) mark(r.variables, v, origin);
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::ReturnStatement& s) override {
    if (current && s.value) mark(r.functions, current, o.of(s.value));
    ast::TraversingVisitor::visit(s);
  }
  void visit(ast::FunctionCall& e) override {
    // Into a script function's parameter; not into a tapset's (TokenReadCheck: a tapset function is
    // never given a placeholder, the error is at the script's call).
    if (e.referent && !e.referent->has_embedded_body() && !e.referent->from_tapset)
      for (size_t i = 0; i < e.args.size() && i < e.referent->formal_args.size(); ++i)
        mark(r.variables, static_cast<const ast::Vardecl*>(e.referent->formal_args[i]),
             o.of(e.args[i]));
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::ArrayIndex& e) override {
    if (const ast::Vardecl* v = array_of(e.base))
      for (size_t i = 0; i < e.indexes.size(); ++i) mark(r.keys, std::make_pair(v, i), o.of(e.indexes[i]));
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::ForeachLoop& s) override {
    if (const ast::Vardecl* v = array_of(s.base)) {
      for (size_t i = 0; i < s.indexes.size(); ++i)
        if (s.indexes[i] && s.indexes[i]->referent)
          mark(r.variables, static_cast<const ast::Vardecl*>(s.indexes[i]->referent),
               Origins::at(r.keys, std::make_pair(v, i)));
      if (s.value && s.value->referent)
        mark(r.variables, static_cast<const ast::Vardecl*>(s.value->referent),
             Origins::at(r.variables, v));
    }
    ast::TraversingVisitor::visit(s);
  }
};

// The uses that read a token's bytes.
struct TokenReadCheck : ast::TraversingVisitor {
  Session& s;
  SymbolTokens& r;
  Origins o{r};
  TokenReadCheck(Session& ss, SymbolTokens& res) : s(ss), r(res) {}

  std::set<const Token*> reported;  // one body may serve several points (syscall.getdents)

  void fail(const std::string& origin, const std::string& use, const Token* tok) {
    report(origin + " returns a placeholder that user space replaces with the text only when it "
                    "is printed; " + use + " would read the placeholder instead (print it, or use "
                    "it as an array key)",
           tok);
  }
  void report(const std::string& message, const Token* tok) {
    if (!reported.insert(tok).second) return;
    ++r.errors;
    s.diag.semantic_error(SemanticError(message, tok));
  }

  // sprintf formats in the probe, before user space puts the text in: a width, a precision or
  // a flag would measure or cut the placeholder (printf pads in user space, after the text is
  // in: loader/output.cpp). An unadorned %s keeps the placeholder whole.
  void visit(ast::PrintFormat& e) override {
    if (!e.to_stream && e.with_format) {
      size_t a = 0;
      for (const auto& comp : e.components) {
        if (comp.conv == ast::FormatComponent::Conv::Literal) continue;
        if (comp.width == -2) ++a;
        if (comp.precision == -2) ++a;
        bool plain = comp.conv == ast::FormatComponent::Conv::String && comp.width == -1 &&
                     comp.precision == -1 && comp.flag == 0;
        if (a < e.args.size() && e.args[a] && !plain)
          if (std::string origin = o.of(e.args[a]); !origin.empty())
            fail(origin, e.name + "'s padded or cut conversion", e.args[a]->tok ? e.args[a]->tok : e.tok);
        ++a;
      }
    }
    ast::TraversingVisitor::visit(e);
  }

  // An array whose key holds placeholders is keyed by them: a text key (a literal, a string
  // from elsewhere) never equals one, so `cnt["main"]`, `["main"] in cnt` and `delete
  // cnt["main"]` would silently miss what SystemTap finds. Keys that come from the
  // placeholders themselves (foreach variables, the same calls) stay allowed.
  void visit(ast::ArrayIndex& e) override {
    if (const ast::Vardecl* v = array_of(e.base))
      for (size_t i = 0; i < e.indexes.size(); ++i) {
        std::string origin = Origins::at(r.keys, std::make_pair(v, i));
        if (origin.empty() || !e.indexes[i] || !o.of(e.indexes[i]).empty()) continue;
        report("array '" + v->name + "' is keyed by the placeholders " + origin +
                   " returns (user space replaces them with the text only when printed); a key "
                   "that is not one would never match them (key the array by text another way, "
                   "or read it with foreach)",
               e.indexes[i]->tok ? e.indexes[i]->tok : e.tok);
      }
    ast::TraversingVisitor::visit(e);
  }

  static bool empty_literal(const ast::Expression* e) {
    auto* l = dynamic_cast<const ast::LiteralString*>(e);
    return l && l->value.empty();
  }
  void visit(ast::ComparisonExpr& e) override {
    std::string origin = o.of(e.left);
    if (origin.empty()) origin = o.of(e.right);
    // `symname(a) != ""` is answered right by the placeholder: a symbol's text is never empty
    // (an unknown address prints as 0x...), and neither is a placeholder. A stack's may be.
    bool symbol = origin.rfind("sprint_", 0) != 0;
    bool vs_empty = (e.op == "==" || e.op == "!=") && (empty_literal(e.left) || empty_literal(e.right));
    if (!origin.empty() && !(symbol && vs_empty)) fail(origin, "this comparison", e.tok);
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::RegexMatch& e) override {
    if (std::string origin = o.of(e.left); !origin.empty()) fail(origin, "this regex match", e.tok);
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::FunctionCall& e) override {
    // The script's own functions get the token in a parameter (Flow); the tapsets' read it (C
    // ones, and script ones such as isinstr() calling strpos()), except log(), whose message is
    // printed through the decoder.
    bool reads = !e.referent || e.referent->from_tapset;
    if (e.referent && e.referent->has_embedded_body() && e.referent->name == "log") reads = false;
    if (reads)
      for (auto* a : e.args)
        if (std::string origin = o.of(a); !origin.empty()) {
          fail(origin, e.name + "()", e.tok);
          break;
        }
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::ForeachLoop& e) override {
    if (const ast::Vardecl* v = array_of(e.base); v && e.sort_direction != 0) {
      std::string origin = e.sort_column == 0 ? Origins::at(r.variables, v)
                                              : Origins::at(r.keys, std::make_pair(v, size_t(e.sort_column - 1)));
      const Token* at = e.sort_column == 0 || e.sort_column > e.indexes.size() || !e.indexes[e.sort_column - 1]
                            ? e.base->tok
                            : e.indexes[e.sort_column - 1]->tok;
      if (!origin.empty()) fail(origin, "sorting by it", at ? at : e.tok);
    }
    ast::TraversingVisitor::visit(e);
  }
};

template <typename V>
void over_program(const Session& s, V& v, const ast::Function** current) {
  for (auto* p : s.probes)
    if (p && p->body) {
      *current = nullptr;
      p->body->accept(v);
    }
  for (auto* f : s.functions)
    if (f && f->body && !f->has_embedded_body()) {
      *current = f;
      f->body->accept(v);
    }
}

}  // namespace

SymbolTokens check_symbol_tokens(Session& s) {
  SymbolTokens r;
  Flow flow(r);
  do {
    flow.changed = false;
    over_program(s, flow, &flow.current);
  } while (flow.changed);
  TokenReadCheck check(s, r);
  const ast::Function* unused = nullptr;
  over_program(s, check, &unused);
  return r;
}

}  // namespace ukstap::passes
