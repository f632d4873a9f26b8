// The -p1 parse-tree printer. Mirrors the print methods of SystemTap's staptree.cxx, so the
// output is byte-for-byte what `stap -p1` prints (see printer.h for the quirks kept).
#include "ast/printer.h"

#include <ostream>
#include <sstream>

#include "driver/passes.h"
#include "driver/session.h"

namespace ukstap::ast {

namespace {

// The string as SystemTap's lexer keeps it: escapes stay written as escapes (stap passes them
// through to C), except `\"`, which the lexer turns into a bare quote. Our AST holds unescaped
// values, so this re-escapes them.
std::string lexed_form(const std::string& value) {
  std::string out;
  out.reserve(value.size() + 8);
  for (unsigned char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += '\\';
          out += static_cast<char>('0' + ((c >> 6) & 7));
          out += static_cast<char>('0' + ((c >> 3) & 7));
          out += static_cast<char>('0' + (c & 7));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

// stap's lex_cast_qstring (util.h): quotes, escapes `"` and `\`, non-printables as \ooo.
std::string lex_cast_qstring(const std::string& in) {
  std::string out = "\"";
  for (unsigned char c : in) {
    if (c < 0x20 || c >= 0x7f) {
      out += '\\';
      out += static_cast<char>('0' + ((c >> 6) & 7));
      out += static_cast<char>('0' + ((c >> 3) & 7));
      out += static_cast<char>('0' + (c & 7));
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

bool is_compound_end(const Statement* s);

class Printer : public Visitor {
 public:
  Printer(std::ostream& o, const PrintOptions& opts) : o_(o), opts_(opts) {}

  void expr(const Expression* e) {
    if (e)
      const_cast<Expression*>(e)->accept(*this);
    else
      o_ << "<null>";
  }
  void stmt(const Statement* s) {
    if (s)
      const_cast<Statement*>(s)->accept(*this);
    else
      o_ << ";";
  }
  // A printf format or print delimiter: stap prints lex_cast_qstring of the lexed text.
  void format_string(const std::string& value) {
    if (opts_.reparsable)
      o_ << quote_string(value);
    else
      o_ << lex_cast_qstring(lexed_form(value));
  }

  void paren(const Expression* e) {
    o_ << '(';
    expr(e);
    o_ << ')';
  }
  void binary(const Expression* l, const std::string& op, const Expression* r) {
    paren(l);
    o_ << ' ' << op << ' ';
    paren(r);
  }
  void components(const std::vector<TargetComponent>& comps) {
    for (const TargetComponent& c : comps) {
      switch (c.kind) {
        case TargetComponent::Kind::PrettyPrint:
          if (opts_.reparsable) {
            o_ << c.member;
            break;
          }
          [[fallthrough]];
        case TargetComponent::Kind::StructMember: o_ << "->" << c.member; break;
        case TargetComponent::Kind::LiteralIndex: o_ << '[' << c.num_index << ']'; break;
        case TargetComponent::Kind::ExpressionIndex:
          o_ << '[';
          expr(c.expr_index);
          o_ << ']';
          break;
      }
    }
  }
  void index_list(const std::vector<Expression*>& idx) {
    o_ << '[';
    for (size_t i = 0; i < idx.size(); ++i) {
      if (i > 0) o_ << ", ";
      if (idx[i])
        expr(idx[i]);
      else
        o_ << '*';
    }
    o_ << ']';
  }

  // ------------------------------------------------------------------------------ expressions
  void visit(LiteralNumber& e) override { o_ << e.value; }
  void visit(LiteralString& e) override { o_ << quote_string(e.value); }
  void visit(BinaryExpression& e) override { binary(e.left, e.op, e.right); }
  void visit(UnaryExpression& e) override {
    o_ << e.op;
    paren(e.operand);
  }
  void visit(PreCrement& e) override {
    o_ << e.op;
    paren(e.operand);
  }
  void visit(PostCrement& e) override {
    paren(e.operand);
    o_ << e.op;
  }
  void visit(LogicalOrExpr& e) override { binary(e.left, "||", e.right); }
  void visit(LogicalAndExpr& e) override { binary(e.left, "&&", e.right); }
  void visit(ComparisonExpr& e) override { binary(e.left, e.op, e.right); }
  void visit(ConcatenationExpr& e) override { binary(e.left, ".", e.right); }
  void visit(RegexMatch& e) override {
    // The parser takes no parenthesized regex, so the right side is bare.
    paren(e.left);
    o_ << ' ' << e.op << ' ';
    expr(e.regex);
  }
  void visit(TernaryExpression& e) override {
    if (e.folded()) {  // as stap -p2 shows a folded @defined: the live branch only
      paren(e.truevalue);
      return;
    }
    paren(e.condition);
    o_ << '?';
    paren(e.truevalue);
    o_ << ':';
    paren(e.falsevalue);
  }
  void visit(AssignmentExpr& e) override { binary(e.left, e.op, e.right); }
  void visit(Symbol& e) override { o_ << e.name; }
  void visit(TargetSymbol& e) override {
    if (e.addressof) o_ << '&';
    o_ << e.name;
    components(e.components);
  }
  void visit(CastOp& e) override {
    if (e.addressof) o_ << '&';
    if (e.type_name.empty()) {
      // An autocast (`expr->member`, `&expr`): print it as written, so it parses back.
      expr(e.operand);
      components(e.components);
      return;
    }
    o_ << "@cast(";
    expr(e.operand);
    o_ << ", " << quote_for_qstring(e.type_name);
    if (!e.module.empty()) o_ << ", " << quote_for_qstring(e.module);
    o_ << ')';
    components(e.components);
  }
  void visit(AtVarOp& e) override {
    if (e.addressof) o_ << '&';
    std::string name = e.target_name;
    if (!e.cu_name.empty()) {
      std::string suffix = "@" + e.cu_name;
      if (name.size() < suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        name += suffix;
    }
    o_ << "@var(\"" << name << '"';
    if (!e.module.empty()) o_ << ", " << quote_for_qstring(e.module);
    o_ << ')';
    components(e.components);
  }
  void visit(DefinedOp& e) override {
    o_ << "@defined(";
    expr(e.operand);
    o_ << ')';
  }
  void visit(EntryOp& e) override {
    o_ << "@entry(";
    expr(e.operand);
    o_ << ')';
  }
  void visit(PerfOp& e) override {
    o_ << "@perf(";
    expr(e.operand);
    o_ << ')';
  }
  void visit(HistogramOp& e) override {
    o_ << (e.kind == HistogramOp::Kind::Linear ? "@hist_linear(" : "@hist_log(");
    expr(e.stat);
    if (e.kind == HistogramOp::Kind::Linear)
      for (int64_t p : e.params) o_ << ", " << p;
    o_ << ')';
  }
  void visit(StatOp& e) override {
    o_ << '@' << e.op << '(';
    expr(e.stat);
    if (e.op == "variance" && e.params.size() == 1) o_ << ", " << e.params[0];
    o_ << ')';
  }
  void visit(ArrayIndex& e) override {
    expr(e.base);
    index_list(e.indexes);
  }
  void visit(ArrayIn& e) override {
    if (!e.operand) {
      o_ << "<null>";
      return;
    }
    index_list(e.operand->indexes);
    o_ << " in ";
    expr(e.operand->base);
  }
  void visit(FunctionCall& e) override {
    o_ << e.name << '(';
    for (size_t i = 0; i < e.args.size(); ++i) {
      if (i > 0) o_ << ", ";
      expr(e.args[i]);
    }
    o_ << ')';
  }
  void visit(PrintFormat& e) override {
    o_ << e.name << '(';
    if (e.with_format) format_string(e.raw_format);
    if (e.with_delim) format_string(e.delimiter);
    if (e.hist) expr(e.hist);
    for (size_t i = 0; i < e.args.size(); ++i) {
      if (i > 0 || e.with_format || e.with_delim) o_ << ", ";
      expr(e.args[i]);
    }
    o_ << ')';
  }

  // ------------------------------------------------------------------------------- statements
  void visit(Block& s) override {
    o_ << "{\n";
    for (const Statement* st : s.statements) {
      if (opts_.reparsable) {
        stmt(st);
        if (!is_compound_end(st)) o_ << ';';
        o_ << '\n';
      } else {
        stmt(st);
        o_ << ";\n";
      }
    }
    o_ << '}';
  }
  void visit(TryBlock& s) override {
    if (opts_.reparsable) {
      o_ << "try ";
      braced(s.try_block);
      o_ << " catch ";
      if (s.catch_var) o_ << '(' << s.catch_var->name << ") ";
      braced(s.catch_block);
      return;
    }
    o_ << "try {\n";
    if (s.try_block) {
      stmt(s.try_block);
      o_ << '\n';
    }
    o_ << "} catch ";
    if (s.catch_var) o_ << '(' << s.catch_var->name << ") ";
    o_ << "{\n";
    if (s.catch_block) {
      stmt(s.catch_block);
      o_ << '\n';
    }
    o_ << "}\n";
  }
  void visit(EmbeddedCode& s) override { o_ << "%{" << s.code << "%}"; }
  void visit(NullStatement&) override { o_ << ';'; }
  void visit(ExprStatement& s) override {
    if (s.value)
      expr(s.value);
    else
      o_ << ';';
  }
  void visit(IfStatement& s) override {
    o_ << "if (";
    expr(s.condition);
    o_ << ") ";
    stmt(s.then_stmt);  // a null then-statement prints as ";"
    if (opts_.reparsable) {
      if (s.else_stmt) {
        o_ << "\nelse ";
        stmt(s.else_stmt);
      }
      return;
    }
    o_ << '\n';
    if (s.else_stmt) {
      o_ << "else ";
      stmt(s.else_stmt);
      o_ << '\n';
    }
  }
  void visit(ForLoop& s) override {
    o_ << "for (";
    if (s.init) stmt(s.init);
    o_ << "; ";
    if (s.cond)
      expr(s.cond);
    else
      o_ << '1';  // stap's parser fills an empty condition with the literal 1
    o_ << "; ";
    if (s.incr) stmt(s.incr);
    o_ << ") ";
    stmt(s.body);
  }
  void visit(ForeachLoop& s) override {
    o_ << "foreach (";
    if (s.value) {
      expr(s.value);
      o_ << " = ";
    }
    o_ << '[';
    for (size_t i = 0; i < s.indexes.size(); ++i) {
      if (i > 0) o_ << ", ";
      expr(s.indexes[i]);
      if (s.sort_direction != 0 && s.sort_column == i + 1)
        o_ << (s.sort_direction > 0 ? '+' : '-');
    }
    o_ << "] in ";
    expr(s.base);
    if (!s.array_slice.empty()) index_list(s.array_slice);
    if (s.sort_direction != 0 && s.sort_column == 0) {
      if (!s.sort_aggr.empty()) o_ << " @" << s.sort_aggr;
      o_ << (s.sort_direction > 0 ? '+' : '-');
    }
    if (s.limit) {
      o_ << " limit ";
      expr(s.limit);
    }
    o_ << ") ";
    stmt(s.body);
  }
  void visit(ReturnStatement& s) override {
    if (s.value) {
      o_ << "return ";
      expr(s.value);
    } else {
      o_ << "return";
    }
  }
  void visit(DeleteStatement& s) override {
    o_ << "delete ";
    expr(s.value);
  }
  void visit(NextStatement&) override { o_ << "next"; }
  void visit(BreakStatement&) override { o_ << "break"; }
  void visit(ContinueStatement&) override { o_ << "continue"; }

 private:
  // @cast/@var type and module names: stap prints them with lex_cast_qstring of the raw text.
  std::string quote_for_qstring(const std::string& value) {
    return opts_.reparsable ? quote_string(value) : lex_cast_qstring(lexed_form(value));
  }
  void braced(const Statement* s) {
    if (s && dynamic_cast<const Block*>(s)) {
      stmt(s);
    } else {
      o_ << "{\n";
      if (s) {
        stmt(s);
        if (!is_compound_end(s)) o_ << ';';
        o_ << '\n';
      }
      o_ << '}';
    }
  }

  std::ostream& o_;
  const PrintOptions& opts_;
};

// Reparsable mode: does the statement end in a `}` (or is it a bare `;`), so that no `;` is
// needed to end it?
bool is_compound_end(const Statement* s) {
  if (!s) return true;  // printed as ";"
  if (dynamic_cast<const Block*>(s) || dynamic_cast<const TryBlock*>(s) ||
      dynamic_cast<const NullStatement*>(s))
    return true;
  if (auto* i = dynamic_cast<const IfStatement*>(s))
    return is_compound_end(i->else_stmt ? i->else_stmt : i->then_stmt);
  if (auto* f = dynamic_cast<const ForLoop*>(s)) return is_compound_end(f->body);
  if (auto* f = dynamic_cast<const ForeachLoop*>(s)) return is_compound_end(f->body);
  if (auto* e = dynamic_cast<const ExprStatement*>(s)) return e->value == nullptr;
  return false;
}

void print_points(std::ostream& o, const std::vector<ProbePoint*>& pts, const char* sep,
                  const PrintOptions& opts) {
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i > 0) o << sep;
    if (pts[i]) print(o, *pts[i], true, opts);
  }
}

}  // namespace

std::string quote_string(const std::string& value) {
  std::string out = "\"";
  for (char c : lexed_form(value)) {
    if (c == '"') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

void print(std::ostream& o, const Expression& e, const PrintOptions& opts) {
  Printer p(o, opts);
  p.expr(&e);
}

std::string to_string(const Expression& e, const PrintOptions& opts) {
  std::ostringstream o;
  print(o, e, opts);
  return o.str();
}

std::string to_string(const Statement& s, const PrintOptions& opts) {
  std::ostringstream o;
  Printer p(o, opts);
  p.stmt(&s);
  return o.str();
}

void print(std::ostream& o, const Statement& s, int indent, const PrintOptions& opts) {
  if (indent <= 0) {
    Printer p(o, opts);
    p.stmt(&s);
    return;
  }
  std::string text = to_string(s, opts);
  std::string pad(static_cast<size_t>(indent), ' ');
  for (size_t i = 0; i < text.size(); ++i) {
    o << text[i];
    if (text[i] == '\n' && i + 1 < text.size()) o << pad;
  }
}

void print(std::ostream& o, const ProbePoint& pp, bool with_extras, const PrintOptions& opts) {
  Printer p(o, opts);
  for (size_t i = 0; i < pp.components.size(); ++i) {
    if (i > 0) o << '.';
    const ProbePointComponent& c = pp.components[i];
    o << c.functor;
    if (c.arg) {
      o << '(';
      p.expr(c.arg);
      o << ')';
    }
  }
  if (!with_extras) return;
  if (pp.sufficient)
    o << '!';
  else if (pp.optional)
    o << '?';
  if (pp.condition) {
    o << " if (";
    p.expr(pp.condition);
    o << ')';
  }
}

void print(std::ostream& o, const Vardecl& v, const PrintOptions& opts) {
  o << v.name;
  if (v.wrap) o << '%';
  if (v.maxsize > 0) o << '[' << v.maxsize << ']';
  if (v.arity > 0 || !v.index_types.empty()) o << "[...]";
  if (v.init) {
    o << " = ";
    print(o, *v.init, opts);
  }
}

void print(std::ostream& o, const Function& f, const PrintOptions& opts) {
  // stap prints no types here, even for `function f:long (n:long)`.
  o << "function " << f.name << " (";
  for (size_t i = 0; i < f.formal_args.size(); ++i) {
    if (i > 0) o << ", ";
    if (f.formal_args[i]) print(o, *f.formal_args[i], opts);
  }
  o << ")\n";
  if (f.body) print(o, *f.body, 0, opts);
}

void print(std::ostream& o, const Probe& p, const PrintOptions& opts) {
  o << "probe ";
  if (auto* a = dynamic_cast<const ProbeAlias*>(&p)) {
    print_points(o, a->alias_names, " = ", opts);
    o << (a->epilogue_style ? " += " : " = ");
    print_points(o, a->locations, ", ", opts);
  } else {
    print_points(o, p.locations, ",", opts);
  }
  if (p.body)
    print(o, *p.body, 0, opts);
  else
    o << "{\n}";
  if (auto* a = dynamic_cast<const ProbeAlias*>(&p); a && a->epilogue) {
    o << ",\n";
    print(o, *a->epilogue, 0, opts);
  }
}

void print(std::ostream& o, const StapFile& f, const PrintOptions& opts) {
  o << "# file " << f.name << '\n';
  // stap prints file-level embedded code with no separator at all.
  for (const EmbeddedCode* e : f.embeds)
    if (e) print(o, *e, 0, opts);
  for (const Vardecl* g : f.globals) {
    if (!g) continue;
    o << "global ";
    print(o, *g, opts);
    o << '\n';
  }
  for (const ProbeAlias* a : f.aliases) {
    if (!a) continue;
    print(o, *a, opts);
    o << '\n';
  }
  for (const Probe* p : f.probes) {
    if (!p) continue;
    print(o, *p, opts);
    o << '\n';
  }
  for (const Function* fn : f.functions) {
    if (!fn) continue;
    print(o, *fn, opts);
    o << '\n';
  }
}

}  // namespace ukstap::ast

namespace ukstap {

void print_pass1(Session& s, std::ostream& out) {
  // -p1 must print a program that parses back to the same tree (issue #2), so it uses the
  // reparsable layout: stap's own dump doubles printf escapes and nests try bodies each round.
  ast::PrintOptions opts;
  opts.reparsable = true;
  out << "# parse tree dump\n";
  if (s.user_file) ast::print(out, *s.user_file, opts);
  out << '\n';
  // stap -p1 -v also dumps every tapset file that was parsed.
  if (s.opts.verbose > 0) {
    for (const ast::StapFile* f : s.tapset_files) {
      if (!f) continue;
      ast::print(out, *f, opts);
      out << '\n';
    }
  }
}

}  // namespace ukstap
