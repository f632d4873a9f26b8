#include "parse/parser.h"

#include <fnmatch.h>
#include <sys/utsname.h>
#include <zlib.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include "parse/lexer.h"

namespace ukstap::parse {

using namespace ukstap::ast;

// A macro being expanded.
struct Activation {
  const Token* tok = nullptr;  // the invocation
  const Macro* macro = nullptr;
  size_t cursor = 0;
  std::map<std::string, const Macro*> params;
};

// ------------------------------------------------------------------------------ environment

static std::map<std::string, std::string> read_kernel_config(const std::string& release) {
  std::map<std::string, std::string> cfg;
  std::string text;
  {
    std::ifstream in("/boot/config-" + release);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      text = ss.str();
    }
  }
  if (text.empty()) {
    // zlib, not `zcat` through a shell: that cost ~10-20 ms of every run's start-up.
    if (gzFile z = gzopen("/proc/config.gz", "rb")) {
      char buf[16384];
      int n;
      while ((n = gzread(z, buf, sizeof buf)) > 0) text.append(buf, (size_t)n);
      gzclose(z);
    }
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("CONFIG_", 0) != 0) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    cfg[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return cfg;
}

PreprocEnv PreprocEnv::from_session(const Session& s) {
  static bool have_machine = false;
  static std::string release, machine;
  static std::map<std::string, std::string> config;
  if (!have_machine) {
    struct utsname u;
    if (uname(&u) == 0) {
      release = u.release;
      machine = u.machine;
    }
    config = read_kernel_config(release);
    have_machine = true;
  }
  PreprocEnv e;
  e.kernel_vr = release;
  e.kernel_v = release.substr(0, release.find('-'));
  if (!machine.empty()) e.arch = machine == "aarch64" ? "arm64" : machine;
  e.guru_mode = s.opts.guru_mode;
  if (!s.opts.compatible.empty()) e.systemtap_v = s.opts.compatible;  // --compatible=V
  e.kernel_config = config;
  e.args = s.opts.args;
  return e;
}

// ---------------------------------------------------------------------------------- formats

std::vector<FormatComponent> parse_format(const std::string& fmt) {
  std::vector<FormatComponent> out;
  auto literal = [&](const std::string& text) {
    if (text.empty()) return;
    if (!out.empty() && out.back().conv == FormatComponent::Conv::Literal)
      out.back().literal += text;
    else {
      FormatComponent c;
      c.literal = text;
      out.push_back(c);
    }
  };
  const std::invalid_argument bad("invalid or missing conversion specifier");
  size_t i = 0, n = fmt.size();
  std::string pending;
  while (i < n) {
    if (fmt[i] != '%') {
      pending += fmt[i++];
      continue;
    }
    ++i;
    if (i < n && fmt[i] == '%') {
      pending += '%';
      ++i;
      continue;
    }
    literal(pending);
    pending.clear();
    FormatComponent c;
    if (i < n && std::strchr("0+- #", fmt[i]) && fmt[i] != '\0') c.flag = fmt[i++];
    auto number = [&](int& target) {
      if (i < n && fmt[i] == '*') {
        target = -2;
        ++i;
        return;
      }
      if (i < n && std::isdigit(static_cast<unsigned char>(fmt[i]))) {
        long v = 0;
        while (i < n && std::isdigit(static_cast<unsigned char>(fmt[i]))) {
          v = v * 10 + (fmt[i++] - '0');
          if (v > INT_MAX / 10) throw bad;
        }
        target = static_cast<int>(v);
      }
    };
    number(c.width);
    if (i < n && fmt[i] == '.') {
      ++i;
      c.precision = 0;
      number(c.precision);
    }
    for (int k = 0; k < 2 && i < n && fmt[i] == 'l'; ++k, ++i) c.long_modifier = true;
    if (i >= n) throw bad;
    using C = FormatComponent::Conv;
    switch (fmt[i]) {
      case 'd': case 'i': c.conv = C::SignedDec; break;
      case 'u': c.conv = C::UnsignedDec; break;
      case 'o': c.conv = C::Octal; break;
      case 'x': c.conv = C::HexLower; break;
      case 'X': c.conv = C::HexUpper; break;
      case 'p': c.conv = C::Pointer; break;
      case 'c': c.conv = C::Char; break;
      case 's': c.conv = C::String; break;
      case 'b': c.conv = C::Binary; break;
      case 'm': c.conv = C::Memory; break;
      case 'M': c.conv = C::MemoryHex; break;
      default: throw bad;
    }
    ++i;
    out.push_back(c);
  }
  literal(pending);
  return out;
}

std::vector<std::string> embedded_pragmas(const std::string& code) {
  std::vector<std::string> r;
  size_t pos = 0;
  while ((pos = code.find("/*", pos)) != std::string::npos) {
    size_t end = code.find("*/", pos + 2);
    if (end == std::string::npos) break;
    std::string inner = code.substr(pos + 2, end - pos - 2);
    size_t a = inner.find_first_not_of(" \t"), b = inner.find_last_not_of(" \t");
    if (a != std::string::npos) {
      inner = inner.substr(a, b - a + 1);
      bool word = !inner.empty();
      for (char ch : inner)
        if (!(std::islower(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_')) word = false;
      if (word) r.push_back(inner);
    }
    pos = end + 2;
  }
  return r;
}

// ----------------------------------------------------------------------------------- parser

namespace {

constexpr size_t kMaxMacroDepth = 200;
constexpr size_t kMaxExpandedTokens = 200000;
constexpr int kMaxErrors = 1000;

bool tok_is(const Token* t, TokenKind k, const char* text) { return t && t->is(k, text); }
bool is_op(const Token* t, const char* text) { return tok_is(t, TokenKind::Operator, text); }
bool is_kw(const Token* t, const char* text) { return tok_is(t, TokenKind::Keyword, text); }

int compare_versions(const std::string& a, const std::string& b) {
  int r = strverscmp(a.c_str(), b.c_str());
  return r < 0 ? -1 : r > 0 ? 1 : 0;
}

class Parser {
 public:
  Parser(Session& s, const SourceFile* file, const MacroLibrary& lib, const PreprocEnv& env,
         bool user_file)
      : s_(s),
        arena_(s.arena),
        file_(file),
        lib_(lib),
        env_(env),
        lex_(s.arena, file, &env_.args),
        user_file_(user_file) {
    privileged_ = file->is_tapset || file->privileged || (user_file && env.guru_mode);
  }

  StapFile* parse();
  bool parse_library_macros(MacroLibrary& lib);

 private:
  // --- errors
  ParseError error(const std::string& msg) { return make_error(msg, nullptr); }
  ParseError error_at(const std::string& msg, const Token* tok) { return make_error(msg, tok); }
  ParseError make_error(const std::string& msg, const Token* tok) {
    const Token* t = tok ? tok : last_t_;
    bool own = tok != nullptr;
    if (!t) t = lex_.eof_token();
    std::string m = msg;
    std::string jm = junk_message(t);
    if (!jm.empty()) {
      m = jm;
      own = true;
    }
    return ParseError(m, t, own);
  }
  std::string junk_message(const Token* t) const {
    if (!t || t->kind != TokenKind::Junk) return "";
    auto it = copy_origin_.find(t);
    return lex_.junk_message(it == copy_origin_.end() ? t : it->second);
  }
  void report(const ParseError& e) {
    ++errors_;
    s_.diag.parse_error(e);
  }

  // --- preprocessor
  const Token* lex_scan() {
    const Token* t = lex_.scan();
    return t->kind == TokenKind::EndOfFile ? nullptr : t;
  }
  const Token* next_pp1();
  const Token* scan_pp1(bool ignore_macros = false);
  const Token* slurp_param(std::vector<const Token*>& param);
  const Token* slurp_body(std::vector<const Token*>& body);
  void define_macro(const Token* at);
  const Token* scan_pp();
  const Token* skip_pp();
  bool eval_condition(const Token* l, const Token* op, const Token* r);
  static bool from_tapset(const Token* t) { return t->loc.file && t->loc.file->is_tapset; }
  bool spaced(const Token* t) const {
    auto it = copy_origin_.find(t);
    return lex_.preceded_by_space(it == copy_origin_.end() ? t : it->second);
  }

  // --- token stream
  const Token* peek() {
    if (!have_next_) {
      next_t_ = scan_pp();
      have_next_ = true;
    }
    last_t_ = next_t_;
    return next_t_;
  }
  const Token* next() {
    if (!have_next_) {
      next_t_ = scan_pp();
      have_next_ = true;
    }
    if (!next_t_) throw error("unexpected end-of-file");
    last_t_ = next_t_;
    have_next_ = false;
    return last_t_;
  }
  void swallow() {
    have_next_ = false;
    last_t_ = nullptr;
  }
  bool peek_op(const char* op) { return is_op(peek(), op); }
  void expect_op(const char* op) {
    const Token* t = next();
    if (!is_op(t, op)) throw error(std::string("expected '") + op + "'");
    swallow();
  }
  void expect_kw(const char* kw) {
    const Token* t = next();
    if (!is_kw(t, kw)) throw error(std::string("expected '") + kw + "'");
    swallow();
  }
  const Token* expect_kw_token(const char* kw) {
    const Token* t = next();
    if (!is_kw(t, kw)) throw error(std::string("expected '") + kw + "'");
    return t;
  }
  std::string expect_op_any(std::initializer_list<const char*> ops) {
    const Token* t = next();
    if (t->kind == TokenKind::Operator)
      for (const char* op : ops)
        if (t->text == op) {
          swallow();
          return op;
        }
    std::string msg;
    for (const char* op : ops) msg += (msg.empty() ? "" : " ") + std::string(op);
    throw error("expected one of '" + msg + "'");
  }
  std::string expect_string();
  int64_t expect_number();

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& p, int cost = kNestCost) : p(p), cost(cost) {
      if ((p.depth_ += cost) > kMaxDepthUnits) {
        p.depth_ -= cost;
        // At the token that goes one level too deep (not the last one consumed).
        const Token* at = p.peek();
        std::string msg = "too deeply nested: more than " + std::to_string(kMaxNesting) +
                          " levels of nested expressions and statements, or " +
                          std::to_string(kMaxChain) + " chained operators";
        throw at ? p.error_at(msg, at) : p.error(msg);
      }
    }
    ~DepthGuard() { p.depth_ -= cost; }
    int cost;
  };
  // A left-associative chain (a + b + c ...) is parsed by a loop but nests one AST level per
  // operator, and every later pass walks the tree recursively: each operator counts one unit
  // (a nesting level kNestCost) until the chain ends (chain_level() per operator, then
  // depth_ -= count).
  // A plain counter, not a guard object: the parser's frames are what limits the nesting an
  // ASan build can parse, and an error resets depth_ anyway (parse()'s recovery).
  void chain_level() {
    DepthGuard level(*this, 1);  // throws at the limit
    ++depth_;
  }

  // --- grammar
  void parse_probe(StapFile* f);
  void parse_global(StapFile* f, const Token* first, bool priv);
  void parse_private(StapFile* f);
  void parse_functiondecl(StapFile* f, bool priv);
  EmbeddedCode* parse_embeddedcode();
  std::vector<ProbePoint*> parse_probe_points();
  std::vector<ProbePoint*> parse_components();
  std::vector<ProbePoint*> parse_component();
  LiteralString* consume_string_literals(const Token* t);
  LiteralString* parse_literal_string();
  Expression* parse_literal();
  Block* parse_stmt_block();
  TryBlock* parse_try_block();
  Statement* parse_statement();
  IfStatement* parse_if_statement();
  ForLoop* parse_for_loop();
  ForLoop* parse_while_loop();
  ForeachLoop* parse_foreach_loop();
  ExprStatement* parse_expr_statement();
  Expression* parse_indexable();
  const Token* parse_hist_op_or_bare_name(HistogramOp*& hop, std::string& name);
  Expression* parse_expression();
  Expression* parse_assignment();
  Expression* parse_ternary();
  Expression* parse_logical_or();
  Expression* parse_logical_and();
  Expression* parse_boolean(int level);
  Expression* parse_array_in();
  Expression* parse_comparison_or_regex_query();
  Expression* parse_shift();
  Expression* parse_concatenation();
  Expression* parse_additive();
  Expression* parse_multiplicative();
  Expression* parse_unary();
  Expression* parse_crement();
  Expression* parse_dwarf_value();
  Expression* parse_value();
  Expression* parse_symbol();
  Expression* embedded_expression(const Token* t, const std::string& code);
  Expression* parse_const_op(const Token* t);
  bool peek_target_symbol_components();
  void parse_target_symbol_components(std::string* name, const Token* name_tok,
                                      std::vector<TargetComponent>& comps);

  Session& s_;
  Arena& arena_;
  const SourceFile* file_;
  const MacroLibrary& lib_;
  const PreprocEnv& env_;  // the caller's; it outlives the parser (copying it cost ~2k nodes)
  Lexer lex_;
  bool user_file_;
  bool privileged_ = false;
  enum class Context { Unknown, Probe, Global, Function, Embedded } context_ = Context::Unknown;
  StapFile* file_node_ = nullptr;  // the file being parsed (embedded expressions add functions)

  const Token* next_t_ = nullptr;
  bool have_next_ = false;
  const Token* last_t_ = nullptr;
  bool skip_some_ = true;
  int errors_ = 0;
  int depth_ = 0;

  std::map<std::string, Macro*> local_macros_;
  std::vector<Activation*> pp1_;
  size_t expanded_ = 0;
  enum class PP { KeepThen, SkipThen, KeepElse, SkipElse };
  std::vector<std::pair<const Token*, PP>> pp_;
  // Macro-expanded copies -> the lexer's original token (for junk and spacing queries).
  std::unordered_map<const Token*, const Token*> copy_origin_;
};

// ------------------------------------------------------------------------------ preprocessor

const Token* Parser::next_pp1() {
  if (pp1_.empty()) return lex_scan();
  Activation* act = pp1_.back();
  if (act->cursor >= act->macro->body.size()) return nullptr;
  const Token* src = act->macro->body[act->cursor++];
  if (++expanded_ > kMaxExpandedTokens) {
    pp1_.clear();
    throw error_at("macro expansion too large", act->tok);
  }
  Token copy = *src;
  copy.expanded_from = act->tok;
  const Token* t = arena_.token(std::move(copy));
  auto it = copy_origin_.find(src);
  copy_origin_[t] = it == copy_origin_.end() ? src : it->second;
  return t;
}

const Token* Parser::slurp_param(std::vector<const Token*>& param) {
  unsigned nesting = 0;
  for (;;) {
    const Token* t = next_pp1();
    if (!t) return nullptr;
    if (is_op(t, "(") || is_op(t, "["))
      ++nesting;
    else if (nesting && (is_op(t, ")") || is_op(t, "]")))
      --nesting;
    else if (!nesting && (is_op(t, ")") || is_op(t, ",")))
      return t;
    param.push_back(t);
  }
}

const Token* Parser::slurp_body(std::vector<const Token*>& body) {
  unsigned nesting = 0;
  for (;;) {
    const Token* t = next_pp1();
    if (!t) return nullptr;
    if (is_op(t, "%("))
      ++nesting;
    else if (nesting && is_op(t, "%)"))
      --nesting;
    else if (!nesting && is_op(t, "%)"))
      return t;
    body.push_back(t);
  }
}

void Parser::define_macro(const Token* at) {
  if (!pp1_.empty()) throw error_at("'@define' forbidden inside macro body", at);
  const Token* t = lex_scan();
  if (!(t && t->kind == TokenKind::Identifier)) throw error_at("expected identifier", t);
  std::string name = t->text;
  if (local_macros_.count(name))
    throw error_at("attempt to redefine macro '@" + name + "' in the same file", t);
  if (name == "define") throw error_at("attempt to redefine '@define'", t);
  if (is_atword(name)) s_.diag.warning("macro redefines built-in operator '@" + name + "'", t);
  Macro* decl = arena_.make<Macro>();
  decl->name = name;
  decl->tok = t;
  local_macros_[name] = decl;

  bool saw_params = false;
  t = lex_scan();
  if (is_op(t, "(")) {
    saw_params = true;
    for (;;) {
      t = lex_scan();
      if (!(t && t->kind == TokenKind::Identifier)) throw error_at("expected identifier", t);
      decl->formals.push_back(t->text);
      t = lex_scan();
      if (is_op(t, ",")) continue;
      if (is_op(t, ")")) {
        t = lex_scan();
        break;
      }
      throw error_at("expected ',' or ')'", t);
    }
  }
  if (!is_op(t, "%("))
    throw error_at(saw_params ? "expected '%('" : "expected '%(' or '('", t);
  if (!slurp_body(decl->body))
    throw error_at("incomplete macro definition - missing '%)'", decl->tok);
}

const Token* Parser::scan_pp1(bool ignore_macros) {
  for (;;) {
    const Token* t = next_pp1();
    if (!t) {
      if (pp1_.empty()) return nullptr;
      pp1_.pop_back();
      continue;
    }
    if (is_op(t, "@define") && !ignore_macros) {
      define_macro(t);
      continue;
    }
    if (t->kind == TokenKind::Operator && t->text.size() > 1 && t->text[0] == '@') {
      std::string name = t->text.substr(1);
      Activation* act = pp1_.empty() ? nullptr : pp1_.back();
      const Macro* decl = nullptr;
      if (act && act->params.count(name))
        decl = act->params.at(name);
      else if (!(act && act->macro->library) && local_macros_.count(name))
        decl = local_macros_.at(name);
      else if (const Macro* m = lib_.find(name))
        decl = m;
      else
        return t;  // an ordinary @operator

      if (pp1_.size() >= kMaxMacroDepth) {
        pp1_.clear();
        throw error_at("macro expansion nested too deeply", t);
      }
      Activation* na = arena_.make<Activation>();
      na->tok = t;
      na->macro = decl;
      size_t nparams = decl->formals.size();
      if (nparams == 0 && decl->closure) {
        if (decl->parent) na->params = decl->parent->params;
      } else if (nparams > 0) {
        const Token* p = next_pp1();
        if (!is_op(p, "("))
          throw error_at("expected '(' in invocation of macro '@" + name + "' taking " +
                             std::to_string(nparams) + " parameter" + (nparams == 1 ? "" : "s"),
                         p);
        for (size_t i = 0; i < nparams; ++i) {
          Macro* pm = arena_.make<Macro>();
          pm->name = decl->formals[i];
          pm->tok = t;
          pm->closure = true;
          pm->parent = act;
          na->params[decl->formals[i]] = pm;
          p = slurp_param(pm->body);
          if (!p) throw error_at("could not find end of macro invocation", t);
          if (is_op(p, ",")) {
            if (i + 1 == nparams)
              throw error_at("too many parameters for macro '@" + name + "' (expected " +
                                 std::to_string(nparams) + ")",
                             p);
          } else if (i + 1 != nparams) {
            throw error_at("too few parameters for macro '@" + name + "' (expected " +
                               std::to_string(nparams) + ")",
                           p);
          }
        }
      }
      pp1_.push_back(na);
      continue;
    }
    return t;
  }
}

bool Parser::eval_condition(const Token* l, const Token* op, const Token* r) {
  auto cmp_result = [&](int c) -> bool {
    const std::string& o = op->text;
    if (op->kind == TokenKind::Operator) {
      if (o == "<=") return c <= 0;
      if (o == ">=") return c >= 0;
      if (o == "<") return c < 0;
      if (o == ">") return c > 0;
      if (o == "==") return c == 0;
      if (o == "!=") return c != 0;
    }
    throw error_at("expected comparison operator", op);
  };
  auto eq_or_ne = [&](bool match) -> bool {
    if (is_op(op, "==")) return match;
    if (is_op(op, "!=")) return !match;
    throw error_at("expected '==' or '!='", op);
  };
  auto glob = [](const std::string& pattern, const std::string& text) {
    return fnmatch(pattern.c_str(), text.c_str(), FNM_NOESCAPE) == 0;
  };
  auto to_num = [](const std::string& s, int64_t& v) {
    if (s.empty()) return false;
    errno = 0;
    char* end = nullptr;
    v = std::strtoll(s.c_str(), &end, 0);
    return errno == 0 && *end == '\0';
  };
  auto num_of = [&](const Token* t) {
    int64_t v = 0;
    if (!to_num(t->text, v)) throw error_at("number invalid or out of range", t);
    return v;
  };
  auto cmp3 = [](auto a, auto b) { return a < b ? -1 : a > b ? 1 : 0; };

  const std::string& L = l->text;
  if (l->kind == TokenKind::Identifier &&
      (L == "kernel_v" || L == "kernel_vr" || L == "systemtap_v")) {
    if (r->kind != TokenKind::String) throw error_at("expected string literal", r);
    std::string target = L == "kernel_v" ? env_.kernel_v
                         : L == "kernel_vr" ? env_.kernel_vr
                                            : env_.systemtap_v;
    bool wildcard = r->text.find_first_of("*?[") != std::string::npos;
    if (wildcard) {
      if (!(is_op(op, "==") || is_op(op, "!="))) {
        if (op->kind == TokenKind::Operator &&
            (op->text == "<" || op->text == ">" || op->text == "<=" || op->text == ">="))
          throw error_at("wildcard not allowed with order comparison operators", op);
        throw error_at("expected comparison operator", op);
      }
      return eq_or_ne(glob(r->text, target));
    }
    return cmp_result(compare_versions(target, r->text));
  }
  if (l->kind == TokenKind::Identifier && L == "systemtap_privilege") {
    if (r->kind != TokenKind::String) throw error_at("expected string literal", r);
    return eq_or_ne(env_.privilege == r->text);
  }
  if (l->kind == TokenKind::Identifier && L == "guru_mode") {
    if (r->kind != TokenKind::Number) throw error_at("expected number", r);
    int64_t rhs = num_of(r);
    if (rhs != 0 && rhs != 1) throw error_at("expected 0 or 1", op);
    if (!(is_op(op, "==") || is_op(op, "!="))) throw error_at("expected '==' or '!='", op);
    return cmp_result(cmp3(static_cast<int64_t>(env_.guru_mode), rhs));
  }
  if (l->kind == TokenKind::Identifier && (L == "arch" || L == "runtime")) {
    if (r->kind != TokenKind::String) throw error_at("expected string literal", r);
    return eq_or_ne(glob(r->text, L == "arch" ? env_.arch : env_.runtime));
  }
  if (l->kind == TokenKind::Identifier && L.rfind("CONFIG_", 0) == 0) {
    auto cfg = [&](const std::string& k) {
      auto it = env_.kernel_config.find(k);
      return it == env_.kernel_config.end() ? std::string() : it->second;
    };
    std::string lhs = cfg(L);
    if (r->kind == TokenKind::String) return eq_or_ne(glob(r->text, lhs));
    if (r->kind == TokenKind::Number) {
      int64_t a = 0;
      if (!to_num(lhs, a)) throw error_at("Config option value not a number", l);
      return cmp_result(cmp3(a, num_of(r)));
    }
    if (r->kind == TokenKind::Identifier && r->text.rfind("CONFIG_", 0) == 0) {
      std::string rhs = cfg(r->text);
      int64_t a = 0, b = 0;
      if (to_num(lhs, a) && to_num(rhs, b)) return cmp_result(cmp3(a, b));
      return cmp_result(cmp3(lhs, rhs));
    }
    throw error_at(
        "expected string, number literal or other CONFIG_... as right side operand", r);
  }
  if (l->kind == TokenKind::String && r->kind == TokenKind::String)
    return cmp_result(cmp3(l->text, r->text));
  if (l->kind == TokenKind::Number && r->kind == TokenKind::Number)
    return cmp_result(cmp3(num_of(l), num_of(r)));
  if (l->kind == TokenKind::String && r->kind == TokenKind::Number &&
      op->kind == TokenKind::Operator)
    throw error_at("expected string literal as right value", r);
  if (l->kind == TokenKind::Number && r->kind == TokenKind::String &&
      op->kind == TokenKind::Operator)
    throw error_at("expected number literal as right value", r);
  throw error_at(
      "expected 'arch', 'kernel_v', 'kernel_vr', 'systemtap_v',\n"
      "             'runtime', 'systemtap_privilege', 'CONFIG_...', or\n"
      "             comparison between strings or integers",
      l);
}

const Token* Parser::skip_pp() {
  unsigned nesting = 0;
  for (int guard = 0;; ++guard) {
    const Token* t = nullptr;
    try {
      t = scan_pp1(true);
    } catch (const ParseError&) {
      if (guard > 1000000) return nullptr;
      continue;
    }
    if (!t) return nullptr;
    if (is_op(t, "%("))
      ++nesting;
    else if (nesting && is_op(t, "%)"))
      --nesting;
    else if (!nesting && (is_op(t, "%:") || is_op(t, "%?") || is_op(t, "%)")))
      return t;
  }
}

const Token* Parser::scan_pp() {
  for (;;) {
    PP pp = pp_.empty() ? PP::KeepThen : pp_.back().second;
    bool none = pp_.empty();
    const Token* t = (!none && (pp == PP::SkipThen || pp == PP::SkipElse)) ? skip_pp() : scan_pp1();
    if (!t) {
      if (!none) {
        const Token* open = pp_.back().first;
        pp_.pop_back();
        throw error_at("incomplete conditional at end of file", open);
      }
      return nullptr;
    }
    if (is_op(t, "%?")) throw error_at("incomplete conditional - missing '%('", t);
    if (is_op(t, "%:")) {
      if (none) throw error_at("incomplete conditional - missing '%('", t);
      if (pp == PP::KeepElse || pp == PP::SkipElse)
        throw error_at("invalid conditional - duplicate '%:'", t);
      pp_.back().second = pp == PP::KeepThen ? PP::SkipElse : PP::KeepElse;
      continue;
    }
    if (is_op(t, "%)")) {
      if (none) throw error_at("incomplete conditional - missing '%('", t);
      pp_.pop_back();
      continue;
    }
    if (!is_op(t, "%(")) return t;

    if (pp_.size() >= static_cast<size_t>(kMaxNesting))
      throw error_at("too many nested conditionals", t);
    bool result = false, and_result = true;
    const Token* n = nullptr;
    for (;;) {
      const Token* l = scan_pp1();
      const Token* op = l ? scan_pp1() : nullptr;
      const Token* r = op ? scan_pp1() : nullptr;
      if (!l || !op || !r) throw error_at("incomplete condition after '%('", t);
      and_result = eval_condition(l, op, r) && and_result;
      n = scan_pp1();
      if (is_op(n, "&&")) continue;
      result = result || and_result;
      and_result = true;
      if (!is_op(n, "||")) break;
    }
    if (!is_op(n, "%?")) throw error_at("expected '%?' marker for conditional", t);
    pp_.emplace_back(t, result ? PP::KeepThen : PP::SkipThen);
  }
}

// ------------------------------------------------------------------------------- top level

StapFile* Parser::parse() {
  StapFile* f = arena_.make<StapFile>();
  f->source = file_;
  f->name = file_->name;
  f->privileged = privileged_;
  f->is_tapset = file_->is_tapset;
  file_node_ = f;
  bool empty = true;
  for (;;) {
    try {
      const Token* t = peek();
      if (!t) break;
      empty = false;
      if (is_kw(t, "probe")) {
        context_ = Context::Probe;
        parse_probe(f);
      } else if (is_kw(t, "private")) {
        context_ = Context::Unknown;
        parse_private(f);
      } else if (is_kw(t, "global")) {
        context_ = Context::Global;
        next();
        swallow();
        parse_global(f, nullptr, false);
      } else if (is_kw(t, "function")) {
        context_ = Context::Function;
        next();
        swallow();
        parse_functiondecl(f, false);
      } else if (t->kind == TokenKind::EmbeddedCode) {
        context_ = Context::Embedded;
        f->embeds.push_back(parse_embeddedcode());
      } else {
        context_ = Context::Unknown;
        throw error("expected 'probe', 'global', 'private', 'function', or '%{'");
      }
    } catch (const ParseError& e) {
      report(e);
      depth_ = 0;
      if (errors_ >= kMaxErrors) break;
      if (skip_some_) {
        for (;;) {
          try {
            const Token* t = peek();
            if (!t) break;
            if (is_kw(t, "probe") || is_kw(t, "private") || is_kw(t, "global") ||
                is_kw(t, "function") || t->kind == TokenKind::EmbeddedCode)
              break;
            swallow();
          } catch (const ParseError& e2) {
            report(e2);
            if (errors_ >= kMaxErrors) break;
          }
        }
      }
      skip_some_ = true;
      if (errors_ >= kMaxErrors) break;
    }
  }
  if (empty && user_file_ && errors_ == 0) {
    s_.diag.stream() << (lex_.saw_tokens()
                             ? "Input file '" + file_->name + "' is empty after preprocessing."
                             : "Input file '" + file_->name + "' is empty.")
                     << "\n";
    return nullptr;
  }
  if (errors_ > 0) return nullptr;
  return f;
}

bool Parser::parse_library_macros(MacroLibrary& lib) {
  try {
    const Token* t = scan_pp();
    if (t) throw error_at("unexpected token in library macro file '" + file_->name + "'", t);
    for (auto& [name, m] : local_macros_) {
      if (const Macro* old = lib.find(name)) {
        (void)old;
        throw error_at("duplicate definition of library macro '@" + name + "'", m->tok);
      }
    }
  } catch (const ParseError& e) {
    report(e);
    return false;
  }
  for (auto& [name, m] : local_macros_) {
    m->library = true;
    lib.macros()[name] = m;
  }
  return true;
}

void Parser::parse_probe(StapFile* f) {
  const Token* t0 = next();
  if (!is_kw(t0, "probe")) throw error("expected 'probe'");
  std::vector<ProbePoint*> aliases, locations;
  bool epilogue = false;
  for (;;) {
    std::vector<ProbePoint*> pps = parse_probe_points();
    const Token* t = peek();
    if (pps.size() == 1 && t && (is_op(t, "=") || is_op(t, "+="))) {
      if (pps[0]->optional || pps[0]->sufficient)
        throw error_at("probe point alias name cannot be optional nor sufficient",
                       pps[0]->components.front().tok);
      aliases.push_back(pps[0]);
      if (is_op(t, "+=")) epilogue = true;
      swallow();
      continue;
    }
    if (is_op(t, "{")) {
      locations.insert(locations.end(), pps.begin(), pps.end());
      break;
    }
    throw error("expected probe point specifier");
  }
  if (aliases.empty()) {
    Probe* p = arena_.node<Probe>(t0);
    p->locations = locations;
    p->body = parse_stmt_block();
    p->privileged = privileged_;
    f->probes.push_back(p);
  } else {
    ProbeAlias* p = arena_.node<ProbeAlias>(t0);
    p->alias_names = aliases;
    p->epilogue_style = epilogue;
    p->locations = locations;
    p->body = parse_stmt_block();
    p->privileged = privileged_;
    // `probe NAME = POINTS { prologue }, { epilogue }` (SystemTap's tapsets use it to run
    // code after the user's handler of a prologue-style alias).
    if (peek_op(",")) {
      if (epilogue) throw error("Combined prologue and epilogue cannot be defined with '+='");
      swallow();
      p->epilogue = parse_stmt_block();
    }
    f->aliases.push_back(p);
  }
}

EmbeddedCode* Parser::parse_embeddedcode() {
  const Token* t = next();
  if (t->kind != TokenKind::EmbeddedCode) throw error("expected '%{'");
  if (!privileged_) {
    skip_some_ = false;
    throw error("embedded code in unprivileged script; need stap -g");
  }
  EmbeddedCode* e = arena_.node<EmbeddedCode>(t);
  e->code = t->text;
  return e;
}

void Parser::parse_private(StapFile* f) {
  const Token* t = next();
  if (!is_kw(t, "private")) throw error("expected 'private'");
  swallow();
  t = next();
  if (is_kw(t, "function")) {
    swallow();
    context_ = Context::Function;
    parse_functiondecl(f, true);
  } else if (is_kw(t, "global")) {
    swallow();
    context_ = Context::Global;
    t = next();
    if (t->kind != TokenKind::Identifier) throw error("expected identifier");
    parse_global(f, t, true);
  } else if (t->kind == TokenKind::Identifier) {
    context_ = Context::Global;
    parse_global(f, t, true);
  } else {
    throw error("expected 'function' or identifier");
  }
}

void Parser::parse_global(StapFile* f, const Token* first, bool priv) {
  for (bool iter0 = true;; iter0 = false) {
    const Token* t = (iter0 && first) ? first : next();
    if (t->kind != TokenKind::Identifier) throw error("expected identifier");
    for (Vardecl* g : f->globals) {
      if (g->name == t->text) {
        if (g->is_private == priv) throw error("duplicate global name");
        throw error("global versus private variable declaration conflict");
      }
    }
    Vardecl* d = arena_.node<Vardecl>(t);
    d->name = t->text;
    d->is_global = true;
    d->is_private = priv;
    d->from_tapset = file_->is_tapset;
    f->globals.push_back(d);

    t = peek();
    if (is_op(t, "%")) {
      d->wrap = true;
      swallow();
      t = peek();
    }
    if (is_op(t, "[")) {
      swallow();
      int64_t size = expect_number();
      if (size <= 0 || size > INT_MAX) throw error("array size out of range");
      d->maxsize = size;
      expect_op("]");
      t = peek();
    }
    if (is_op(t, "=")) {
      if (d->maxsize > 0 || d->wrap) throw error("only scalar globals can be initialized");
      d->arity = 0;
      next();
      d->init = parse_literal();
      d->type = d->init->type;
      d->type_tok = d->init->tok;
      t = peek();
    }
    if (is_op(t, ";")) {
      swallow();
      break;
    }
    if (is_op(t, ",")) {
      swallow();
      continue;
    }
    break;
  }
}

void Parser::parse_functiondecl(StapFile* f, bool priv) {
  const Token* t = next();
  if (!(t->kind == TokenKind::Identifier || is_kw(t, "string") || is_kw(t, "long")))
    throw error("expected identifier");
  Function* fd = arena_.node<Function>(t);
  fd->name = t->text;
  fd->is_private = priv;
  fd->from_tapset = file_->is_tapset;

  auto parse_type = [&](Type& type, const Token*& type_tok) {
    const Token* tt = next();
    if (is_kw(tt, "string"))
      type = Type::String;
    else if (is_kw(tt, "long"))
      type = Type::Long;
    else
      throw error("expected 'string' or 'long'");
    type_tok = tt;
    swallow();
  };

  t = next();
  if (is_op(t, ":")) {
    swallow();
    parse_type(fd->type, fd->type_tok);
    t = next();
  }
  if (!is_op(t, "(")) throw error("expected '('");
  swallow();
  for (;;) {
    t = next();
    if (is_op(t, ")")) {
      swallow();
      break;
    }
    if (t->kind != TokenKind::Identifier) throw error("expected identifier");
    for (Vardecl* a : fd->formal_args)
      if (a->name == t->text) throw error("duplicate parameter names");
    Vardecl* vd = arena_.node<Vardecl>(t);
    vd->name = t->text;
    vd->arity = 0;
    fd->formal_args.push_back(vd);
    t = next();
    if (is_op(t, ":")) {
      swallow();
      parse_type(vd->type, vd->type_tok);
      t = next();
    }
    if (is_op(t, ")")) {
      swallow();
      break;
    }
    if (is_op(t, ",")) {
      swallow();
      continue;
    }
    throw error("expected ',' or ')'");
  }
  t = peek();
  if (!t) throw error("expected '{'");
  if (is_op(t, ":")) {  // overload priority; accepted and ignored
    swallow();
    Expression* lit = parse_literal();
    auto* ln = dynamic_cast<LiteralNumber*>(lit);
    if (!ln) throw error("expected literal number");
    if (ln->value < 1) throw error("specified priority must be > 0");
  }
  t = peek();
  if (t && t->kind == TokenKind::EmbeddedCode) {
    EmbeddedCode* e = parse_embeddedcode();
    fd->body = e;
    fd->pragmas = embedded_pragmas(e->code);
  } else {
    fd->body = parse_stmt_block();
  }
  f->functions.push_back(fd);
}

// ----------------------------------------------------------------------------- probe points

std::vector<ProbePoint*> Parser::parse_probe_points() {
  DepthGuard guard(*this);
  std::vector<ProbePoint*> pps;
  for (;;) {
    std::vector<ProbePoint*> tail = parse_components();
    pps.insert(pps.end(), tail.begin(), tail.end());
    const Token* t = peek();
    if (is_op(t, ",")) {
      swallow();
      continue;
    }
    if (is_op(t, "{") || is_op(t, "=") || is_op(t, "+=") || is_op(t, "}")) break;
    throw error("expected one of ', { } = +='");
  }
  return pps;
}

std::vector<ProbePoint*> Parser::parse_components() {
  std::vector<ProbePoint*> pps;
  for (;;) {
    std::vector<ProbePoint*> suffix = parse_component();
    if (pps.empty()) {
      pps = suffix;
    } else {
      std::vector<ProbePoint*> product;
      for (ProbePoint* a : pps) {
        if (a->optional || a->sufficient || a->condition)
          throw error_at("'?', '!' or condition must only be specified in suffix",
                         a->components[0].tok);
        for (ProbePoint* b : suffix) {
          if (product.size() > 100000) throw error("too many probe points");
          ProbePoint* pp = arena_.make<ProbePoint>();
          pp->components = a->components;
          pp->components.insert(pp->components.end(), b->components.begin(), b->components.end());
          pp->optional = b->optional;
          pp->sufficient = b->sufficient;
          pp->condition = b->condition;
          pp->tok = pp->components.front().tok;
          product.push_back(pp);
        }
      }
      pps = product;
    }
    const Token* t = peek();
    if (is_op(t, ".")) {
      swallow();
      continue;
    }
    if (is_op(t, "?") || is_op(t, "!")) {
      for (ProbePoint* pp : pps) {
        if (pp->optional || pp->sufficient) throw error("'?' or '!' respecified");
        pp->optional = true;
        if (t->text == "!") pp->sufficient = true;
      }
      swallow();
      t = peek();
    }
    if (is_kw(t, "if")) {
      swallow();
      t = peek();
      if (!is_op(t, "(")) throw error("expected '('");
      swallow();
      Expression* e = parse_expression();
      for (ProbePoint* pp : pps) {
        if (pp->condition) throw error("condition respecified");
        pp->condition = e;
      }
      t = peek();
      if (!is_op(t, ")")) throw error("expected ')'");
      swallow();
    }
    break;
  }
  return pps;
}

std::vector<ProbePoint*> Parser::parse_component() {
  const Token* t = next();
  if (!(t->kind == TokenKind::Identifier || t->kind == TokenKind::Keyword || is_op(t, "*") ||
        is_op(t, "{")))
    throw error("expected identifier or '*' or '{'");
  if (is_op(t, "{")) {
    swallow();
    std::vector<ProbePoint*> pps = parse_probe_points();
    t = peek();
    if (!is_op(t, "}")) throw error("expected '}'");
    swallow();
    return pps;
  }
  std::string content = t->text;
  bool changed = false;
  for (;;) {
    const Token* u = peek();
    if (!u || spaced(u)) break;
    if (!(u->kind == TokenKind::Identifier || u->kind == TokenKind::Keyword || is_op(u, "*")))
      break;
    content += u->text;
    changed = true;
    swallow();
  }
  if (changed) {
    Token joined = *t;
    joined.kind = TokenKind::Identifier;
    joined.text = content;
    t = arena_.token(std::move(joined));
  }
  ProbePoint* pp = arena_.make<ProbePoint>();
  ProbePointComponent c;
  c.functor = content;
  c.tok = t;
  pp->tok = t;
  if (peek_op("(")) {
    swallow();
    c.arg = parse_literal();
    const Token* r = next();
    if (!is_op(r, ")")) throw error("expected ')'");
    swallow();
  }
  pp->components.push_back(c);
  return {pp};
}

// ---------------------------------------------------------------------------------- literals

LiteralString* Parser::consume_string_literals(const Token* t) {
  LiteralString* ls = arena_.node<LiteralString>(t);
  ls->value = t->text;
  ls->type = Type::String;
  ls->type_tok = t;
  const Token* n = peek();
  while (n && n->kind == TokenKind::String) {
    ls->value += n->text;
    next();
    n = peek();
  }
  return ls;
}

LiteralString* Parser::parse_literal_string() {
  const Token* t = next();
  if (t->kind != TokenKind::String) throw error("expected literal string");
  return consume_string_literals(t);
}

static bool parse_number_text(const std::string& s, bool neg, int64_t& out) {
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (errno == ERANGE || errno == EINVAL || *end != '\0' || s.empty()) return false;
  if (neg ? v > 9223372036854775808ULL : v > 9223372036854775807ULL) {
    // stap accepts up to ULLONG_MAX for positive literals (wrapping); keep that.
    if (neg) return false;
  }
  out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

Expression* Parser::parse_literal() {
  const Token* t = next();
  if (t->kind == TokenKind::String) return consume_string_literals(t);
  bool neg = false;
  if (is_op(t, "-")) {
    neg = true;
    swallow();
    t = next();
  }
  if (t->kind != TokenKind::Number) throw error("expected literal string or number");
  int64_t v = 0;
  if (!parse_number_text(t->text, neg, v)) throw error("number invalid or out of range");
  LiteralNumber* ln = arena_.node<LiteralNumber>(t);
  ln->value = v;
  ln->type = Type::Long;
  ln->type_tok = t;
  return ln;
}

int64_t Parser::expect_number() {
  bool neg = false;
  const Token* t = next();
  if (is_op(t, "-")) {
    neg = true;
    swallow();
    t = next();
  }
  if (t->kind != TokenKind::Number) throw error("expected number");
  int64_t v = 0;
  if (!parse_number_text(t->text, neg, v)) throw error("number invalid or out of range");
  swallow();
  return v;
}

std::string Parser::expect_string() {
  const Token* t = next();
  if (t->kind != TokenKind::String) throw error("expected string");
  return consume_string_literals(t)->value;
}

// -------------------------------------------------------------------------------- statements

Block* Parser::parse_stmt_block() {
  const Token* t = next();
  if (!is_op(t, "{")) throw error("expected '{'");
  Block* b = arena_.node<Block>(t);
  for (;;) {
    t = peek();
    if (is_op(t, "}")) {
      swallow();
      break;
    }
    b->statements.push_back(parse_statement());
  }
  return b;
}

TryBlock* Parser::parse_try_block() {
  TryBlock* tb = arena_.node<TryBlock>(expect_kw_token("try"));
  tb->try_block = parse_stmt_block();
  expect_kw("catch");
  if (peek_op("(")) {
    swallow();
    const Token* t = next();
    if (t->kind != TokenKind::Identifier) throw error("expected identifier");
    Symbol* sym = arena_.node<Symbol>(t);
    sym->name = t->text;
    tb->catch_var = sym;
    expect_op(")");
  }
  tb->catch_block = parse_stmt_block();
  return tb;
}

Statement* Parser::parse_statement() {
  DepthGuard guard(*this);
  Statement* ret = nullptr;
  const Token* t = peek();
  if (is_op(t, ";")) return arena_.node<NullStatement>(next());
  if (is_op(t, "{")) return parse_stmt_block();
  if (is_kw(t, "try")) return parse_try_block();
  if (is_kw(t, "if")) return parse_if_statement();
  if (is_kw(t, "for")) return parse_for_loop();
  if (is_kw(t, "foreach")) return parse_foreach_loop();
  if (is_kw(t, "while")) return parse_while_loop();
  if (is_kw(t, "return")) {
    next();
    if (context_ != Context::Function) throw error("found 'return' not in function context");
    ReturnStatement* r = arena_.node<ReturnStatement>(t);
    const Token* n = peek();
    if (!n) throw error("expected ';', '}' or an expression statement");
    if (!(is_op(n, ";") || is_op(n, "}"))) r->value = parse_expression();
    ret = r;
  } else if (is_kw(t, "delete")) {
    next();
    DeleteStatement* d = arena_.node<DeleteStatement>(t);
    d->value = parse_expression();
    ret = d;
  } else if (is_kw(t, "break")) {
    ret = arena_.node<BreakStatement>(next());
  } else if (is_kw(t, "continue")) {
    ret = arena_.node<ContinueStatement>(next());
  } else if (is_kw(t, "next")) {
    ret = arena_.node<NextStatement>(next());
  } else if (t && (t->kind == TokenKind::Operator || t->kind == TokenKind::Identifier ||
                   t->kind == TokenKind::Number || t->kind == TokenKind::String ||
                   t->kind == TokenKind::EmbeddedCode)) {
    ret = parse_expr_statement();
  } else {
    throw error("expected statement");
  }
  if (peek_op(";")) swallow();
  return ret;
}

IfStatement* Parser::parse_if_statement() {
  const Token* t = next();
  if (!is_kw(t, "if")) throw error("expected 'if'");
  IfStatement* s = arena_.node<IfStatement>(t);
  expect_op("(");
  s->condition = parse_expression();
  expect_op(")");
  s->then_stmt = parse_statement();
  if (is_kw(peek(), "else")) {
    swallow();
    s->else_stmt = parse_statement();
  }
  return s;
}

ExprStatement* Parser::parse_expr_statement() {
  const Token* t = peek();
  if (!t) throw error("expression statement expected");
  ExprStatement* es = arena_.node<ExprStatement>(t);
  es->value = parse_expression();
  return es;
}

ForLoop* Parser::parse_for_loop() {
  const Token* t = next();
  if (!is_kw(t, "for")) throw error("expected 'for'");
  ForLoop* s = arena_.node<ForLoop>(t);
  expect_op("(");
  if (peek_op(";")) {
    swallow();
  } else {
    s->init = parse_expr_statement();
    if (!is_op(next(), ";")) throw error("expected ';'");
    swallow();
  }
  if (peek_op(";")) {
    swallow();
  } else {
    s->cond = parse_expression();
    if (!is_op(next(), ";")) throw error("expected ';'");
    swallow();
  }
  if (peek_op(")")) {
    swallow();
  } else {
    s->incr = parse_expr_statement();
    if (!is_op(next(), ")")) throw error("expected ')'");
    swallow();
  }
  s->body = parse_statement();
  return s;
}

ForLoop* Parser::parse_while_loop() {
  const Token* t = next();
  if (!is_kw(t, "while")) throw error("expected 'while'");
  ForLoop* s = arena_.node<ForLoop>(t);
  expect_op("(");
  s->cond = parse_expression();
  if (!is_op(next(), ")")) throw error("expected ')'");
  swallow();
  s->body = parse_statement();
  return s;
}

ForeachLoop* Parser::parse_foreach_loop() {
  const Token* t = next();
  if (!is_kw(t, "foreach")) throw error("expected 'foreach'");
  ForeachLoop* s = arena_.node<ForeachLoop>(t);
  expect_op("(");

  Symbol* lookahead = nullptr;
  int lookahead_sort = 0;
  t = peek();
  if (t && t->kind == TokenKind::Identifier) {
    next();
    lookahead = arena_.node<Symbol>(t);
    lookahead->name = t->text;
    t = peek();
    if (is_op(t, "+") || is_op(t, "-")) {
      lookahead_sort = t->text == "+" ? 1 : -1;
      swallow();
    }
    if (peek_op("=")) {
      swallow();
      s->value = lookahead;
      if (lookahead_sort) {
        s->sort_direction = lookahead_sort;
        s->sort_column = 0;
      }
      lookahead = nullptr;
    }
  }
  bool bracketed = false;
  if (!lookahead && peek_op("[")) {
    swallow();
    bracketed = true;
  }
  if (lookahead) {
    s->indexes.push_back(lookahead);
    if (lookahead_sort) {
      s->sort_direction = lookahead_sort;
      s->sort_column = 1;
    }
  } else {
    for (;;) {
      t = next();
      if (t->kind != TokenKind::Identifier) throw error("expected identifier");
      Symbol* sym = arena_.node<Symbol>(t);
      sym->name = t->text;
      s->indexes.push_back(sym);
      t = peek();
      if (is_op(t, "+") || is_op(t, "-")) {
        if (s->sort_direction) throw error("multiple sort directives");
        s->sort_direction = t->text == "+" ? 1 : -1;
        s->sort_column = static_cast<unsigned>(s->indexes.size());
        swallow();
      }
      if (!bracketed) break;
      t = peek();
      if (is_op(t, ",")) {
        swallow();
        continue;
      }
      if (is_op(t, "]")) {
        swallow();
        break;
      }
      throw error("expected ',' or ']'");
    }
  }
  t = next();
  if (!is_kw(t, "in")) throw error("expected 'in'");
  swallow();
  s->base = parse_indexable();

  if (peek_op("[")) {
    swallow();
    for (;;) {
      if (peek_op("*")) {
        swallow();
        s->array_slice.push_back(nullptr);
      } else {
        s->array_slice.push_back(parse_expression());
      }
      t = peek();
      if (is_op(t, ",")) {
        swallow();
        continue;
      }
      if (is_op(t, "]")) {
        swallow();
        break;
      }
      throw error("expected ',' or ']'");
    }
  }
  t = peek();
  if (t && t->kind == TokenKind::Operator && t->text[0] == '@') {
    static const char* const aggrs[] = {"avg", "min", "max", "count", "sum", "variance"};
    bool ok = false;
    for (const char* a : aggrs)
      if (t->text.substr(1) == a) ok = true;
    if (!ok) throw error("expected statistical operation");
    s->sort_aggr = t->text.substr(1);
    swallow();
    t = peek();
    if (!(is_op(t, "+") || is_op(t, "-"))) throw error("expected sort directive");
  }
  t = peek();
  if (is_op(t, "+") || is_op(t, "-")) {
    if (s->sort_direction) throw error("multiple sort directives");
    s->sort_direction = t->text == "+" ? 1 : -1;
    s->sort_column = 0;
    swallow();
  }
  if (is_kw(peek(), "limit")) {
    swallow();
    s->limit = parse_expression();
  }
  if (!is_op(next(), ")")) throw error("expected ')'");
  swallow();
  s->body = parse_statement();
  return s;
}

// ------------------------------------------------------------------------------- expressions

Expression* Parser::parse_expression() {
  DepthGuard guard(*this);
  return parse_assignment();
}

Expression* Parser::parse_assignment() {
  Expression* op1 = parse_ternary();
  const Token* t = peek();
  static const char* const ops[] = {"=",  "<<<", "+=",  "-=", "*=", "/=", "%=",
                                    "<<=", ">>=", "&=", "^=", "|=", ".="};
  if (t && t->kind == TokenKind::Operator) {
    for (const char* op : ops) {
      if (t->text == op) {
        AssignmentExpr* e = arena_.node<AssignmentExpr>(t);
        e->left = op1;
        e->op = t->text;
        next();
        e->right = parse_expression();
        return e;
      }
    }
  }
  return op1;
}

Expression* Parser::parse_ternary() {
  Expression* op1 = parse_logical_or();
  const Token* t = peek();
  if (!is_op(t, "?")) return op1;
  TernaryExpression* e = arena_.node<TernaryExpression>(t);
  e->condition = op1;
  next();
  e->truevalue = parse_expression();
  if (!is_op(next(), ":")) throw error("expected ':'");
  swallow();
  DepthGuard guard(*this);
  e->falsevalue = parse_ternary();
  return e;
}

Expression* Parser::parse_logical_or() {
  Expression* op1 = parse_logical_and();
  const Token* t = peek();
  int chain = 0;
  while (is_op(t, "||")) {
    LogicalOrExpr* e = arena_.node<LogicalOrExpr>(t);
    e->left = op1;
    chain_level();
    ++chain;
    next();
    e->right = parse_logical_and();
    op1 = e;
    t = peek();
  }
  depth_ -= chain;
  return op1;
}

Expression* Parser::parse_logical_and() {
  Expression* op1 = parse_boolean(0);
  const Token* t = peek();
  int chain = 0;
  while (is_op(t, "&&")) {
    LogicalAndExpr* e = arena_.node<LogicalAndExpr>(t);
    e->left = op1;
    chain_level();
    ++chain;
    next();
    e->right = parse_boolean(0);
    op1 = e;
    t = peek();
  }
  depth_ -= chain;
  return op1;
}

// level 0: '|', 1: '^', 2: '&'
Expression* Parser::parse_boolean(int level) {
  static const char* const ops[] = {"|", "^", "&"};
  Expression* op1 = level == 2 ? parse_array_in() : parse_boolean(level + 1);
  const Token* t = peek();
  int chain = 0;
  while (is_op(t, ops[level])) {
    BinaryExpression* e = arena_.node<BinaryExpression>(t);
    e->left = op1;
    e->op = t->text;
    chain_level();
    ++chain;
    next();
    e->right = level == 2 ? parse_array_in() : parse_boolean(level + 1);
    op1 = e;
    t = peek();
  }
  depth_ -= chain;
  return op1;
}

Expression* Parser::parse_array_in() {
  std::vector<Expression*> indexes;
  bool bracketed = false;
  if (peek_op("[")) {
    swallow();
    bracketed = true;
  }
  for (;;) {
    if (bracketed && peek_op("*")) {
      swallow();
      indexes.push_back(nullptr);
    } else {
      indexes.push_back(parse_comparison_or_regex_query());
    }
    if (!bracketed) break;
    const Token* t = peek();
    if (is_op(t, ",")) {
      swallow();
      continue;
    }
    if (is_op(t, "]")) {
      swallow();
      break;
    }
    throw error("expected ',' or ']'");
  }
  const Token* t = peek();
  if (is_kw(t, "in")) {
    ArrayIn* e = arena_.node<ArrayIn>(t);
    next();
    ArrayIndex* a = arena_.make<ArrayIndex>();
    a->indexes = indexes;
    a->base = parse_indexable();
    a->tok = a->base->tok;
    e->operand = a;
    return e;
  }
  if (indexes.size() == 1 && indexes[0]) return indexes[0];
  throw error("unexpected comma-separated expression list");
}

Expression* Parser::parse_comparison_or_regex_query() {
  Expression* op1 = parse_shift();
  const Token* t = peek();
  if (is_op(t, "=~") || is_op(t, "!~")) {
    RegexMatch* r = arena_.node<RegexMatch>(t);
    r->left = op1;
    r->op = t->text;
    next();
    r->regex = parse_literal_string();
    return r;
  }
  int chain = 0;
  while (t && t->kind == TokenKind::Operator &&
         (t->text == ">" || t->text == "<" || t->text == "==" || t->text == "!=" ||
          t->text == "<=" || t->text == ">=")) {
    ComparisonExpr* e = arena_.node<ComparisonExpr>(t);
    e->left = op1;
    e->op = t->text;
    chain_level();
    ++chain;
    next();
    e->right = parse_shift();
    op1 = e;
    t = peek();
  }
  depth_ -= chain;
  return op1;
}

Expression* Parser::parse_shift() {
  Expression* op1 = parse_concatenation();
  const Token* t = peek();
  int chain = 0;
  while (is_op(t, "<<") || is_op(t, ">>") || is_op(t, ">>>")) {
    BinaryExpression* e = arena_.node<BinaryExpression>(t);
    e->left = op1;
    e->op = t->text;
    chain_level();
    ++chain;
    next();
    e->right = parse_concatenation();
    op1 = e;
    t = peek();
  }
  depth_ -= chain;
  return op1;
}

Expression* Parser::parse_concatenation() {
  Expression* op1 = parse_additive();
  const Token* t = peek();
  int chain = 0;
  while (is_op(t, ".")) {
    ConcatenationExpr* e = arena_.node<ConcatenationExpr>(t);
    e->left = op1;
    chain_level();
    ++chain;
    next();
    e->right = parse_additive();
    op1 = e;
    t = peek();
  }
  depth_ -= chain;
  return op1;
}

Expression* Parser::parse_additive() {
  Expression* op1 = parse_multiplicative();
  const Token* t = peek();
  int chain = 0;
  while (is_op(t, "+") || is_op(t, "-")) {
    BinaryExpression* e = arena_.node<BinaryExpression>(t);
    e->left = op1;
    e->op = t->text;
    chain_level();
    ++chain;
    next();
    e->right = parse_multiplicative();
    op1 = e;
    t = peek();
  }
  depth_ -= chain;
  return op1;
}

Expression* Parser::parse_multiplicative() {
  Expression* op1 = parse_unary();
  const Token* t = peek();
  int chain = 0;
  while (is_op(t, "*") || is_op(t, "/") || is_op(t, "%")) {
    BinaryExpression* e = arena_.node<BinaryExpression>(t);
    e->left = op1;
    e->op = t->text;
    chain_level();
    ++chain;
    next();
    e->right = parse_unary();
    op1 = e;
    t = peek();
  }
  depth_ -= chain;
  return op1;
}

Expression* Parser::parse_unary() {
  const Token* t = peek();
  if (is_op(t, "+") || is_op(t, "-") || is_op(t, "!") || is_op(t, "~")) {
    DepthGuard guard(*this);
    UnaryExpression* e = arena_.node<UnaryExpression>(t);
    e->op = t->text;
    next();
    e->operand = parse_unary();
    return e;
  }
  return parse_crement();
}

Expression* Parser::parse_crement() {
  const Token* t = peek();
  if (is_op(t, "++") || is_op(t, "--")) {
    PreCrement* e = arena_.node<PreCrement>(t);
    e->op = t->text;
    next();
    e->operand = parse_dwarf_value();
    return e;
  }
  Expression* op1 = parse_dwarf_value();
  t = peek();
  if (is_op(t, "++") || is_op(t, "--")) {
    PostCrement* e = arena_.node<PostCrement>(t);
    e->op = t->text;
    next();
    e->operand = op1;
    return e;
  }
  return op1;
}

Expression* Parser::parse_dwarf_value() {
  const Token* addrtok = peek_op("&") ? next() : nullptr;
  bool addressof = addrtok != nullptr;
  const Token* t = peek();
  Expression* expr = nullptr;
  std::vector<TargetComponent>* comps = nullptr;
  std::string* name = nullptr;
  bool* addr_field = nullptr;
  const Token* name_tok = nullptr;

  if (t && t->kind == TokenKind::Identifier && t->text[0] == '$') {
    next();
    TargetSymbol* ts = arena_.node<TargetSymbol>(t);
    ts->name = t->text;
    expr = ts;
    comps = &ts->components;
    name = &ts->name;
    addr_field = &ts->addressof;
    name_tok = t;
  } else if (is_op(t, "@cast")) {
    next();
    CastOp* c = arena_.node<CastOp>(t);
    expect_op("(");
    c->operand = parse_expression();
    expect_op(",");
    c->type_name = expect_string();
    if (c->type_name.empty()) throw error("expected non-empty string");
    if (peek_op(",")) {
      swallow();
      c->module = expect_string();
    }
    expect_op(")");
    expr = c;
    comps = &c->components;
    addr_field = &c->addressof;
  } else if (is_op(t, "@var")) {
    next();
    AtVarOp* a = arena_.node<AtVarOp>(t);
    expect_op("(");
    std::string target = expect_string();
    size_t at = target.find('@');
    a->target_name = target.substr(0, at);
    if (at != std::string::npos) a->cu_name = target.substr(at + 1);
    if (peek_op(",")) {
      swallow();
      a->module = expect_string();
    }
    expect_op(")");
    expr = a;
    comps = &a->components;
    addr_field = &a->addressof;
  } else {
    expr = parse_value();
    if (addressof) {
      bool already = false;
      if (auto* ts = dynamic_cast<TargetSymbol*>(expr)) already = ts->addressof;
      if (auto* c = dynamic_cast<CastOp*>(expr)) already = c->addressof;
      if (auto* a = dynamic_cast<AtVarOp*>(expr)) already = a->addressof;
      if (already) throw error_at("cannot take address more than once", addrtok);
    }
    if (addressof || peek_target_symbol_components()) {
      // stap's autocast: `&expr` or `expr->member`; the type is found later. Represented
      // as a @cast with an empty type name.
      CastOp* c = arena_.node<CastOp>(addrtok ? addrtok : peek());
      c->operand = expr;
      expr = c;
      comps = &c->components;
      addr_field = &c->addressof;
    }
  }
  if (comps) {
    *addr_field = addressof;
    parse_target_symbol_components(name, name_tok, *comps);
  }
  return expr;
}

bool Parser::peek_target_symbol_components() {
  const Token* t = peek();
  return t && (is_op(t, "->") || is_op(t, "[") ||
               (t->kind == TokenKind::Identifier &&
                t->text.find_first_not_of('$') == std::string::npos));
}

void Parser::parse_target_symbol_components(std::string* name, const Token* name_tok,
                                            std::vector<TargetComponent>& comps) {
  bool pprint = false;
  auto add_pprint = [&](const Token* t, const std::string& val) {
    TargetComponent c;
    c.kind = TargetComponent::Kind::PrettyPrint;
    c.tok = t;
    c.member = val;
    comps.push_back(c);
    pprint = true;
  };
  if (name) {
    size_t pos = name->find_last_not_of('$');
    if (pos != std::string::npos && pos > 0 && pos < name->size() - 1) {
      std::string val = name->substr(pos + 1);
      name->erase(pos + 1);
      add_pprint(name_tok, val);
    }
  }
  while (!pprint) {
    if (peek_op("->")) {
      const Token* t = next();
      const Token* m = next();
      if (!(m->kind == TokenKind::Identifier || m->kind == TokenKind::Keyword))
        throw error("expected identifier or keyword");
      swallow();
      std::string member = m->text;
      size_t pos = member.find_last_not_of('$');
      std::string val;
      bool pp = false;
      if (pos == std::string::npos || pos < member.size() - 1) {
        val = member.substr(pos == std::string::npos ? 0 : pos + 1);
        member = pos == std::string::npos ? "" : member.substr(0, pos + 1);
        pp = true;
      }
      if (!member.empty()) {
        TargetComponent c;
        c.kind = TargetComponent::Kind::StructMember;
        c.tok = t;
        c.member = member;
        comps.push_back(c);
      }
      if (pp) add_pprint(t, val);
    } else if (peek_op("[")) {
      const Token* t = next();
      DepthGuard guard(*this);
      Expression* index = parse_expression();
      TargetComponent c;
      c.tok = t;
      if (auto* ln = dynamic_cast<LiteralNumber*>(index)) {
        c.kind = TargetComponent::Kind::LiteralIndex;
        c.num_index = ln->value;
      } else {
        c.kind = TargetComponent::Kind::ExpressionIndex;
        c.expr_index = index;
      }
      comps.push_back(c);
      expect_op("]");
    } else {
      break;
    }
  }
  if (!pprint) {
    const Token* t = peek();
    if (t && t->kind == TokenKind::Identifier &&
        t->text.find_first_not_of('$') == std::string::npos) {
      next();
      add_pprint(t, t->text);
    }
  }
  if (pprint && (peek_op("->") || peek_op("[")))
    throw error("-> and [ are not accepted for a pretty-printing variable");
}

Expression* Parser::parse_value() {
  const Token* t = peek();
  if (!t) throw error("expected value");
  if (t->kind == TokenKind::EmbeddedCode) {
    // Code written in a tapset is trusted wherever it is expanded (a library macro such as
    // @MAXSTRINGLEN used by an ordinary script).
    if (!privileged_ && !from_tapset(t)) {
      // Consumed first: recovery would otherwise re-read this %{ as file-level code and
      // repeat the error.
      next();
      throw error("embedded expression code in unprivileged script; need stap -g");
    }
    next();
    return embedded_expression(t, t->text);
  }
  if (is_op(t, "(")) {
    swallow();
    Expression* e = parse_expression();
    if (!is_op(next(), ")")) throw error("expected ')'");
    swallow();
    return e;
  }
  if (t->kind == TokenKind::Identifier || (t->kind == TokenKind::Operator && t->text[0] == '@'))
    return parse_symbol();
  return parse_literal();
}

// `%{ code %}` used as a value (guru mode, tapsets): a long, or a string with the /* string */
// pragma. It becomes a call of a private embedded-C function of this file whose body returns
// the expression, so the later passes and both runtimes treat it as any embedded function.
Expression* Parser::embedded_expression(const Token* t, const std::string& code) {
  std::vector<std::string> pragmas = embedded_pragmas(code);
  bool is_string = false;
  for (const std::string& p : pragmas)
    if (p == "string") is_string = true;
  Function* fd = arena_.node<Function>(t);
  // Private names still share the generated C's namespace: numbered across all files.
  static int embedded_exprs = 0;
  fd->name = "__embedded_expr_" + std::to_string(++embedded_exprs);
  fd->is_private = true;
  fd->synthetic = true;
  fd->from_tapset = file_->is_tapset;
  fd->type = is_string ? Type::String : Type::Long;
  fd->type_tok = t;
  fd->pragmas = pragmas;
  EmbeddedCode* body = arena_.node<EmbeddedCode>(t);
  if (is_string)
    body->code =
        "\n#ifdef __UKSTAP_BPF__\n"
        "\tif (bpf_probe_read_kernel_str(STAP_RETVALUE, MAXSTRINGLEN, (const void *)(" + code +
        ")) < 0)\n\t\tSTAP_RETVALUE[0] = '\\0';\n"
        "#else\n"
        "\t{ const char *__s = (" + code + "); long __i = 0;\n"
        "\t  for (; __s && __i + 1 < MAXSTRINGLEN && __s[__i]; ++__i)\n"
        "\t    STAP_RETVALUE[__i] = __s[__i];\n"
        "\t  STAP_RETVALUE[__i] = '\\0'; }\n"
        "#endif\n";
  else
    body->code = "\n\tSTAP_RETURN((long)(" + code + "));\n";
  fd->body = body;
  if (file_node_) file_node_->functions.push_back(fd);
  FunctionCall* call = arena_.node<FunctionCall>(t);
  call->name = fd->name;  // resolved in pass 2 like any call (private to this file)
  return call;
}

// @const("NAME"): the value of the C constant NAME (a macro or enumerator of the kernel's
// headers), as SystemTap's tapsets use it. Embedded C, so only in tapsets and guru mode.
Expression* Parser::parse_const_op(const Token* t) {
  if (!privileged_ && !from_tapset(t))
    throw error_at("using @const operator not permitted; need stap -g", t);
  expect_op("(");
  const Token* nt = peek();
  std::string name = expect_string();
  if (name.empty()) throw error_at("expected non-empty string", nt);
  expect_op(")");
  return embedded_expression(t, "/* pure */ /* unprivileged */ /* stable */ " + name);
}

const Token* Parser::parse_hist_op_or_bare_name(HistogramOp*& hop, std::string& name) {
  hop = nullptr;
  const Token* t = next();
  if (!(t->kind == TokenKind::Identifier || (t->kind == TokenKind::Operator && t->text[0] == '@')))
    throw error("expected identifier or statistical operation");
  name = t->text;
  if (name == "@hist_linear" || name == "@hist_log") {
    hop = arena_.node<HistogramOp>(t);
    hop->kind = name == "@hist_linear" ? HistogramOp::Kind::Linear : HistogramOp::Kind::Log;
    expect_op("(");
    hop->stat = parse_expression();
    if (hop->kind == HistogramOp::Kind::Linear) {
      for (int i = 0; i < 3; ++i) {
        expect_op(",");
        hop->params.push_back(expect_number());
      }
    }
    expect_op(")");
  }
  return t;
}

Expression* Parser::parse_indexable() {
  HistogramOp* hop = nullptr;
  std::string name;
  const Token* t = parse_hist_op_or_bare_name(hop, name);
  if (hop) return hop;
  Symbol* sym = arena_.node<Symbol>(t);
  sym->name = name;
  return sym;
}

static bool print_format_kind(const std::string& n, PrintFormat& f) {
  static const char* const names[] = {"print",  "println",  "printd",  "printdln",  "printf",
                                      "sprint", "sprintln", "sprintd", "sprintdln", "sprintf"};
  bool found = false;
  for (const char* x : names)
    if (n == x) found = true;
  if (!found) return false;
  f.name = n;
  f.to_stream = n[0] == 'p';
  f.with_format = n.back() == 'f';
  f.with_delim = n == "printd" || n == "printdln" || n == "sprintd" || n == "sprintdln";
  f.with_newline = n.size() > 2 && n.compare(n.size() - 2, 2, "ln") == 0;
  return true;
}

Expression* Parser::parse_symbol() {
  HistogramOp* hop = nullptr;
  std::string name;
  Symbol* sym = nullptr;
  const Token* t = parse_hist_op_or_bare_name(hop, name);
  if (!hop) {
    if (name == "@defined" || name == "@entry") {
      Expression* operand = nullptr;
      expect_op("(");
      operand = parse_expression();
      expect_op(")");
      if (name == "@defined") {
        DefinedOp* d = arena_.node<DefinedOp>(t);
        d->operand = operand;
        return d;
      }
      EntryOp* e = arena_.node<EntryOp>(t);
      e->operand = operand;
      return e;
    }
    if (name == "@const") return parse_const_op(t);
    if (name == "@probewrite") {
      // @probewrite(var): whether the probe handler assigns the local `var` (SystemTap's
      // syscall tapsets write such values back to the syscall's registers in an epilogue).
      // ukstap never writes probe context back, so it is constant 0; a user's script is
      // warned rather than silently given a different answer.
      expect_op("(");
      const Token* v = next();
      if (v->kind != TokenKind::Identifier) throw error("expected identifier");
      swallow();
      expect_op(")");
      if (!file_->is_tapset)
        s_.diag.warning("@probewrite is always 0 in ukstap (it never writes probe context back)",
                        t);
      LiteralNumber* zero = arena_.node<LiteralNumber>(t);
      zero->type = Type::Long;
      zero->type_tok = t;
      return zero;
    }
    if (name == "@perf") {
      PerfOp* p = arena_.node<PerfOp>(t);
      expect_op("(");
      p->operand = parse_literal_string();
      if (p->operand->value.empty()) throw error("expected non-empty string");
      expect_op(")");
      return p;
    }
    if (!name.empty() && name[0] == '@') {
      std::string op = name.substr(1);
      size_t max_params = 0;
      if (op == "variance")
        max_params = 1;
      else if (!(op == "avg" || op == "count" || op == "sum" || op == "min" || op == "max"))
        // Not a built-in: an @word the preprocessor did not expand is a macro nobody defined
        // (neither the script nor a tapset .stpm library).
        throw error_at(is_atword(op) ? "unknown operator " + name : "unknown macro " + name, t);
      expect_op("(");
      StatOp* sop = arena_.node<StatOp>(t);
      sop->op = op;
      sop->stat = parse_expression();
      for (;;) {
        const Token* n = next();
        if (is_op(n, ")")) {
          swallow();
          break;
        }
        if (is_op(n, ",")) {
          if (sop->params.size() >= max_params)
            throw error_at("not more than " + std::to_string(max_params + 1) + " parameter" +
                               (max_params + 1 == 1 ? "" : "s") + " allowed",
                           n);
          swallow();
          sop->params.push_back(expect_number());
          continue;
        }
        throw error("expected one of ', )'");
      }
      return sop;
    }
    PrintFormat probe_fmt;
    if (print_format_kind(name, probe_fmt)) {
      PrintFormat* fmt = arena_.node<PrintFormat>(t);
      fmt->name = probe_fmt.name;
      fmt->to_stream = probe_fmt.to_stream;
      fmt->with_format = probe_fmt.with_format;
      fmt->with_delim = probe_fmt.with_delim;
      fmt->with_newline = probe_fmt.with_newline;
      expect_op("(");
      if ((name == "print" || name == "println" || name == "sprint" || name == "sprintln") &&
          (peek_op("@hist_linear") || peek_op("@hist_log"))) {
        std::string hname;
        const Token* ht = parse_hist_op_or_bare_name(hop, hname);
        if (!peek_op("[")) {
          fmt->hist = hop;
        } else {
          expect_op("[");
          ArrayIndex* ai = arena_.node<ArrayIndex>(ht);
          ai->base = hop;
          ai->indexes.push_back(parse_expression());
          expect_op("]");
          fmt->args.push_back(ai);
          while (!peek_op(")")) {
            expect_op_any({",", ")"});
            fmt->args.push_back(parse_expression());
          }
        }
      } else {
        int min_args = 0;
        bool consumed = false;
        if (fmt->with_format) {
          LiteralString* ls = parse_literal_string();
          fmt->raw_format = ls->value;
          try {
            fmt->components = parse_format(ls->value);
          } catch (const std::invalid_argument& e) {
            throw error(e.what());
          }
          consumed = true;
        } else if (fmt->with_delim) {
          fmt->delimiter = parse_literal_string()->value;
          consumed = true;
          min_args = 2;
        } else if (!fmt->with_newline) {
          min_args = 1;
        }
        while (min_args || !peek_op(")")) {
          if (consumed) expect_op_any({",", ")"});
          fmt->args.push_back(parse_expression());
          consumed = true;
          if (min_args) --min_args;
        }
      }
      expect_op(")");
      return fmt;
    }
    if (peek_op("(")) {
      swallow();
      FunctionCall* f = arena_.node<FunctionCall>(t);
      f->name = name;
      if (peek_op(")")) {
        swallow();
        return f;
      }
      for (;;) {
        f->args.push_back(parse_expression());
        if (expect_op_any({")", ","}) == ")") break;
      }
      return f;
    }
    sym = arena_.node<Symbol>(t);
    sym->name = name;
  }
  if (peek_op("[")) {
    swallow();
    ArrayIndex* ai = arena_.node<ArrayIndex>(t);
    ai->base = hop ? static_cast<Expression*>(hop) : sym;
    for (;;) {
      if (peek_op("*")) {
        swallow();
        ai->indexes.push_back(nullptr);
      } else {
        ai->indexes.push_back(parse_expression());
      }
      if (expect_op_any({"]", ","}) == "]") break;
    }
    return ai;
  }
  if (hop) throw error_at("base histogram operator where expression expected", t);
  return sym;
}

}  // namespace

// ------------------------------------------------------------------------------ entry points

ast::StapFile* parse_file(Session& s, const SourceFile* file, const MacroLibrary& lib,
                          const PreprocEnv& env) {
  Parser p(s, file, lib, env, !file->is_tapset);
  return p.parse();
}

ast::StapFile* parse_file(Session& s, const SourceFile* file, const MacroLibrary& lib) {
  return parse_file(s, file, lib, PreprocEnv::from_session(s));
}

bool parse_library_macros(Session& s, const SourceFile* file, MacroLibrary& lib,
                          const PreprocEnv& env) {
  Parser p(s, file, lib, env, false);
  return p.parse_library_macros(lib);
}

bool parse_library_macros(Session& s, const SourceFile* file, MacroLibrary& lib) {
  return parse_library_macros(s, file, lib, PreprocEnv::from_session(s));
}

}  // namespace ukstap::parse
