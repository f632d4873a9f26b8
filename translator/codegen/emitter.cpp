#include "codegen/emitter.h"

#include "codegen/format_arg_names.h"
#include "codegen/c_text.h"
#include "codegen/kernel_values.h"
#include "codegen/shared_functions.h"
#include "codegen/regex_dfa.h"
#include "codegen/runtime_functions.h"
#include "btf/kernel_features.h"

#include <algorithm>
#include <functional>
#include <set>

#include "parse/parser.h"
#include "passes/elaborate_steps.h"
#include "passes/cast_layout.h"
#include "passes/symbol_key_merge.h"
#include "probes/family_point.h"
#include "probes/sdt_args.h"

namespace ukstap::codegen {

namespace {
// Deepest nesting of brackets one generated C expression may have (BodyEmitter::eval).
constexpr int kSpillDepth = 32;
int bracket_depth(const std::string& c) {
  int depth = 0, deepest = 0;
  for (char ch : c) {
    if (ch == '(' || ch == '[' || ch == '{') deepest = std::max(deepest, ++depth);
    else if (ch == ')' || ch == ']' || ch == '}') --depth;
  }
  return deepest;
}

// Around a dispatched probe and its foreach callbacks, the tracepoint field readers read the
// record rebuilt from the registers (runtime/bpf/stp_bpf_probes.h).
const char* const kReadSysrec = "#undef STP__TPREC\n#define STP__TPREC ((void *)c->k.sysrec)\n";
const char* const kReadCtx = "#undef STP__TPREC\n#define STP__TPREC ctx\n";


using ast::Type;

// Every string literal of the generated C: codegen/c_text.h.
std::string c_quote(const std::string& v) { return c_string_literal(v); }

std::string c_long(int64_t v) {
  if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
  return "((int64_t)" + std::to_string(v) + "LL)";
}

char conv_char(ast::FormatComponent::Conv c) {
  using C = ast::FormatComponent::Conv;
  switch (c) {
    case C::SignedDec: return 'd';
    case C::UnsignedDec: return 'u';
    case C::Octal: return 'o';
    case C::HexLower: return 'x';
    case C::HexUpper: return 'X';
    case C::Pointer: return 'p';
    case C::Char: return 'c';
    case C::String: return 's';
    case C::Binary: return 'b';
    case C::Memory: return 'm';
    case C::MemoryHex: return 'M';
    case C::Literal: return 0;
  }
  return 0;
}

// The STP_FLAG_* bit of runtime/common/stp_format.h for a printf flag character.
std::string flag_bits(char ch) {
  switch (ch) {
    case '0': return "STP_FLAG_ZERO";
    case '+': return "STP_FLAG_PLUS";
    case '-': return "STP_FLAG_MINUS";
    case ' ': return "STP_FLAG_SPACE";
    case '#': return "STP_FLAG_ALT";
    default: return "0";
  }
}

std::string char_lit(char ch) {
  if (!ch) return "0";
  if (ch == '\'') return "'\\''";
  return std::string("'") + ch + "'";
}

// Does any HistogramOp in the program draw from this global? Which kind and parameters?
struct HistFinder : ast::TraversingVisitor {
  std::map<const ast::Vardecl*, const ast::HistogramOp*> hists;
  void visit(ast::HistogramOp& h) override {
    const ast::Vardecl* v = nullptr;
    if (auto* sym = dynamic_cast<ast::Symbol*>(h.stat)) v = sym->referent;
    if (auto* ai = dynamic_cast<ast::ArrayIndex*>(h.stat))
      if (auto* sym = dynamic_cast<ast::Symbol*>(ai->base)) v = sym->referent;
    if (v && !hists.count(v)) hists[v] = &h;
    TraversingVisitor::visit(h);
  }
};

// The bit shift each statistic's @variance(s, shift) asks for. SystemTap allows one shift per
// statistic (`man stap`: 0 to 62), since the running mean is kept at that precision.
// Also which statistics @variance reads at all: the others keep no running mean (BPF's
// stp_stat_add: no division per event).
struct VarianceShiftFinder : ast::TraversingVisitor {
  std::map<const ast::Vardecl*, int> shifts;
  std::set<const ast::Vardecl*> read;
  bool read_unknown = false;  // a @variance of something not named: every statistic keeps it
  bool keeps_variance(const ast::Vardecl* v) const { return read_unknown || read.count(v); }
  void visit(ast::StatOp& e) override {
    TraversingVisitor::visit(e);
    if (e.op != "variance") return;
    const ast::Vardecl* v = nullptr;
    if (auto* sym = dynamic_cast<ast::Symbol*>(e.stat)) v = sym->referent;
    if (auto* ai = dynamic_cast<ast::ArrayIndex*>(e.stat))
      if (auto* sym = dynamic_cast<ast::Symbol*>(ai->base)) v = sym->referent;
    if (v)
      read.insert(v);
    else
      read_unknown = true;
    if (e.params.empty()) return;
    if (!v) return;
    int64_t shift = e.params.front();
    if (shift < 0 || shift > 62)
      throw TranslateError("@variance bit shift " + std::to_string(shift) +
                               " is out of range (0 to 62)", e.tok);
    auto [it, fresh] = shifts.emplace(v, static_cast<int>(shift));
    if (!fresh && it->second != shift)
      throw TranslateError("@variance of '" + v->name + "' with bit shift " +
                               std::to_string(shift) + " and " + std::to_string(it->second) +
                               ": only one bit shift may be used with a statistic",
                           e.tok);
  }
};

}  // namespace

std::string Emitter::Frame::add_field(const std::string& decl_type, const std::string& name,
                                      const std::string& suffix) {
  std::string n = name;
  for (int k = 2; names.count(n); ++k) n = name + "_" + std::to_string(k);
  names.insert(n);
  fields.push_back(decl_type + " " + n + suffix + ";");
  return access + "." + n;
}

std::string Emitter::Frame::add_temp(const std::string& ctype, const std::string& base) {
  // Not "__k8": GCC predefines __k8 on x86-64 (-march=k8).
  std::string n = "tmp_" + base + std::to_string(temps++);
  if (ctype == "string") return add_field("char", n, "[STP_MAXSTRINGLEN]");
  return add_field(ctype, n);
}

Emitter::Emitter(Session& s, const passes::Analyses& a, ModuleInfo& m) : s_(s), a_(a), m_(m) {}

std::string Emitter::c_name(const std::string& n) { return c_identifier(n); }

std::string Emitter::fn_c_name(const ast::Function* f) {
  std::string n = c_name(f->name);
  for (auto* o : s_.functions)
    if (o != f && o->name == f->name) return n + "__a" + std::to_string(f->formal_args.size());
  return n;
}

int Emitter::location(const Token* tok) {
  if (!tok) return -1;
  // One id per text: the same token in many probes (syscall.*'s body) is one location, so
  // their handlers stay the same code (shared_programs.h).
  std::string where = describe_token(*tok);
  auto [it, added] = location_ids_.try_emplace(where, static_cast<int>(m_.locations.size()));
  if (added) m_.locations.push_back(where);
  return it->second;
}

int Emitter::format_id(const std::string& fmt, const std::vector<ast::FormatComponent>& comps,
                       const std::vector<std::string>& names) {
  std::string key = fmt;
  for (const auto& n : names) key += '\x1f' + n;
  auto it = format_ids_.find(key);
  if (it != format_ids_.end()) return it->second;
  m_.formats.push_back({fmt, comps, names});
  int id = static_cast<int>(m_.formats.size()) - 1;
  format_ids_[key] = id;
  return id;
}

const MapInfo* Emitter::map_of(const ast::Vardecl* g) const {
  auto it = map_index_.find(g);
  return it == map_index_.end() ? nullptr : &m_.maps[it->second];
}

std::string Emitter::global_access(const ast::Vardecl* g) const {
  return "g->g_" + const_cast<Emitter*>(this)->c_name(g->name);
}

std::string Emitter::var_access(const ast::Vardecl* v) const {
  if (v->is_global) return global_access(v);
  auto it = var_access_.find(v);
  return it == var_access_.end() ? std::string("/*?*/0") : it->second;
}

// ------------------------------------------------------------------------------- body emitter

class BodyEmitter : public ast::Visitor {
 public:
  BodyEmitter(Emitter& em, Emitter::Frame& frame, std::ostringstream& out, DerivedProbe* probe,
              ast::Function* fn, const probes::TracepointPoint* tp)
      : em_(em), frame_(frame), out_(&out), probe_(probe), fn_(fn), tp_(tp) {}

  std::string err_label = "out";
  int indent = 1;

  void stmt(ast::Statement* st) {
    if (st) st->accept(*this);
  }
  std::string eval(ast::Expression* e) {
    e->accept(*this);
    // A deep script expression would be as deep a C expression, and clang recurses on it
    // (it crashed at ~1000 nested parentheses, and stops at 256 brackets by default): past
    // kSpillDepth nested brackets a number is computed into a temporary here, where all its
    // preparation lines have run. Statements nest in C as in the script (pass 4 raises clang's
    // -fbracket-depth for them).
    if (e->type != Type::String && bracket_depth(value_) > kSpillDepth) {
      std::string t = tmp_long();
      line(t + " = " + value_ + ";");
      value_ = t;
    }
    return value_;
  }

 private:
  void line(const std::string& text) { *out_ << std::string(indent * 2, ' ') << text << "\n"; }
  void check_error() { line("if (STP_ERRORED(c)) goto " + err_label + ";"); }
  [[noreturn]] void unsupported(const std::string& what, const Token* tok) {
    throw TranslateError(what + " is not supported by the BPF backend yet", tok);
  }
  std::string tmp_long() { return frame_.add_temp("int64_t", "t"); }
  std::string tmp_str() { return frame_.add_temp("string", "s"); }
  bool is_str(const ast::Expression* e) const { return e->type == Type::String; }

  // Evaluates into a temporary, so later evaluation (calls, assignments) cannot change it.
  std::string eval_stable(ast::Expression* e) {
    std::string v = eval(e);
    if (dynamic_cast<ast::LiteralNumber*>(e) || dynamic_cast<ast::LiteralString*>(e)) return v;
    if (is_str(e)) {
      if (v.rfind(frame_.access + ".tmp_s", 0) == 0) return v;  // already a private temp
      std::string t = tmp_str();
      line("stp_str_copy(c, " + t + ", " + v + ");");
      return t;
    }
    std::string t = tmp_long();
    line(t + " = " + v + ";");
    return t;
  }

  const ast::Vardecl* array_of(ast::Expression* base) {
    auto* sym = dynamic_cast<ast::Symbol*>(base);
    return sym ? sym->referent : nullptr;
  }

  // Fills a key temp for NAME[indexes] and returns its C lvalue.
  std::string build_key(const ast::Vardecl* g, const std::vector<ast::Expression*>& indexes,
                        const Token* tok) {
    const MapInfo* mi = em_.map_of(g);
    if (!mi) throw TranslateError("'" + g->name + "' is not an array", tok);
    if (mi->scalar) {
      std::string k = frame_.add_temp("struct stp_key_unit", "k");
      line("STP_ZERO(c, &" + k + ");");
      return k;
    }
    std::vector<std::string> vals;
    for (auto* i : indexes) {
      if (!i) unsupported("a '*' wildcard key here", tok);
      vals.push_back(eval_stable(i));
    }
    std::string k = frame_.add_temp("struct stp_key_" + em_.c_name(g->name), "k");
    line("STP_ZERO(c, &" + k + ");");
    for (size_t n = 0; n < vals.size(); ++n) {
      std::string field = k + ".k" + std::to_string(n);
      if (mi->key_types[n] == Type::String && n < mi->token_keys.size() && mi->token_keys[n])
        line("stp_token_key_copy(c, " + field + ", " + vals[n] + ");");  // a token-sized field
      else if (mi->key_types[n] == Type::String)
        line("stp_str_copy(c, " + field + ", " + vals[n] + ");");
      else
        line(field + " = " + vals[n] + ";");
    }
    return k;
  }

  std::string map_name(const ast::Vardecl* g) { return em_.c_name(g->name); }

  // Reads NAME[key] into a value temp; returns the value expression.
  std::string read_element(ast::ArrayIndex& e) {
    const ast::Vardecl* g = array_of(e.base);
    if (!g) unsupported("indexing this expression", e.tok);
    std::string k = build_key(g, e.indexes, e.tok);
    std::string v = frame_.add_temp("struct stp_val_" + em_.c_name(g->name), "v");
    line("stp_map_get(c, " + map_name(g) + ", &" + k + ", &" + v + ");");
    check_error();
    return v + ".v";
  }

  void write_element(ast::ArrayIndex& e, const std::string& value, bool str,
                     std::string k = "") {
    const ast::Vardecl* g = array_of(e.base);
    if (!g) unsupported("assigning to this expression", e.tok);
    if (k.empty()) k = build_key(g, e.indexes, e.tok);
    std::string v = frame_.add_temp("struct stp_val_" + em_.c_name(g->name), "v");
    line("STP_ZERO(c, &" + v + ");");
    if (str)
      line("stp_str_copy(c, " + v + ".v, " + value + ");");
    else
      line(v + ".v = " + value + ";");
    // An overflow names the array: stap's "near identifier 'NAME' at ...".
    line("STP_SET_LOC(c, " + std::to_string(em_.location(e.base->tok)) + ");");
    line("stp_map_set(c, " + map_name(g) + ", &" + k + ", &" + v + ");");
    check_error();
  }

  // Stores `value` into an lvalue; returns the lvalue's C expression for the result.
  std::string store(ast::Expression* lhs, const std::string& value, bool str) {
    if (auto* sym = dynamic_cast<ast::Symbol*>(lhs)) {
      std::string lv = em_.var_access(sym->referent);
      if (str) {
        if (lv != value) line("stp_str_copy(c, " + lv + ", " + value + ");");
      } else {
        line(lv + " = " + value + ";");
      }
      return lv;
    }
    if (auto* ai = dynamic_cast<ast::ArrayIndex*>(lhs)) {
      std::string t = str ? tmp_str() : tmp_long();
      if (str)
        line("stp_str_copy(c, " + t + ", " + value + ");");
      else
        line(t + " = " + value + ";");
      write_element(*ai, t, str);
      return t;
    }
    if (is_procfs_value(lhs)) {  // runtime/native/stp_native_procfs.h
      line("stp_procfs_set(c, " + value + ");");
      return "stp_procfs_value(c)";
    }
    if (is_netfilter_var(lhs, "$verdict")) {  // the program's return value
      line("STP_SET_LOC(c, " + std::to_string(em_.location(lhs->tok)) + ");");
      line("STP_NF_SET_VERDICT(c, " + value + ");");
      check_error();
      return "STP_NF_VERDICT(c)";
    }
    if (dynamic_cast<ast::TargetSymbol*>(lhs)) {
      // SystemTap's guru band-aids change a kernel function's arguments from a kprobe; a
      // tracepoint's BPF program only reads them (and bpf_override_return needs kprobes too).
      if (probe_ && probe_->family.is(probes::ProbeKind::Tracepoint))
        throw TranslateError("writing a kernel target variable needs a kprobe on the function "
                             "(a tracepoint's BPF program cannot change what the kernel does with "
                             "its arguments)", lhs->tok);
      unsupported("writing a target variable", lhs->tok);
    }
    throw TranslateError("not an lvalue", lhs->tok);
  }

 public:
  // ---------------------------------------------------------------------------- expressions
  void visit(ast::LiteralNumber& e) override { value_ = c_long(e.value); }
  void visit(ast::LiteralString& e) override { value_ = c_quote(e.value); }

  void visit(ast::BinaryExpression& e) override {
    std::string l = eval_stable(e.left);
    std::string r = eval(e.right);
    if (e.op == "/" || e.op == "%") {
      // The runtime divides: "division by 0" at this location, and no signed BPF division
      // instruction before cpu v4.
      std::string t = tmp_long();
      line("STP_SET_LOC(c, " + std::to_string(em_.location(e.tok)) + ");");
      line(t + " = " + (e.op == "/" ? "stp_div(c, " : "stp_mod(c, ") + l + ", " + r + ");");
      check_error();
      value_ = t;
      return;
    }
    if (e.op == ">>>") {
      value_ = "((int64_t)((uint64_t)" + l + " >> (" + r + " & 63)))";
    } else if (e.op == "<<") {
      value_ = "((int64_t)((uint64_t)" + l + " << (" + r + " & 63)))";
    } else if (e.op == ">>") {
      value_ = "(" + l + " >> (" + r + " & 63))";
    } else if (e.op == "+" || e.op == "-" || e.op == "*") {
      // Two's complement wrap, never C's undefined signed overflow.
      value_ = "((int64_t)((uint64_t)" + l + " " + e.op + " (uint64_t)" + r + "))";
    } else {
      value_ = "(" + l + " " + e.op + " " + r + ")";
    }
  }
  void visit(ast::UnaryExpression& e) override {
    std::string v = eval(e.operand);
    if (e.op == "-")
      value_ = "((int64_t)(0 - (uint64_t)" + v + "))";
    else if (e.op == "+")
      value_ = v;
    else
      value_ = "(" + e.op + v + ")";
    if (e.op == "!") value_ = "((int64_t)" + value_ + ")";
  }
  void crement(ast::Expression* operand, const std::string& op, bool pre) {
    std::string cur = eval(operand);
    std::string old = tmp_long();
    line(old + " = " + cur + ";");
    std::string next = "(int64_t)((uint64_t)" + old + (op == "++" ? " + 1)" : " - 1)");
    store(operand, next, false);
    value_ = pre ? "(int64_t)((uint64_t)" + old + (op == "++" ? " + 1)" : " - 1)") : old;
  }
  void visit(ast::PreCrement& e) override { crement(e.operand, e.op, true); }
  void visit(ast::PostCrement& e) override { crement(e.operand, e.op, false); }

  // && and || evaluate their right side only when needed, prep statements included.
  void logical(ast::Expression* left, ast::Expression* right, bool is_and) {
    std::string t = tmp_long();
    line(t + " = (" + eval(left) + ") != 0;");
    line(std::string("if (") + (is_and ? "" : "!") + t + ") {");
    ++indent;
    line(t + " = (" + eval(right) + ") != 0;");
    --indent;
    line("}");
    value_ = t;
  }
  void visit(ast::LogicalOrExpr& e) override { logical(e.left, e.right, false); }
  void visit(ast::LogicalAndExpr& e) override { logical(e.left, e.right, true); }

  void visit(ast::ComparisonExpr& e) override {
    std::string l = eval_stable(e.left);
    std::string r = eval(e.right);
    if (is_str(e.left) || is_str(e.right))
      value_ = "((int64_t)(stp_str_cmp(c, " + l + ", " + r + ") " + e.op + " 0))";
    else
      value_ = "((int64_t)(" + l + " " + e.op + " " + r + "))";
  }
  void visit(ast::ConcatenationExpr& e) override {
    std::string l = eval_stable(e.left);
    std::string r = eval(e.right);
    std::string t = tmp_str();
    line("stp_str_copy(c, " + t + ", " + l + ");");
    line("stp_str_cat(c, " + t + ", " + r + ");");
    value_ = t;
  }
  void visit(ast::RegexMatch& e) override {
    if (!native_) return kernel_regex(e);
    std::string s = eval(e.left);
    std::string t = tmp_long();
    line(t + " = stp_regex_match(c, " + s + ", " + c_quote(e.regex->value) + ");");
    check_error();
    value_ = e.op == "!~" ? "((int64_t)!" + t + ")" : t;
  }
  // In a BPF probe: the expression compiled to a DFA now (codegen/regex_dfa.h), its tables
  // emitted once per use before the probes, matched by runtime/bpf/stp_bpf_regex.h.
  void kernel_regex(ast::RegexMatch& e) {
    RegexDfa dfa;
    try {
      dfa = compile_regex_dfa(e.regex->value);
    } catch (const std::runtime_error& err) {
      throw TranslateError("regular expression \"" + e.regex->value +
                               "\" cannot be matched in a kernel-context probe: " + err.what(),
                           e.regex->tok ? e.regex->tok : e.tok);
    }
    std::string name = "stp_re_" + std::to_string(em_.next_callback_++);
    em_.callbacks_ << regex_dfa_c(dfa, name);
    std::string s = eval(e.left);
    if (dynamic_cast<ast::LiteralString*>(e.left)) {  // a literal: into a buffer of MAXSTRINGLEN
      std::string t = tmp_str();
      line("stp_str_copy(c, " + t + ", " + s + ");");
      s = t;
    }
    std::string t = tmp_long();
    line(t + " = stp_regex_dfa(c, " + s + ", " + name + ");");
    value_ = e.op == "!~" ? "((int64_t)!" + t + ")" : t;
  }
  void visit(ast::TernaryExpression& e) override {
    if (e.folded()) {  // constant condition: the live branch only
      value_ = eval(e.truevalue);
      return;
    }
    std::string cond = eval(e.condition);
    bool str = is_str(&e);
    std::string t = str ? tmp_str() : tmp_long();
    line("if (" + cond + ") {");
    ++indent;
    std::string a = eval(e.truevalue);
    line(str ? "stp_str_copy(c, " + t + ", " + a + ");" : t + " = " + a + ";");
    --indent;
    line("} else {");
    ++indent;
    std::string b = eval(e.falsevalue);
    line(str ? "stp_str_copy(c, " + t + ", " + b + ");" : t + " = " + b + ";");
    --indent;
    line("}");
    value_ = t;
  }

  void visit(ast::AssignmentExpr& e) override {
    if (e.op == "<<<") {
      std::string v = eval_stable(e.right);
      const ast::Vardecl* g = nullptr;
      std::vector<ast::Expression*> idx;
      if (auto* sym = dynamic_cast<ast::Symbol*>(e.left)) g = sym->referent;
      if (auto* ai = dynamic_cast<ast::ArrayIndex*>(e.left)) {
        g = array_of(ai->base);
        idx = ai->indexes;
      }
      if (!g) unsupported("this aggregate", e.tok);
      std::string k = build_key(g, idx, e.tok);
      line("STP_SET_LOC(c, " + std::to_string(em_.location(e.left->tok)) + ");");
      const MapInfo* smi = em_.map_of(g);
      if (!smi || smi->variance)
        line("stp_stat_add_shift(c, " + map_name(g) + ", &" + k + ", " + v + ", " +
             std::to_string(smi ? smi->variance_shift : 0) + ");");
      else
        line("stp_stat_add(c, " + map_name(g) + ", &" + k + ", " + v + ");");
      check_error();
      value_ = v;
      return;
    }
    bool str = is_str(e.left);
    if (e.op == "=") {
      // a[i] = v: the key is evaluated before the value, as SystemTap does (a[n++] = n).
      if (auto* ai = dynamic_cast<ast::ArrayIndex*>(e.left); ai && array_of(ai->base)) {
        std::string k = build_key(array_of(ai->base), ai->indexes, ai->tok);
        std::string v = eval_stable(e.right);
        write_element(*ai, v, str, k);
        value_ = v;
        return;
      }
      std::string v = eval_stable(e.right);
      value_ = store(e.left, v, str);
      return;
    }
    if (e.op == ".=" && is_procfs_value(e.left)) {  // grows past MAXSTRINGLEN
      line("stp_procfs_append(c, " + eval_stable(e.right) + ");");
      value_ = "stp_procfs_value(c)";
      return;
    }
    if (e.op == ".=") {
      std::string r = eval_stable(e.right);
      std::string cur = eval(e.left);
      std::string t = tmp_str();
      line("stp_str_copy(c, " + t + ", " + cur + ");");
      line("stp_str_cat(c, " + t + ", " + r + ");");
      value_ = store(e.left, t, true);
      return;
    }
    // Arithmetic compound assignment: reuse the binary operator's code on (left, right).
    std::string op = e.op.substr(0, e.op.size() - 1);
    ast::BinaryExpression bin;
    bin.tok = e.tok;
    bin.left = e.left;
    bin.op = op;
    bin.right = e.right;
    bin.type = Type::Long;
    std::string v = eval(&bin);
    std::string t = tmp_long();
    line(t + " = " + v + ";");
    value_ = store(e.left, t, false);
  }

  void visit(ast::Symbol& e) override {
    if (!e.referent) throw TranslateError("unresolved symbol", e.tok);
    if (e.referent->type == Type::Stats) unsupported("reading an aggregate as a value", e.tok);
    value_ = em_.var_access(e.referent);
  }

  // Kernel types (codegen/kernel_values.h) write their reads through this.
  struct KernelSink : btf::CodeSink {
    BodyEmitter& b;
    explicit KernelSink(BodyEmitter& be) : b(be) {}
    void line(const std::string& t) override { b.line(t); }
    std::string tmp_long() override { return b.tmp_long(); }
    std::string tmp_str() override { return b.tmp_str(); }
    std::string eval_long(ast::Expression* x) override { return b.eval_stable(x); }
  };

  // A procfs probe's $value (translator/probes/procfs_family.cpp).
  bool is_procfs_value(ast::Expression* e) const {
    auto* t = dynamic_cast<ast::TargetSymbol*>(e);
    return t && native_ && t->name == "$value" && t->components.empty() && probe_ &&
           probe_->family.is(probes::ProbeKind::Procfs);
  }

  // A netfilter probe's plain $name (probes/netfilter_family.cpp); members are kernel_values'.
  bool is_netfilter_var(ast::Expression* e, const char* name) const {
    auto* t = dynamic_cast<ast::TargetSymbol*>(e);
    return t && !native_ && t->name == name && t->components.empty() && !t->addressof &&
           probe_ && probe_->family.is(probes::ProbeKind::Netfilter);
  }

  void visit(ast::TargetSymbol& e) override {
    if (is_procfs_value(&e)) {
      value_ = "stp_procfs_value(c)";
      return;
    }
    if (is_netfilter_var(&e, "$verdict")) {
      value_ = "STP_NF_VERDICT(c)";
      return;
    }
    if (is_netfilter_var(&e, "$hooknum")) {
      value_ = "((int64_t)" + std::to_string(probe_->family.get<probes::NetfilterPoint>()->hooknum) + ")";
      return;
    }
    for (const char* v : {"$skb", "$in", "$out"})
      if (is_netfilter_var(&e, v)) {
        value_ = std::string("STP_NF_") + (v[1] == 's' ? "SKB" : v[1] == 'i' ? "IN" : "OUT") + "(c)";
        return;
      }
    if (!native_) {
      KernelSink sink(*this);
      if (auto v = kernel_target_value(probe_, e, sink)) {
        value_ = *v;
        return;
      }
    }
    if (!e.components.empty()) unsupported("target variable member access", e.tok);
    if (probe_ && probe_->family.is(probes::ProbeKind::Process)) {
      value_ = process_var(e);
      return;
    }
    if (probe_ && probe_->family.is(probes::ProbeKind::Uprobe)) {
      const auto& up = *probe_->family.get<probes::UprobePoint>();
      if (e.name == "$$name" && (up.plt || up.sdt)) {  // the PLT's import, the marker's name
        value_ = c_quote(up.sdt ? up.sdt->name : up.symbol);
        return;
      }
      if (e.name == "$$provider" && up.sdt) {
        value_ = c_quote(up.sdt->provider);
        return;
      }
      if (up.sdt && e.name.rfind("$arg", 0) == 0) {  // the note's operand (probes/sdt_args.h)
        int n = std::atoi(e.name.c_str() + 4);
        auto a = probes::parse_sdt_arg(up.sdt->args, n);
        if (!a) unsupported("SDT argument " + e.name + " ('" + up.sdt->args + "')", e.tok);
        value_ = "STP_SDT_ARG(c, " + std::to_string(a->reg) + ", " + (a->mem ? "1" : "0") + ", " +
                 std::to_string(a->disp) + "LL, " + std::to_string(a->size) + ")";
        return;
      }
      if (e.name == "$return" && probe_->family.get<probes::UprobePoint>()->plt) {
        value_ = "STP_URETVAL(c)";
        return;
      }
      if (e.name == "$return") {
        std::string type;
        for (auto& [n, t] : probe_->target_vars)
          if (n == "$return") type = t;
        value_ = "STP_URETVAL(c)";
        // An int return lives in eax: sign- or zero-extend it as its C type says.
        if (!type.empty() && type.back() != '*' && type.find("long") == std::string::npos &&
            type.find("struct") == std::string::npos && type.find("float") == std::string::npos &&
            type.find("double") == std::string::npos && type.find('[') == std::string::npos) {
          std::string ctype = c_integer_type(type);
          if (!ctype.empty()) value_ = "((int64_t)(" + ctype + ")STP_URETVAL(c))";
        }
        return;
      }
      value_ = uprobe_param(e);
      return;
    }
    if (!tp_) unsupported("target variable " + e.name + " in this probe", e.tok);
    for (auto& f : tp_->fields) {
      if ("$" + f.name != e.name) continue;
      if (f.type.rfind("__data_loc", 0) == 0) {
        std::string t = tmp_str();
        line("STP_TP_DATALOC_STR(c, " + t + ", " + std::to_string(f.offset) + ");");
        value_ = t;
      } else if (e.type == Type::String) {
        std::string t = tmp_str();
        line("STP_TP_STR(c, " + t + ", " + std::to_string(f.offset) + ", " +
             std::to_string(f.size) + ");");
        value_ = t;
      } else {
        value_ = "STP_TP_LONG(c, " + std::to_string(f.offset) + ", " +
                 std::to_string(f.value_size) + ", " + (f.value_signed ? "1" : "0") + ")";
      }
      return;
    }
    if (e.name == "$$vars" || e.name == "$$parms" || e.name == "$$locals") {
      value_ = all_fields(e.name == "$$locals");
      return;
    }
    if (e.name.rfind("$$", 0) == 0) unsupported(e.name, e.tok);
    throw TranslateError("unknown tracepoint field " + e.name, e.tok);
  }
  // $$vars / $$parms of a tracepoint: "name=VALUE name=VALUE", integers as %#x and strings
  // quoted, as SystemTap's expansion of sprintf("a=%#x b=%#x", ...). A tracepoint has no
  // locals: $$locals is "".
  std::string all_fields(bool locals_only) {
    std::string t = tmp_str();
    line("stp_sfmt_begin(c, " + t + ");");
    if (locals_only) return t;
    bool first = true;
    for (auto& f : tp_->fields) {
      if (!probes::trace_field_visible(f)) continue;
      line("stp_sfmt_lit(c, " + t + ", " + c_quote((first ? "" : " ") + f.name + "=") + ");");
      first = false;
      if (f.type.rfind("__data_loc", 0) == 0 ||
          (f.type.find("char") != std::string::npos && f.type.find('[') != std::string::npos)) {
        std::string v = tmp_str();
        if (f.type.rfind("__data_loc", 0) == 0)
          line("STP_TP_DATALOC_STR(c, " + v + ", " + std::to_string(f.offset) + ");");
        else
          line("STP_TP_STR(c, " + v + ", " + std::to_string(f.offset) + ", " +
               std::to_string(f.size) + ");");
        line("stp_sfmt_lit(c, " + t + ", \"\\\"\");");
        line("stp_sfmt_str(c, " + t + ", " + v + ", 0, 0, -1);");
        line("stp_sfmt_lit(c, " + t + ", \"\\\"\");");
      } else {
        line("stp_sfmt_long(c, " + t + ", STP_TP_LONG(c, " + std::to_string(f.offset) + ", " +
             std::to_string(f.value_size) + ", " + (f.value_signed ? "1" : "0") +
             "), 'x', STP_FLAG_ALT, 0, -1);");
      }
    }
    return t;
  }
  // process.syscall's $syscall and $arg1..$arg6, process.syscall.return's $syscall and $return
  // (runtime/bpf/stp_bpf_process.h reads them from the task's saved registers).
  std::string process_var(ast::TargetSymbol& e) {
    if (e.name == "$syscall") return "STP_PROC_SYSCALL(c)";
    if (e.name == "$return") return "STP_PROC_SYSRET(c)";
    if (e.name.size() == 5 && e.name.rfind("$arg", 0) == 0 && e.name[4] >= '1' && e.name[4] <= '6')
      return "STP_PROC_SYSARG(c, " + e.name.substr(4) + ")";
    unsupported("target variable " + e.name + " in a process probe", e.tok);
  }
  // A function parameter at a uprobe on the function's entry: the n-th integer argument
  // register of the ABI (x86-64 SysV: rdi rsi rdx rcx r8 r9), cast to its declared C type.
  std::string uprobe_param(ast::TargetSymbol& e) {
    const auto& up = *probe_->family.get<probes::UprobePoint>();
    bool is_return = up.is_return;
    for (int k = 1; k <= 6 && k <= static_cast<int>(up.params.size()); ++k) {
      const std::string& name = up.params[k - 1].name;
      const std::string& type = up.params[k - 1].type;
      if (name != e.name) continue;
      if (is_return) unsupported("a parameter in a .return probe (use @entry(" + e.name + "))", e.tok);
      if (!type.empty() && type.back() == '*') return "((int64_t)STP_UARG(c, " + std::to_string(k) + "))";
      // Integers only: the cast is made of C integer words (c_text.h), never of DWARF's text.
      std::string ctype = c_integer_type(type);
      if (ctype.empty() || type.find("struct") != std::string::npos ||
          type.find("union") != std::string::npos || type.find("float") != std::string::npos ||
          type.find("double") != std::string::npos || type.find('[') != std::string::npos)
        unsupported("parameter " + e.name + " of type " + type, e.tok);
      return "((int64_t)(" + ctype + ")STP_UARG(c, " + std::to_string(k) + "))";
    }
    // $$vars/$$parms/$$locals/$$return are pretty-printed summaries, not parameters: say so,
    // rather than send the user to check the function's calling convention.
    if (e.name.rfind("$$", 0) == 0) {
      std::string names;
      for (const auto& prm : up.params) names += (names.empty() ? "" : ", ") + prm.name;
      std::string use = e.name == "$$return" ? "$return"
                        : names.empty()      ? "the parameters by name"
                                             : "the parameters by name (" + names + ")";
      throw TranslateError(e.name + " at a uprobe is not supported by the BPF backend yet: print " +
                               use + " instead",
                           e.tok);
    }
    unsupported("target variable " + e.name + " (not a register parameter) at a uprobe", e.tok);
  }

  void visit(ast::CastOp& e) override {
    if (passes::cast_layout_pattern(e)) {  // sizeof/offsetof: folded (passes/cast_layout.h)
      value_ = "((int64_t)" + std::to_string(passes::cast_layout_value(e)) + "LL)";
      return;
    }
    if (native_) unsupported("@cast (kernel types) in a user-space probe", e.tok);
    KernelSink sink(*this);
    value_ = kernel_cast_value(e, eval_stable(e.operand), sink);
  }
  void visit(ast::AtVarOp& e) override { unsupported("@var", e.tok); }
  void visit(ast::DefinedOp& e) override { value_ = e.value > 0 ? "((int64_t)1)" : "((int64_t)0)"; }
  // Pass 2 made the operand the local the return probe's prologue filled with the value saved
  // at entry (passes/entry_values.cpp).
  void visit(ast::EntryOp& e) override {
    if (!dynamic_cast<ast::Symbol*>(e.operand)) unsupported("@entry outside a .return probe", e.tok);
    value_ = eval(e.operand);
  }
  void visit(ast::PerfOp& e) override { unsupported("@perf", e.tok); }
  void visit(ast::HistogramOp& e) override { unsupported("a histogram as a value", e.tok); }

  // Values of a key pattern (`[*, "x"]`): "" for a '*' part.
  std::vector<std::string> slice_values(const std::vector<ast::Expression*>& parts) {
    std::vector<std::string> out;
    bool any = false;
    for (auto* p : parts) {
      out.push_back(p ? eval_stable(p) : "");
      any |= p != nullptr;
    }
    if (!any) out.clear();
    return out;
  }
  // C condition: key temp `k` matches the non-wildcard parts of `slice`.
  std::string key_matches(const MapInfo& mi, const std::string& k,
                          const std::vector<std::string>& slice) {
    std::string cond = "1";
    for (size_t i = 0; i < slice.size() && i < mi.key_types.size(); ++i) {
      if (slice[i].empty()) continue;
      std::string field = k + ".k" + std::to_string(i);
      if (mi.key_types[i] == Type::String)
        cond += " && stp_str_cmp(c, " + field + ", " + slice[i] + ") == 0";
      else
        cond += " && " + field + " == " + slice[i];
    }
    return cond;
  }
  bool has_wildcard(const std::vector<ast::Expression*>& idx) {
    for (auto* i : idx)
      if (!i) return true;
    return false;
  }
  // `delete a[*, 1]` and `[*, 1] in a`: a walk over the entries (user-space probes only).
  // Returns the "found" temp for `in`.
  std::string wildcard_walk(const ast::Vardecl* g, const std::vector<ast::Expression*>& idx,
                            bool erase, const Token* tok) {
    const MapInfo* mi = em_.map_of(g);
    if (!mi) unsupported("a '*' key pattern here", tok);
    std::vector<std::string> slice = slice_values(idx);
    if (slice.empty()) slice.assign(idx.size(), "");
    if (!native_) return kernel_wildcard_walk(*mi, slice, erase);
    std::string it = frame_.add_temp("struct stp_iter", "it");
    std::string k = frame_.add_temp("struct stp_key_" + em_.c_name(g->name), "k");
    std::string v = frame_.add_temp(
        (mi->stats ? "struct stp_stat_" : "struct stp_val_") + em_.c_name(g->name), "v");
    std::string found = tmp_long();
    line(found + " = 0;");
    line("stp_iter_begin(c, &" + it + ", " + map_name(g) + ", 0, 0, \"count\", -1);");
    check_error();
    line("while (stp_iter_next(c, &" + it + ", &" + k + ", &" + v + ")) {");
    ++indent;
    line("if (!(" + key_matches(*mi, k, slice) + ")) continue;");
    line(found + " = 1;");
    line(erase ? "stp_map_delete(c, " + map_name(g) + ", &" + k + ");" : "break;");
    --indent;
    line("}");
    line("stp_iter_end(c, &" + it + ");");
    return found;
  }

  // The same in a BPF probe (`delete a[pid(), *]` when a process exits): a
  // bpf_for_each_map_elem callback, as for a kernel foreach, deleting each entry that matches
  // (a hash map's current entry may be deleted from its callback) or stopping at the first.
  std::string kernel_wildcard_walk(const MapInfo& mi, const std::vector<std::string>& slice,
                                   bool erase) {
    std::string found = tmp_long();
    line(found + " = 0;");
    std::string name = "stp_cb_" + std::to_string(em_.next_callback_++);
    std::ostringstream cb;
    std::ostringstream* saved_out = out_;
    int saved_indent = indent;
    out_ = &cb;
    indent = 1;
    cb << "static long " << name << "(void *map, void *key, void *val, void *data)\n{\n";
    line("struct stp_context *c = ((struct stp_cbdata *)data)->c;");
    line("struct stp_key_" + em_.c_name(mi.name) + " *k = key;");
    line("(void)val;");
    line("if (!(" + key_matches(mi, "(*k)", slice) + ")) return 0;");
    line(found + " = 1;");
    line(erase ? "bpf_map_delete_elem(map, key);" : "return 1;");
    line("return 0;");
    cb << "}\n\n";
    out_ = saved_out;
    indent = saved_indent;
    if (dispatched_)
      em_.callbacks_ << kReadSysrec << cb.str() << kReadCtx;
    else
      em_.callbacks_ << cb.str();
    line("{");
    ++indent;
    line("struct stp_cbdata d = {c, g, ctx};");
    line("uint8_t kskip = STP_KSKIP_CALLBACK_ENTER(c);");
    line("bpf_for_each_map_elem(&" + mi.bpf_name + ", " + name + ", &d, 0);");
    line("c->k.kskip = kskip;");
    --indent;
    line("}");
    return found;
  }

  // The aggregate behind @count(x) / @count(a[k]) into a temp; returns it.
  std::string aggregate(ast::Expression* stat, const Token* tok) {
    const ast::Vardecl* g = nullptr;
    std::vector<ast::Expression*> idx;
    if (auto* sym = dynamic_cast<ast::Symbol*>(stat)) g = sym->referent;
    if (auto* ai = dynamic_cast<ast::ArrayIndex*>(stat)) {
      g = array_of(ai->base);
      idx = ai->indexes;
    }
    if (!g) unsupported("this aggregate", tok);
    std::string k = build_key(g, idx, tok);
    std::string a = frame_.add_temp("struct stp_stat_" + em_.c_name(g->name), "a");
    line("stp_stat_get(c, " + map_name(g) + ", &" + k + ", &" + a + ");");
    check_error();
    return a;
  }
  void visit(ast::StatOp& e) override {
    std::string a = aggregate(e.stat, e.tok);
    if (e.op == "count" || e.op == "sum") {
      value_ = a + "." + e.op;
      return;
    }
    line("if (" + a + ".count == 0) { stp_error(c, \"empty aggregate\", " +
         std::to_string(em_.location(e.tok)) + "); goto " + err_label + "; }");
    if (e.op == "variance") {
      int shift = e.params.empty() ? 0 : static_cast<int>(e.params.front());
      value_ = "stp_stat_variance_shift((const struct stp_stat_base *)&" + a + ", " +
               std::to_string(shift) + ")";
      return;
    }
    if (e.op == "avg")
      value_ = "(" + a + ".sum / " + a + ".count)";
    else
      value_ = a + "." + e.op;
  }
  void visit(ast::ArrayIndex& e) override {
    if (dynamic_cast<ast::HistogramOp*>(e.base)) unsupported("histogram bucket access", e.tok);
    value_ = read_element(e);
  }
  void visit(ast::ArrayIn& e) override {
    const ast::Vardecl* g = array_of(e.operand->base);
    if (!g) unsupported("'in' on this expression", e.tok);
    if (has_wildcard(e.operand->indexes)) {
      value_ = wildcard_walk(g, e.operand->indexes, false, e.tok);
      return;
    }
    std::string k = build_key(g, e.operand->indexes, e.tok);
    std::string t = tmp_long();
    line(t + " = stp_map_exists(c, " + map_name(g) + ", &" + k + ");");
    value_ = t;
  }

  void visit(ast::FunctionCall& e) override {
    ast::Function* f = e.referent;
    if (!f) throw TranslateError("unresolved function " + e.name, e.tok);
    if (em_.a_.bt_tokens.is_token(&e)) {  // ubacktrace() as a key: a stack-id token
      std::string t = tmp_str();
      line("_stp_ustack_hex_token(" + t + ");");
      value_ = t;
      return;
    }
    std::vector<std::string> args;
    for (auto* a : e.args) args.push_back(eval_stable(a));
    Emitter::Frame* ff = em_.frame_of(f);
    for (size_t k = 0; k < args.size(); ++k) {
      std::string param = em_.var_access(f->formal_args[k]);
      if (f->formal_args[k]->type == Type::String)
        line("stp_str_copy(c, " + param + ", " + args[k] + ");");
      else
        line(param + " = " + args[k] + ";");
    }
    line("stp_fn_" + em_.fn_c_name(f) + "(c, g STP_FN_CTX_ARG);");
    check_error();
    if (f->type == Type::String) {
      std::string t = tmp_str();
      line("stp_str_copy(c, " + t + ", " + ff->access + ".__retvalue);");
      value_ = t;
    } else if (f->type == Type::Long) {
      std::string t = tmp_long();
      line(t + " = " + ff->access + ".__retvalue;");
      value_ = t;
    } else {
      value_ = "((int64_t)0)";
    }
  }

  // print/println/printd... as a format: "%d%s", with delimiters and newline as literal text.
  std::string synth_format(ast::PrintFormat& e) {
    std::string fmt;
    auto esc = [](const std::string& s) {
      std::string o;
      for (char ch : s) o += ch == '%' ? std::string("%%") : std::string(1, ch);
      return o;
    };
    for (size_t k = 0; k < e.args.size(); ++k) {
      if (k && e.with_delim) fmt += esc(e.delimiter);
      fmt += is_str(e.args[k]) ? "%s" : "%d";
    }
    if (e.with_newline) fmt += "\n";
    return fmt;
  }

  void visit(ast::PrintFormat& e) override {
    if (e.hist) {
      const ast::Vardecl* g = nullptr;
      std::vector<ast::Expression*> idx;
      if (auto* sym = dynamic_cast<ast::Symbol*>(e.hist->stat)) g = sym->referent;
      if (auto* ai = dynamic_cast<ast::ArrayIndex*>(e.hist->stat)) {
        g = array_of(ai->base);
        idx = ai->indexes;
      }
      if (!g) unsupported("printing this histogram", e.tok);
      if (!e.to_stream) unsupported("sprint of a histogram", e.tok);
      std::string k = build_key(g, idx, e.tok);
      line("stp_print_hist(c, " + map_name(g) + ", &" + k + ");");
      check_error();
      value_ = "((int64_t)0)";
      return;
    }
    std::string fmt = e.with_format ? e.raw_format : synth_format(e);
    std::vector<ast::FormatComponent> comps =
        e.with_format ? e.components : parse::parse_format(fmt);
    std::vector<std::pair<std::string, bool>> args;  // value, is string
    for (auto* a : e.args) args.push_back({eval_stable(a), is_str(a)});
    if (e.to_stream) {
      int id = em_.format_id(fmt, comps, format_arg_names(e.args));
      // Which argument feeds a %m/%M: the bytes are captured now, not the address.
      std::map<size_t, const ast::FormatComponent*> mem_args;
      size_t ai = 0;
      for (auto& comp : comps) {
        if (comp.conv == ast::FormatComponent::Conv::Literal) continue;
        if (comp.width == -2) ++ai;
        if (comp.precision == -2) ++ai;
        if (comp.conv == ast::FormatComponent::Conv::Memory ||
            comp.conv == ast::FormatComponent::Conv::MemoryHex)
          mem_args[ai] = &comp;
        ++ai;
      }
      line("stp_printf_begin(c, " + std::to_string(id) + ");");
      for (size_t k = 0; k < args.size(); ++k) {
        auto& [v, str] = args[k];
        auto m = mem_args.find(k);
        if (m != mem_args.end()) {
          const auto* comp = m->second;
          std::string prec = comp->precision == -2 && k > 0 ? args[k - 1].first
                                                             : std::to_string(comp->precision);
          line("stp_printf_mem(c, " + v + ", " + prec + ", " + (comp->flag == '#' ? "1" : "0") +
               ");");
        } else {
          line(str ? "stp_printf_str(c, " + v + ");" : "stp_printf_long(c, " + v + ");");
        }
      }
      line("stp_printf_end(c);");
      value_ = "((int64_t)0)";
      return;
    }
    // sprint*: formatted in place by the portable core.
    std::string t = tmp_str();
    line("stp_sfmt_begin(c, " + t + ");");
    size_t a = 0;
    auto next = [&]() -> std::string { return a < args.size() ? args[a++].first : "0"; };
    for (auto& comp : comps) {
      if (comp.conv == ast::FormatComponent::Conv::Literal) {
        line("stp_sfmt_lit(c, " + t + ", " + c_quote(comp.literal) + ");");
        continue;
      }
      // No width is 0: the runtime reads a negative width as '-' (C's `*`), and "%-1s" of ""
      // is one space where SystemTap prints nothing.
      std::string width = comp.width == -2 ? next() : std::to_string(std::max(comp.width, 0));
      std::string prec = comp.precision == -2 ? next() : std::to_string(comp.precision);
      std::string v = next();
      char cv = conv_char(comp.conv);
      if (cv == 's')
        line("stp_sfmt_str(c, " + t + ", " + v + ", " + flag_bits(comp.flag) + ", " + width +
             ", " + prec + ");");
      else if (cv == 'c')
        line("stp_sfmt_char(c, " + t + ", " + v + ", " + flag_bits(comp.flag) + ", " + width +
             ");");
      else if ((cv == 'm' || cv == 'M') && !native_)  // prec bytes of kernel memory at v
        line("stp_sfmt_mem(c, " + t + ", " + v + ", " + char_lit(cv) + ", " +
             flag_bits(comp.flag) + ", " + width + ", " + prec + ");");
      else
        line("stp_sfmt_long(c, " + t + ", " + v + ", " + char_lit(cv) + ", " +
             flag_bits(comp.flag) + ", " + width + ", " + prec + ");");
    }
    value_ = t;
  }

  // ----------------------------------------------------------------------------- statements
  void visit(ast::Block& s) override {
    for (auto* st : s.statements) stmt(st);
  }
  void visit(ast::TryBlock& s) override {
    int n = try_counter_++;
    std::string label = "__catch" + std::to_string(n);
    std::string saved = err_label;
    err_label = label;
    line("{");
    ++indent;
    stmt(s.try_block);
    --indent;
    line("}");
    err_label = saved;
    line(label + ":");
    line("if (STP_CATCHABLE(c)) {");
    ++indent;
    if (s.catch_var) line("stp_str_copy(c, " + em_.var_access(s.catch_var->referent) + ", c->k.errmsg);");
    line("c->k.error = 0;");
    stmt(s.catch_block);
    --indent;
    line("}");
  }
  void visit(ast::EmbeddedCode& s) override { *out_ << s.code << "\n"; }
  void visit(ast::NullStatement&) override {}
  void visit(ast::ExprStatement& s) override {
    line("STP_ACTION(c, 1); if (STP_ERRORED(c)) goto " + err_label + ";");
    std::string v = eval(s.value);
    if (!v.empty() && v.find('(') != std::string::npos && v.rfind("((int64_t)", 0) != 0)
      line("(void)" + v + ";");
  }
  void visit(ast::IfStatement& s) override {
    line("STP_ACTION(c, 1); if (STP_ERRORED(c)) goto " + err_label + ";");
    std::string cond = eval(s.condition);
    line("if (" + cond + ") {");
    ++indent;
    stmt(s.then_stmt);
    --indent;
    if (s.else_stmt) {
      line("} else {");
      ++indent;
      stmt(s.else_stmt);
      --indent;
    }
    line("}");
  }
  void visit(ast::ForLoop& s) override {
    if (s.init) stmt(s.init);
    if (!native_) {
      auto impl = kernel_features::running_loop();
      if (impl == kernel_features::LoopImpl::None)
        throw TranslateError(
            kernel_features::loop_unavailable(kernel_features::Running::get().release(),
                                              kernel_features::forced_loop()),
            s.tok);
      if (impl == kernel_features::LoopImpl::BpfLoop) return kernel_bpf_loop(s);
    }
    int n = loop_counter_++;
    std::string cont = "__cont" + std::to_string(n);
    line("STP_LOOP(c) {");
    ++indent;
    line("STP_ACTION(c, 1); if (STP_ERRORED(c)) goto " + err_label + ";");
    if (s.cond) line("if (!(" + eval(s.cond) + ")) break;");
    continue_labels_.push_back(cont);
    break_text_.push_back("break;");
    stmt(s.body);
    break_text_.pop_back();
    continue_labels_.pop_back();
    line(cont + ":;");
    if (s.incr) stmt(s.incr);
    --indent;
    line("}");
    line("if (STP_ERRORED(c)) goto " + err_label + ";");
  }
  // A BPF callback holding a loop body (bpf_loop, bpf_for_each_map_elem): `header` opens it,
  // `prologue` writes its first lines (after c, g and ctx), `body` the loop's statements, with
  // `brk` as their break and `flag` set to 2 when they leave the probe or function, and `tail`
  // what follows a continue (a for loop's increment). Its text goes before the probes (inside a
  // dispatched syscall probe's record access: the callbacks are emitted outside the probe's own
  // STP__TPREC); the probe's output, indent and error label are restored.
  void emit_callback(const std::string& header, const std::string& flag, const std::string& brk,
                     const std::function<void()>& prologue, const std::function<void()>& body,
                     const std::function<void()>& tail) {
    std::ostringstream cb;
    std::ostringstream* saved_out = out_;
    int saved_indent = indent;
    std::string saved_err = err_label;
    out_ = &cb;
    indent = 1;
    cb << header << "\n{\n";
    line("struct stp_context *c = ((struct stp_cbdata *)data)->c;");
    line("struct stp_globals *g = ((struct stp_cbdata *)data)->g;");
    line("void *ctx = ((struct stp_cbdata *)data)->ctx;");
    prologue();
    err_label = "cb_err";
    continue_labels_.push_back("cb_cont");
    break_text_.push_back(brk);
    exit_text_.push_back("{ " + flag + " = 2; return 1; }");
    body();
    exit_text_.pop_back();
    break_text_.pop_back();
    continue_labels_.pop_back();
    line("cb_cont:;");
    tail();
    line("return 0;");
    cb << "cb_err:\n  return 1;\n}\n\n";
    out_ = saved_out;
    indent = saved_indent;
    err_label = saved_err;
    if (dispatched_)
      em_.callbacks_ << kReadSysrec << cb.str() << kReadCtx;
    else
      em_.callbacks_ << cb.str();
  }

  // A for/while loop in a BPF probe on a kernel without the bpf_iter_num kfuncs (before 6.4):
  // the condition, body and increment in a bpf_loop() callback, as a kernel foreach's body
  // (locals and temporaries live in the context map, reached through `c`). At most
  // MAXACTION + 1 iterations, as STP_LOOP: each costs an action, so the last one has already
  // raised MAXACTION exceeded; bpf_loop stops at 1 << 23 (BPF_MAX_LOOPS), as bpf_iter_num.
  void kernel_bpf_loop(ast::ForLoop& s) {
    int n = em_.next_callback_++;
    std::string flag = tmp_long();
    std::string name = "stp_lp_" + std::to_string(n);
    // flag: 1 the loop ended (condition false, break), 2 it left the probe or function.
    std::string ended = "{ " + flag + " = 1; return 1; }";
    emit_callback("static long " + name + "(uint64_t idx, void *data)", flag, ended,
                  [&] {
                    line("(void)idx; (void)g; (void)ctx;");
                    line("if (STP_ACTION(c, 1)) goto cb_err;");
                  },
                  [&] {
                    if (s.cond) line("if (!(" + eval(s.cond) + ")) " + ended);
                    stmt(s.body);
                  },
                  [&] {
                    if (s.incr) stmt(s.incr);
                  });

    line(flag + " = 0;");
    line("{");
    ++indent;
    line("struct stp_cbdata d = {c, g, ctx};");
    line("uint8_t kskip = STP_KSKIP_CALLBACK_ENTER(c);");
    line("bpf_loop(STP_LOOP_MAX, " + name + ", &d, 0);");
    line("c->k.kskip = kskip;");
    line("if (" + flag + " == 0 && !STP_ERRORED(c)) stp__loop_exhausted(&c->k);");
    --indent;
    line("}");
    line("if (STP_ERRORED(c)) goto " + err_label + ";");
    line("if (" + flag + " == 2) " +
         (exit_text_.empty() ? std::string("goto out;") : exit_text_.back()));
  }

  // foreach in a BPF probe: bpf_for_each_map_elem with the body in a callback (hash order, or
  // insertion order is not available there; sorting is for user-space probes).
  void kernel_foreach(ast::ForeachLoop& s) {
    auto* sym = dynamic_cast<ast::Symbol*>(s.base);
    if (!sym || !sym->referent) unsupported("foreach over this expression", s.tok);
    const ast::Vardecl* g = sym->referent;
    const MapInfo* mi = em_.map_of(g);
    if (!mi) unsupported("foreach over this expression", s.tok);
    if (s.sort_direction != 0)
      unsupported("sorted foreach in a kernel-context probe (sort in an end or timer.s probe)",
                  s.tok);
    if (mi->stats && s.value) unsupported("foreach value of an aggregate in a kernel probe", s.tok);
    std::vector<std::string> slice = slice_values(s.array_slice);
    std::string limit = s.limit ? eval_stable(s.limit) : "";
    int n = em_.next_callback_++;
    std::string flag = tmp_long(), count = tmp_long();
    std::string name = "stp_cb_" + std::to_string(n);
    std::string kt = "struct stp_key_" + em_.c_name(g->name);
    std::string vt = (mi->stats ? "struct stp_stat_" : "struct stp_val_") + em_.c_name(g->name);

    emit_callback("static long " + name + "(void *map, void *key, void *val, void *data)", flag,
                  "return 1;",
                  [&] {
                    line(kt + " *k = key;");
                    line(vt + " *v = val;");
                    line("(void)map; (void)g; (void)k; (void)v; (void)ctx;");
                    if (!slice.empty())
                      line("if (!(" + key_matches(*mi, "(*k)", slice) + ")) return 0;");
                    if (!limit.empty()) line("if (" + count + "++ >= " + limit + ") return 1;");
                    line("if (STP_ACTION(c, 1)) goto cb_err;");
                    for (size_t i = 0; i < s.indexes.size(); ++i) {
                      std::string lv = em_.var_access(s.indexes[i]->referent);
                      std::string field = "k->k" + std::to_string(i);
                      line(mi->key_types[i] == Type::String ? "stp_str_copy(c, " + lv + ", " + field + ");"
                                                            : lv + " = " + field + ";");
                    }
                    if (s.value) {
                      std::string lv = em_.var_access(s.value->referent);
                      line(mi->value_type == Type::String ? "stp_str_copy(c, " + lv + ", v->v);"
                                                          : lv + " = v->v;");
                    }
                  },
                  [&] { stmt(s.body); }, [] {});

    line(flag + " = 0;");
    line(count + " = 0;");
    line("{");
    ++indent;
    line("struct stp_cbdata d = {c, g, ctx};");
    line("uint8_t kskip = STP_KSKIP_CALLBACK_ENTER(c);");
    line("bpf_for_each_map_elem(&" + mi->bpf_name + ", " + name + ", &d, 0);");
    line("c->k.kskip = kskip;");
    --indent;
    line("}");
    line("if (STP_ERRORED(c)) goto " + err_label + ";");
    line("if (" + flag + " == 2) " +
         (exit_text_.empty() ? std::string("goto out;") : exit_text_.back()));
  }

  void visit(ast::ForeachLoop& s) override {
    if (!native_) return kernel_foreach(s);
    auto* sym = dynamic_cast<ast::Symbol*>(s.base);
    if (!sym || !sym->referent) unsupported("foreach over this expression", s.tok);
    const ast::Vardecl* g = sym->referent;
    const MapInfo* mi = em_.map_of(g);
    if (!mi) unsupported("foreach over this expression", s.tok);
    std::vector<std::string> slice = slice_values(s.array_slice);
    std::string it = frame_.add_temp("struct stp_iter", "it");
    std::string k = frame_.add_temp("struct stp_key_" + em_.c_name(g->name), "k");
    std::string vtype = mi->stats ? "struct stp_stat_" : "struct stp_val_";
    std::string v = frame_.add_temp(vtype + em_.c_name(g->name), "v");
    std::string limit = s.limit ? eval_stable(s.limit) : "-1";
    // A limit of 0 or less runs no iteration, as in SystemTap (the runtime's -1 means none).
    if (s.limit) limit = "(" + limit + " > 0 ? " + limit + " : 0)";
    std::string aggr = s.sort_aggr.empty() ? "count" : s.sort_aggr;
    // With a slice, `limit` counts the entries that match, so it is applied here.
    std::string counted;
    if (!slice.empty() && s.limit) {
      counted = tmp_long();
      line(counted + " = 0;");
    }
    line("stp_iter_begin(c, &" + it + ", " + map_name(g) + ", " +
         std::to_string(s.sort_column) + ", " + std::to_string(s.sort_direction) + ", " +
         c_quote(aggr) + ", " + (counted.empty() ? limit : "-1") + ");");
    check_error();
    int n = loop_counter_++;
    std::string cont = "__cont" + std::to_string(n);
    line("while (stp_iter_next(c, &" + it + ", &" + k + ", &" + v + ")) {");
    ++indent;
    if (!slice.empty()) line("if (!(" + key_matches(*mi, k, slice) + ")) continue;");
    if (!counted.empty()) line("if (" + counted + "++ >= " + limit + ") break;");
    line("STP_ACTION(c, 1); if (STP_ERRORED(c)) break;");
    for (size_t i = 0; i < s.indexes.size(); ++i) {
      std::string lv = em_.var_access(s.indexes[i]->referent);
      std::string field = k + ".k" + std::to_string(i);
      if (mi->key_types[i] == Type::String)
        line("stp_str_copy(c, " + lv + ", " + field + ");");
      else
        line(lv + " = " + field + ";");
    }
    if (s.value) {
      std::string lv = em_.var_access(s.value->referent);
      if (mi->stats && aggr == "avg")
        line(lv + " = " + v + ".count ? " + v + ".sum / " + v + ".count : 0;");
      else if (mi->stats)
        line(lv + " = " + v + "." + aggr + ";");
      else if (mi->value_type == Type::String)
        line("stp_str_copy(c, " + lv + ", " + v + ".v);");
      else
        line(lv + " = " + v + ".v;");
    }
    continue_labels_.push_back(cont);
    break_text_.push_back("break;");
    std::string saved = err_label;
    err_label = "__brk" + std::to_string(n);
    stmt(s.body);
    err_label = saved;
    break_text_.pop_back();
    continue_labels_.pop_back();
    line(cont + ":;");
    --indent;
    line("}");
    line("__brk" + std::to_string(n) + ":");
    line("stp_iter_end(c, &" + it + ");");
    line("if (STP_ERRORED(c)) goto " + err_label + ";");
  }
  void visit(ast::ReturnStatement& s) override {
    if (fn_ && s.value) {
      std::string v = eval(s.value);
      Emitter::Frame* ff = em_.frame_of(fn_);
      if (is_str(s.value))
        line("stp_str_copy(c, " + ff->access + ".__retvalue, " + v + ");");
      else
        line(ff->access + ".__retvalue = " + v + ";");
    }
    line(exit_text_.empty() ? "goto out;" : exit_text_.back());
  }
  void visit(ast::DeleteStatement& s) override {
    if (auto* sym = dynamic_cast<ast::Symbol*>(s.value)) {
      const ast::Vardecl* v = sym->referent;
      if (const MapInfo* mi = em_.map_of(v)) {
        line((mi->stats ? "stp_stat_clear(c, " : "stp_map_clear(c, ") + map_name(v) + ");");
      } else if (v->type == Type::String) {
        line(em_.var_access(v) + "[0] = 0;");
      } else {
        line(em_.var_access(v) + " = 0;");
      }
      return;
    }
    if (auto* ai = dynamic_cast<ast::ArrayIndex*>(s.value)) {
      const ast::Vardecl* g = array_of(ai->base);
      if (!g) unsupported("delete of this expression", s.tok);
      if (has_wildcard(ai->indexes)) {
        wildcard_walk(g, ai->indexes, true, s.tok);
        return;
      }
      std::string k = build_key(g, ai->indexes, s.tok);
      const MapInfo* mi = em_.map_of(g);
      line(std::string(mi && mi->stats ? "stp_stat_delete(c, " : "stp_map_delete(c, ") +
           map_name(g) + ", &" + k + ");");
      return;
    }
    unsupported("delete of this expression", s.tok);
  }
  void visit(ast::NextStatement&) override {
    line(exit_text_.empty() ? "goto out;" : exit_text_.back());
  }
  void visit(ast::BreakStatement&) override {
    line(break_text_.empty() ? "break;" : break_text_.back());
  }
  void visit(ast::ContinueStatement&) override {
    line(continue_labels_.empty() ? "continue;" : "goto " + continue_labels_.back() + ";");
  }

  bool native_ = false;
  bool dispatched_ = false;  // a syscall probe behind the dispatcher: fields from c->k.sysrec

 private:
  Emitter& em_;
  Emitter::Frame& frame_;
  std::ostringstream* out_;
  // How `break` and `next`/`return` leave: C statements, or the callback of a kernel foreach.
  std::vector<std::string> break_text_;
  std::vector<std::string> exit_text_;
  DerivedProbe* probe_;
  ast::Function* fn_;
  const probes::TracepointPoint* tp_;
  std::string value_;
  int try_counter_ = 0;
  int loop_counter_ = 0;
  std::vector<std::string> continue_labels_;
};

// ------------------------------------------------------------------------------------ layout

void Emitter::layout_globals() {
  HistFinder hists;
  for (auto* p : s_.probes) p->body->accept(hists);
  for (auto* f : s_.functions)
    if (f->body) f->body->accept(hists);
  VarianceShiftFinder shifts;
  for (auto* p : s_.probes) p->body->accept(shifts);
  for (auto* f : s_.functions)
    if (f->body) f->body->accept(shifts);

  std::ostringstream scalars;
  int64_t maxentries = std::stoll(s_.define("MAXMAPENTRIES", "2048"));
  for (auto* g : s_.globals) {
    std::string n = c_name(g->name);
    if (g->arity <= 0 && g->type != Type::Stats) {
      scalars << "  " << (g->type == Type::String ? "char g_" + n + "[STP_MAXSTRINGLEN]" : "int64_t g_" + n)
              << ";\n";
      has_scalar_globals_ = true;
      continue;
    }
    MapInfo mi;
    mi.name = g->name;
    mi.stats = g->type == Type::Stats;
    mi.bpf_name = (mi.stats ? "stp_stat_" : "stp_map_") + n;
    mi.scalar = g->arity <= 0;
    mi.key_types = g->index_types;
    mi.value_type = g->type;
    mi.max_entries = g->maxsize > 0 ? g->maxsize : (mi.scalar ? 1 : maxentries);
    mi.wrap = g->wrap;
    if (!mi.scalar) {
      types_ << "struct stp_key_" << n << " {";
      for (size_t k = 0; k < g->index_types.size(); ++k) {
        // A key that only ever holds a ubacktrace() token: token-sized (the map hashes it).
        mi.token_keys.push_back(g->index_types[k] == Type::String && a_.bt_tokens.is_token_key(g, k));
        mi.text_keys.push_back(g->index_types[k] == Type::String && passes::merged_by_text(a_.sym_tokens, g, k));
        mi.text_keys_keep_one = a_.text_keyed_literal.count(g) != 0;
        types_ << (mi.token_keys.back() ? " char k" + std::to_string(k) + "[STP_TOKEN_KEY_SIZE];"
                   : g->index_types[k] == Type::String ? " char k" + std::to_string(k) +
                                                           "[STP_MAXSTRINGLEN];"
                                                     : " int64_t k" + std::to_string(k) + ";");
      }
      types_ << " };\n";
    }
    std::string key = mi.scalar ? "struct stp_key_unit" : "struct stp_key_" + n;
    if (mi.stats) {
      if (auto sh = shifts.shifts.find(g); sh != shifts.shifts.end())
        mi.variance_shift = sh->second;
      mi.variance = shifts.keeps_variance(g);
      auto it = hists.hists.find(g);
      std::string buckets = "0";
      std::string kind = "STP_HIST_NONE";
      if (it != hists.hists.end()) {
        const auto* h = it->second;
        if (h->kind == ast::HistogramOp::Kind::Log) {
          mi.hist_kind = 1;
          kind = "STP_HIST_LOG";
          buckets = "STP_HIST_LOG_BUCKETS";
        } else if (h->params.size() == 3 && h->params[2] > 0) {
          mi.hist_kind = 2;
          kind = "STP_HIST_LINEAR";
          mi.hist_start = h->params[0];
          mi.hist_stop = h->params[1];
          mi.hist_interval = h->params[2];
          mi.hist_buckets = static_cast<int>((mi.hist_stop - mi.hist_start) / mi.hist_interval + 3);
          buckets = std::to_string(mi.hist_buckets);
        }
      }
      types_ << "struct stp_stat_" << n << " { STP_STAT_FIELDS;"
             << (buckets == "0" ? "" : " int64_t buckets[" + buckets + "];") << " };\n";
      types_ << "STP_DEFINE_STATS(" << n << ", " << key << ", struct stp_stat_" << n << ", "
             << mi.max_entries << ", " << kind << ", " << mi.hist_start << ", " << mi.hist_stop
             << ", " << mi.hist_interval << ");\n";
      map_index_[g] = static_cast<int>(m_.maps.size());
      m_.maps.push_back(mi);
      m_.stats.push_back(mi);
      continue;
    }
    // seq first: the runtime keeps each element's insertion number there (foreach order).
    types_ << "struct stp_val_" << n << " { uint64_t seq; "
           << (g->type == Type::String ? "char v[STP_MAXSTRINGLEN];" : "int64_t v;") << " };\n";
    types_ << "STP_DEFINE_MAP(" << n << ", " << key << ", struct stp_val_" << n << ", "
           << mi.max_entries << ", " << (mi.wrap ? 1 : 0) << ");\n";
    map_index_[g] = static_cast<int>(m_.maps.size());
    m_.maps.push_back(mi);
  }
  std::ostringstream out;
  out << "struct stp_globals {\n"
      << (has_scalar_globals_ ? scalars.str() : "  int64_t __unused;\n") << "};\n"
      << "STP_DEFINE_GLOBALS(struct stp_globals);\n";
  types_.str(out.str() + types_.str());
}

// Global initializers (`global x = 5`, -G x=5) run once, natively, before any begin probe.
static std::string globals_init(Session& s) {
  std::ostringstream o;
  for (auto* g : s.globals) {
    if (g->arity > 0 || g->type == Type::Stats) continue;
    std::string value;
    for (auto& [name, v] : s.opts.globals_init)
      if (name == g->name) value = v;
    bool str = g->type == Type::String;
    if (value.empty() && g->init) {
      if (auto* n = dynamic_cast<ast::LiteralNumber*>(g->init)) value = std::to_string(n->value);
      if (auto* sl = dynamic_cast<ast::LiteralString*>(g->init)) value = sl->value;
      if (auto* u = dynamic_cast<ast::UnaryExpression*>(g->init))
        if (auto* n = dynamic_cast<ast::LiteralNumber*>(u->operand))
          value = std::to_string(u->op == "-" ? -n->value : n->value);
    }
    if (value.empty()) continue;
    if (str)
      o << "  stp_str_copy(c, g->g_" << c_identifier(g->name) << ", " << c_quote(value) << ");\n";
    else if (int64_t n; passes::global_option_number(value, n))  // checked in pass 2
      o << "  g->g_" << c_identifier(g->name) << " = " << c_long(n) << ";\n";
  }
  return o.str();
}

void Emitter::emit_function(ast::Function* f, bool native) {
  Frame& fr = *function_frames_[f];
  std::ostringstream body;
  std::string n = fn_c_name(f);
  body << (native ? "#ifdef __UKSTAP_NATIVE__\n" : "#ifdef __UKSTAP_BPF__\n");
  body << fn_declaration(a_.calls, f, n) << " {\n" << fn_context_local(a_.calls, f);
  body << "  (void)g;\n";
  if (f->has_embedded_body()) {
    auto* code = static_cast<ast::EmbeddedCode*>(f->body);
    std::string ret = fr.access + ".__retvalue";
    for (auto* a : f->formal_args)
      body << "#define STAP_ARG_" << c_identifier(a->name) << " (" << var_access(a) << ")\n";
    body << "#define STAP_RETVALUE " << ret << "\n";
    body << "#undef STAP_RETURN\n#define STAP_RETURN(v) do { STAP_RETVALUE = (v); goto out; } while (0)\n";
    body << "#define STAP_FN_LOC " << location(f->tok) << "\n";
    body << code->code << "\n";
    body << "#undef STAP_RETURN\n#undef STAP_RETVALUE\n#undef STAP_FN_LOC\n";
    for (auto* a : f->formal_args) body << "#undef STAP_ARG_" << c_identifier(a->name) << "\n";
    body << "  goto out;\nout:\n  return;\n}\n#endif\n\n";
    functions_ << body.str();
    return;
  }
  for (auto* l : f->locals)
    body << "  " << (l->type == Type::String ? var_access(l) + "[0] = 0;" : var_access(l) + " = 0;")
         << "\n";
  if (f->type == Type::String)
    body << "  " << fr.access << ".__retvalue[0] = 0;\n";
  else if (f->type == Type::Long)
    body << "  " << fr.access << ".__retvalue = 0;\n";
  BodyEmitter be(*this, fr, body, nullptr, f, nullptr);
  be.native_ = native;
  be.stmt(f->body);
  body << "  goto out;\nout:\n  return;\n}\n#endif\n\n";
  functions_ << body.str();
}

namespace {
// "PID, KDEV, INO" of a process-family filter (probes::ExeFilter), as C constants.
std::string process_filter_args(const probes::ExeFilter& f) {
  return std::to_string(f.pid) + "LL, " + std::to_string(f.kdev) + "ULL, " +
         std::to_string(f.ino) + "ULL";
}
}  // namespace

std::string Emitter::probe_macro(const DerivedProbe& p, int id) {
  std::string ids = std::to_string(id);
  if (a_.placement.of(p) == passes::ProbeSide::Native) return "STP_PROBE_NATIVE(" + ids + ")";
  if (auto* d = a_.dispatch.of(p))
    return "STP_PROBE_SYSCALL(" + ids + ", " + (d->exit ? "1" : "0") + ")";
  using probes::ProbeKind;
  switch (p.family.kind()) {
    case ProbeKind::Timer:  // timer.profile (the interval timers are native)
    case ProbeKind::Perf:
      return "STP_PROBE_PERF(" + ids + ")";
    case ProbeKind::Tracepoint: {
      auto& tp = *p.family.get<probes::TracepointPoint>();
      // A probe reading BTF arguments ($next->pid): a tp_btf program on the tracepoint
      // (passes/tracepoint_context.cpp).
      if (tp.use_btf_args) return "STP_PROBE_RAW_TP(" + ids + ", " + c_quote(tp.event) + ")";
      return "STP_PROBE_TRACEPOINT(" + ids + ", " + c_quote(tp.system) + ", " + c_quote(tp.event) +
             ")";
    }
    case ProbeKind::Uprobe: {
      // The process family's filter (runtime/bpf/stp_bpf_process.h): pid, program, -c/-x tree.
      auto& up = *p.family.get<probes::UprobePoint>();
      return (up.is_return ? "STP_PROBE_URETPROBE_IN(" : "STP_PROBE_UPROBE_IN(") + ids + ", " +
             process_filter_args(up.filter) + ")";
    }
    case ProbeKind::Process: {
      using Ev = probes::ProcessPoint::Event;
      auto& pp = *p.family.get<probes::ProcessPoint>();
      std::string f = process_filter_args(pp.filter);
      switch (pp.event) {
        case Ev::Begin: return "STP_PROBE_PROC_BEGIN(" + ids + ", " + f + ")";
        case Ev::ThreadBegin: return "STP_PROBE_PROC_THREAD_BEGIN(" + ids + ", " + f + ")";
        case Ev::End:
          // Before sched_process_exit had group_dead (6.1): the task's live-thread count.
          if (kernel_features::choose_group_exit(
                  kernel_features::Running::get().exit_group_dead()) ==
              kernel_features::GroupExit::SignalLive)
            return "STP_PROBE_PROC_END_BY_LIVE(" + ids + ", " + f + ")";
          return "STP_PROBE_PROC_END(" + ids + ", 0, " + f + ")";
        case Ev::ThreadEnd: return "STP_PROBE_PROC_END(" + ids + ", 1, " + f + ")";
        case Ev::Syscall: return "STP_PROBE_PROC_SYSCALL(" + ids + ", " + f + ")";
        case Ev::SyscallReturn: return "STP_PROBE_PROC_SYSCALL_RETURN(" + ids + ", " + f + ")";
      }
      break;
    }
    case ProbeKind::Netfilter:  // runtime/bpf/stp_bpf_netfilter.h; the kind's one program type
      return "STP_PROBE_NETFILTER(" + ids + ")";
    case ProbeKind::KernelFunction: {  // runtime/bpf/stp_bpf_kfunc.h
      auto& kf = *p.family.get<probes::KernelFunctionPoint>();
      bool fentry = kf.mechanism == probes::KernelFunctionPoint::Mechanism::Fentry;
      const char* m = fentry ? (kf.is_return ? "STP_PROBE_FEXIT(" : "STP_PROBE_FENTRY(")
                             : (kf.is_return ? "STP_PROBE_KRETPROBE(" : "STP_PROBE_KPROBE(");
      return m + ids + ", " + c_quote(kf.function) + ")";
    }
    case ProbeKind::Begin:  // native (above); never: not emitted. No default: -Wswitch
    case ProbeKind::End:    // names a new kind without its case here.
    case ProbeKind::Error:
    case ProbeKind::Never:
    case ProbeKind::Procfs:  // native
    case ProbeKind::Input:  // native
      break;
  }
  throw TranslateError(std::string("probe family '") + p.family.name() +
                           "' is not supported by the BPF backend yet",
                       p.point->tok);
}

void Emitter::emit_probe(DerivedProbe* p, int id) {
  Frame& fr = frames_.emplace_back();
  fr.struct_name = "stp_locals_p" + std::to_string(id);
  fr.access = "c->l.p" + std::to_string(id);
  for (auto* l : p->locals) {
    std::string lv = l->type == Type::String
                         ? fr.add_field("char", "l_" + c_name(l->name), "[STP_MAXSTRINGLEN]")
                         : fr.add_field("int64_t", "l_" + c_name(l->name));
    var_access_[l] = lv;
  }
  ProbeInfo info;
  info.id = id;
  info.family = p->family;
  info.pp = p->point->str();
  info.pn = p->alias_name ? p->alias_name->str()
                          : (p->chain.empty() ? info.pp : p->chain.back()->str());
  // The point as the user's script wrote it (the outermost link of the chain).
  const ast::ProbePoint* written = p->chain.empty() ? p->point : p->chain.back();
  if (written && written->tok && written->tok->loc.file)
    info.location = written->tok->loc.file->name + ":" + std::to_string(written->tok->loc.line) +
                    ":" + std::to_string(written->tok->loc.column);
  info.priority = p->family.priority();

  // The tracepoint's record layout, as resolution read it from the format file.
  const probes::TracepointPoint* tp = p->family.get<probes::TracepointPoint>();
  std::ostringstream body;
  info.native = a_.placement.of(*p) == passes::ProbeSide::Native;
  std::string macro = probe_macro(*p, id);
  // A syscall probe behind the dispatcher: its slot among the probes of its syscall number,
  // and its record (the syscalls:sys_* layout) built from the task's registers.
  const passes::SyscallDispatch::Slot* dispatch = a_.dispatch.of(*p);
  bool via_dispatcher = dispatch != nullptr;
  bool sys_exit = via_dispatcher && dispatch->exit;
  if (via_dispatcher) info.syscall_slot = dispatch->slot;
  body << (info.native ? "#ifdef __UKSTAP_NATIVE__\n" : "#ifdef __UKSTAP_BPF__\n");
  if (via_dispatcher) body << kReadSysrec;
  // The probe point can hold DWARF names and paths from the traced binary: c_comment escapes.
  body << c_comment(info.pp) << "\n";
  const size_t head_len = body.str().size();  // what differs between same-code probes
  body << macro << "\n{\n";
  body << "  STP_PROBE_ENTER(" << id << ");\n";
  if (via_dispatcher) body << "  stp__sysrec_fill(&c->k, ctx, " << (sys_exit ? 1 : 0) << ");\n";
  // begin/end/error run with interrupts enabled in SystemTap: MAXACTION_INTERRUPTIBLE applies.
  if (info.native && (p->family.is(probes::ProbeKind::Begin) ||
                      p->family.is(probes::ProbeKind::End) ||
                      p->family.is(probes::ProbeKind::Error)))
    body << "  STP_INTERRUPTIBLE(c);\n";
  for (auto* l : p->locals)
    body << "  " << (l->type == Type::String ? var_access(l) + "[0] = 0;" : var_access(l) + " = 0;")
         << "\n";
  BodyEmitter be(*this, fr, body, p, nullptr, tp);
  be.native_ = info.native;
  be.dispatched_ = via_dispatcher;
  if (p->condition) {
    std::string cond = be.eval(p->condition);
    body << "  if (!(" << cond << ")) goto out;\n";
  }
  be.stmt(p->body);
  body << "  goto out;\nout:\n  STP_PROBE_LEAVE();\n}\n";
  if (via_dispatcher) body << kReadCtx;
  body << "#endif\n\n";
  if (via_dispatcher) {
    std::string t = body.str();
    int program = shared_.add(id, sys_exit, dispatch->slot, dispatch->nr, t.substr(0, head_len),
                              t.substr(head_len), fr.fields);
    if (program != id) info.program = program;
  } else {
    probes_ << body.str();
  }
  if (info.native)
    m_.has_native_probes = true;
  else
    m_.has_kernel_probes = true;
  m_.probes.push_back(info);
}

int Emitter::run() {
  // Limits, as stap's -D names them.
  const char* limits[][2] = {{"MAXSTRINGLEN", "512"}, {"MAXMAPENTRIES", "2048"},
                             {"MAXACTION", "1000"},   {"MAXBACKTRACE", "128"},
                             {"MAXERRORS", "0"},      {"MAXNESTING", "10"}};
  std::ostringstream head;
  head << "/* Generated by ukstap pass 3. */\n";
  for (auto& [name, def] : limits) {
    std::string v = s_.define(name, def);
    m_.limits[name] = v;
    head << "#define STP_" << name << " " << v << "\n";
  }
  for (auto& [name, v] : s_.opts.defines) {
    bool known = false;
    for (auto& [n, d] : limits) known |= name == n;
    if (!known) head << "#define " << name << " " << (v.empty() ? "1" : v) << "\n";
  }
  head << "#include \"stp_runtime.h\"\n\n";
  // GPL: the helpers a tracer needs (bpf_probe_read_*_str, ...) are GPL-only.
  head << "#ifdef __UKSTAP_BPF__\nchar LICENSE[] SEC(\"license\") = \"GPL\";\n#endif\n\n";
  for (auto* e : s_.embeds) head << e->code << "\n";

  try {
    layout_globals();
    std::ostringstream protos;
    for (auto* f : s_.functions) {
      Frame& fr = frames_.emplace_back();
      std::string n = fn_c_name(f);
      fr.struct_name = "stp_frame_" + n;
      fr.access = "c->l.f_" + n;
      function_frames_[f] = &fr;
      for (auto* a : f->formal_args)
        var_access_[a] = a->type == Type::String
                             ? fr.add_field("char", "l_" + c_name(a->name), "[STP_MAXSTRINGLEN]")
                             : fr.add_field("int64_t", "l_" + c_name(a->name));
      for (auto* l : f->locals)
        var_access_[l] = l->type == Type::String
                             ? fr.add_field("char", "l_" + c_name(l->name), "[STP_MAXSTRINGLEN]")
                             : fr.add_field("int64_t", "l_" + c_name(l->name));
      if (f->type == Type::String)
        fr.add_field("char", "__retvalue", "[STP_MAXSTRINGLEN]");
      else
        fr.add_field("int64_t", "__retvalue");
      protos << fn_declaration(a_.calls, f, n) << ";\n";
    }
    // Each function is compiled for the side(s) whose probes call it, with that side's
    // abilities (foreach only natively, for now).
    m_.uses_user_stacks = a_.reach.uses_user_stacks;
    m_.uses_kernel_stacks = a_.reach.uses_kernel_stacks;
    for (auto* f : s_.functions) {
      for (bool native : {false, true}) {
        if (!a_.reach.reaches(f, native ? passes::ProbeSide::Native : passes::ProbeSide::Kernel))
          continue;
        try {
          emit_function(f, native);
        } catch (const SemanticError& e) {
          s_.diag.semantic_error(e);
          ++errors_;
        }
      }
    }
    int id = 0;
    for (auto* p : s_.probes) {
      if (a_.placement.of(*p) == passes::ProbeSide::None) continue;
      try {
        emit_probe(p, id++);
      } catch (const SemanticError& e) {
        s_.diag.semantic_error(e);
        ++errors_;
      }
    }
    std::string init = globals_init(s_);
    if (!init.empty()) m_.has_native_probes = true;

    std::ostringstream ctx;
    for (auto& fr : frames_) {
      ctx << "struct " << fr.struct_name << " {";
      if (fr.fields.empty()) ctx << " char __empty;";
      for (auto& f : fr.fields) ctx << "\n  " << f;
      ctx << "\n};\n";
    }
    ctx << "struct stp_locals {\n  union {\n    char __none;\n";
    for (auto& fr : frames_)
      if (fr.struct_name.rfind("stp_locals_p", 0) == 0)
        ctx << "    struct " << fr.struct_name << " " << fr.access.substr(5) << ";\n";
    ctx << "  };\n";
    for (auto& fr : frames_)
      if (fr.struct_name.rfind("stp_frame_", 0) == 0)
        ctx << "  struct " << fr.struct_name << " " << fr.access.substr(5) << ";\n";
    ctx << "};\nSTP_DEFINE_CONTEXT(struct stp_locals);\n\n";

    std::ostringstream all;
    std::string h = head.str();
    h.replace(h.find("#include \"stp_runtime.h\""), 0,
              "#define STP_NPROBES " + std::to_string(std::max<size_t>(1, m_.probes.size())) + "\n");
    all << h << types_.str() << "\n" << ctx.str() << protos.str() << "\n"
        << "#ifdef __UKSTAP_BPF__\nstruct stp_cbdata { struct stp_context *c; struct stp_globals *g; void *ctx; };\n"
        << callbacks_.str() << "#endif\n\n"
        << functions_.str() << probes_.str() << shared_.text();
    // The syscall dispatchers (passes/syscall_dispatch.h): one raw tracepoint program per slot
    // and direction, tail-calling the probe at (syscall number, slot) in its prog array.
    for (int dir = 0; dir < 2; ++dir) {
      const int slots = a_.dispatch.max_slots[dir];
      if (!slots) continue;
      const char* d = dir ? "exit" : "enter";
      all << "#ifdef __UKSTAP_BPF__\nSTP_SYSCALL_PROGS(" << d << ", " << slots << ")\n";
      for (int k = 0; k < slots; ++k)
        all << "STP_SYSCALL_DISPATCHER(" << d << ", " << k << ", " << slots << ")\n";
      all << "#endif\n\n";
    }
    all << "#ifdef __UKSTAP_NATIVE__\nSTP_GLOBALS_INIT\n{\n" << init << "}\n#endif\n";
    // Only the runtime's global functions this C calls are compiled (runtime_functions.h).
    m_.source = select_runtime_functions(all.str());
  } catch (const SemanticError& e) {
    s_.diag.semantic_error(e);
    ++errors_;
  }
  return errors_;
}

}  // namespace ukstap::codegen
