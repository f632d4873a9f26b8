// The script AST: every construct of the SystemTap language as users write it.
//
// Nodes are allocated in an ast::Arena and referenced by raw pointers, as in SystemTap's
// staptree.h: passes rewrite the tree in place (alias expansion splices bodies, macro expansion
// and @defined folding replace nodes), and one owner for the whole session keeps that simple.
// Every node carries the token it was made from, for diagnostics.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "ast/location.h"

namespace ukstap::ast {

// Value types of the language. "unknown" until type inference decides.
enum class Type { Unknown, Long, String, Stats };
const char* type_name(Type t);  // "unknown", "long", "string", "stats"

struct Visitor;

struct Node {
  const Token* tok = nullptr;
  virtual ~Node() = default;
};

// ---------------------------------------------------------------------------------- expressions

struct Expression : Node {
  Type type = Type::Unknown;
  // The token that decided `type` (for "type mismatch" diagnostics). Null until inferred.
  const Token* type_tok = nullptr;
  virtual void accept(Visitor& v) = 0;
};

struct Vardecl;
struct Function;

struct LiteralNumber : Expression {
  int64_t value = 0;
  void accept(Visitor& v) override;
};

struct LiteralString : Expression {
  std::string value;  // unescaped
  void accept(Visitor& v) override;
};

// Arithmetic and bitwise: + - * / % << >> >>> & | ^
struct BinaryExpression : Expression {
  Expression* left = nullptr;
  std::string op;
  Expression* right = nullptr;
  void accept(Visitor& v) override;
};

// - + ! ~
struct UnaryExpression : Expression {
  std::string op;
  Expression* operand = nullptr;
  void accept(Visitor& v) override;
};

// ++x, --x
struct PreCrement : Expression {
  std::string op;
  Expression* operand = nullptr;
  void accept(Visitor& v) override;
};

// x++, x--
struct PostCrement : Expression {
  Expression* operand = nullptr;
  std::string op;
  void accept(Visitor& v) override;
};

struct LogicalOrExpr : Expression {
  Expression* left = nullptr;
  Expression* right = nullptr;
  void accept(Visitor& v) override;
};

struct LogicalAndExpr : Expression {
  Expression* left = nullptr;
  Expression* right = nullptr;
  void accept(Visitor& v) override;
};

// < > <= >= == !=
struct ComparisonExpr : Expression {
  Expression* left = nullptr;
  std::string op;
  Expression* right = nullptr;
  void accept(Visitor& v) override;
};

// a . b
struct ConcatenationExpr : Expression {
  Expression* left = nullptr;
  Expression* right = nullptr;
  void accept(Visitor& v) override;
};

// s =~ "re", s !~ "re" (the regex must be a literal string)
struct RegexMatch : Expression {
  Expression* left = nullptr;
  std::string op;
  LiteralString* regex = nullptr;
  void accept(Visitor& v) override;
};

struct TernaryExpression : Expression {
  Expression* condition = nullptr;
  Expression* truevalue = nullptr;
  Expression* falsevalue = nullptr;
  // A condition pass 2 folded to a constant (@defined, literals): both branches point to the
  // live one (passes/resolve_symbols.cpp). Walkers visit it once; nested folded ternaries
  // would otherwise be walked 2^depth times.
  bool folded() const { return truevalue == falsevalue; }
  void accept(Visitor& v) override;
};

// = += -= *= /= %= <<= >>= &= ^= |= .= and <<< (statistics accumulation)
struct AssignmentExpr : Expression {
  Expression* left = nullptr;
  std::string op;
  Expression* right = nullptr;
  void accept(Visitor& v) override;
};

// A script variable: local, global or function parameter.
struct Symbol : Expression {
  std::string name;
  Vardecl* referent = nullptr;  // set by elaboration
  void accept(Visitor& v) override;
};

// ->member, [3], [expr], and the trailing "$"/"$$" pretty-print suffix.
struct TargetComponent {
  enum class Kind { StructMember, LiteralIndex, ExpressionIndex, PrettyPrint };
  Kind kind = Kind::StructMember;
  const Token* tok = nullptr;
  std::string member;  // StructMember: field name; PrettyPrint: "$" or "$$"
  int64_t num_index = 0;
  Expression* expr_index = nullptr;
};

// $var, $var->a[2]->b, &$var, $$vars, $$locals, $$parms, $$return, $$vars$ ...
struct TargetSymbol : Expression {
  std::string name;  // including the leading "$" (or "$$")
  bool addressof = false;
  std::vector<TargetComponent> components;
  void accept(Visitor& v) override;
};

// @cast(expr, "type" [, "module"])->member...
struct CastOp : Expression {
  Expression* operand = nullptr;
  std::string type_name;
  std::string module;  // empty when not given
  bool addressof = false;
  std::vector<TargetComponent> components;
  void accept(Visitor& v) override;
};

// @var("name[@cu]" [, "module"])->member...
struct AtVarOp : Expression {
  std::string target_name;
  std::string cu_name;  // the part after '@' in the first argument
  std::string module;
  bool addressof = false;
  std::vector<TargetComponent> components;
  void accept(Visitor& v) override;
};

// @defined(expr): true when expr (typically a $target) resolves.
struct DefinedOp : Expression {
  Expression* operand = nullptr;
  int value = -1;  // decided by elaboration: 1 when operand resolves, 0 when not
  void accept(Visitor& v) override;
};

// @entry(expr): expr evaluated at function entry, used in .return probes.
struct EntryOp : Expression {
  Expression* operand = nullptr;
  void accept(Visitor& v) override;
};

// @perf("name"): the value of a perf counter bound to the probe.
struct PerfOp : Expression {
  LiteralString* operand = nullptr;
  void accept(Visitor& v) override;
};

// @hist_linear(stat, start, stop, interval) and @hist_log(stat)
struct HistogramOp : Expression {
  enum class Kind { Linear, Log };
  Kind kind = Kind::Log;
  Expression* stat = nullptr;   // a Symbol or ArrayIndex of stats type
  std::vector<int64_t> params;  // linear: start, stop, interval
  void accept(Visitor& v) override;
};

// @count(s) @sum(s) @min(s) @max(s) @avg(s) @variance(s [, bit_shift])
struct StatOp : Expression {
  std::string op;  // "count", "sum", "min", "max", "avg", "variance"
  Expression* stat = nullptr;
  std::vector<int64_t> params;
  void accept(Visitor& v) override;
};

// base[i, j, ...]. base is a Symbol (array) or a HistogramOp (bucket access).
// An index may be null: the "*" wildcard of `delete a[*, 1]`, `[*, 1] in a` and slices.
struct ArrayIndex : Expression {
  Expression* base = nullptr;
  std::vector<Expression*> indexes;
  void accept(Visitor& v) override;
};

// [i, j] in arr, i in arr
struct ArrayIn : Expression {
  ArrayIndex* operand = nullptr;
  void accept(Visitor& v) override;
};

struct FunctionCall : Expression {
  std::string name;
  std::vector<Expression*> args;
  Function* referent = nullptr;  // set by elaboration
  void accept(Visitor& v) override;
};

// One piece of a printf format: literal text or a conversion.
struct FormatComponent {
  enum class Conv {
    Literal,    // text (with %% already turned into %)
    SignedDec,  // d i
    UnsignedDec,  // u
    Octal,      // o
    HexLower,   // x
    HexUpper,   // X
    Pointer,    // p
    Char,       // c
    String,     // s
    Binary,     // b
    Memory,     // m
    MemoryHex,  // M
  };
  Conv conv = Conv::Literal;
  std::string literal;  // Conv::Literal
  char flag = 0;        // one of "0+- #", or 0
  int width = -1;       // -1: none, -2: '*' (taken from the argument list)
  int precision = -1;   // -1: none, -2: '*'
  bool long_modifier = false;  // 'l' (accepted and ignored)
};

// printf sprintf print println sprint sprintln printd printdln sprintd sprintdln
struct PrintFormat : Expression {
  std::string name;  // as written
  bool to_stream = true;       // print*, not sprint*
  bool with_format = false;    // printf/sprintf
  bool with_delim = false;     // printd/printdln/sprintd/sprintdln
  bool with_newline = false;   // println/printdln/...
  std::string raw_format;      // printf: the format string as written
  std::vector<FormatComponent> components;
  std::string delimiter;       // printd: the delimiter (a literal string)
  std::vector<Expression*> args;
  HistogramOp* hist = nullptr;  // print(@hist_log(x)): the histogram to draw
  void accept(Visitor& v) override;
};

// ----------------------------------------------------------------------------------- statements

struct Statement : Node {
  virtual void accept(Visitor& v) = 0;
};

struct Block : Statement {
  std::vector<Statement*> statements;
  void accept(Visitor& v) override;
};

// try { ... } catch [(var)] { ... }
struct TryBlock : Statement {
  Statement* try_block = nullptr;
  Symbol* catch_var = nullptr;  // may be null
  Statement* catch_block = nullptr;
  void accept(Visitor& v) override;
};

// %{ ... %} as a statement (only in function bodies: `function f() %{ ... %}`) or at file level.
struct EmbeddedCode : Statement {
  std::string code;
  void accept(Visitor& v) override;
};

struct NullStatement : Statement {
  void accept(Visitor& v) override;
};

struct ExprStatement : Statement {
  Expression* value = nullptr;
  void accept(Visitor& v) override;
};

struct IfStatement : Statement {
  Expression* condition = nullptr;
  Statement* then_stmt = nullptr;
  Statement* else_stmt = nullptr;  // may be null
  void accept(Visitor& v) override;
};

// for (init; cond; incr) body   and   while (cond) body (init/incr null)
struct ForLoop : Statement {
  ExprStatement* init = nullptr;  // may be null
  Expression* cond = nullptr;     // may be null (forever)
  ExprStatement* incr = nullptr;  // may be null
  Statement* body = nullptr;
  void accept(Visitor& v) override;
};

// foreach ([a, b+] in arr[*, "x"] limit 10) / foreach (v = [a, b] in arr-) / foreach (x in @hist)
struct ForeachLoop : Statement {
  std::vector<Symbol*> indexes;
  // Partial-key slice: `in arr[*, "x"]` (one entry per index, null for '*'). Empty: no slice.
  std::vector<Expression*> array_slice;
  Expression* base = nullptr;  // Symbol (array) or HistogramOp
  Symbol* value = nullptr;     // `v = [...] in arr`; may be null
  int sort_direction = 0;      // +1 ascending, -1 descending, 0 unsorted
  // 0: sort by value; 1..N: by that index (1-based).
  unsigned sort_column = 0;
  // For stats arrays sorted by value: which aggregate (@count by default): "count", "sum", ...
  std::string sort_aggr;
  Expression* limit = nullptr;  // may be null
  Statement* body = nullptr;
  void accept(Visitor& v) override;
};

struct ReturnStatement : Statement {
  Expression* value = nullptr;  // may be null
  void accept(Visitor& v) override;
};

// delete x / delete a[i] / delete a[*, 1] / delete a
struct DeleteStatement : Statement {
  Expression* value = nullptr;
  void accept(Visitor& v) override;
};

struct NextStatement : Statement {
  void accept(Visitor& v) override;
};

struct BreakStatement : Statement {
  void accept(Visitor& v) override;
};

struct ContinueStatement : Statement {
  void accept(Visitor& v) override;
};

// ---------------------------------------------------------------------------- file-level things

struct Vardecl : Node {
  std::string name;
  Type type = Type::Unknown;
  const Token* type_tok = nullptr;  // what decided `type`
  int arity = -1;  // -1 unknown, 0 scalar, N > 0 an array with N index parts
  std::vector<Type> index_types;  // arrays: one per index part
  int64_t maxsize = 0;  // `global a[100]`; 0: default (MAXMAPENTRIES)
  bool wrap = false;    // `global a%` / `global a%[100]`: overwrite oldest when full
  Expression* init = nullptr;  // `global x = 5`: a literal (possibly negated number)
  bool is_global = false;
  bool is_private = false;  // `private global x` (file-scoped in tapsets)
  bool from_tapset = false;
  bool synthetic = false;   // made by the translator
  void accept(Visitor& v);  // visits `init` if any
};

struct Function : Node {
  std::string name;
  std::vector<Vardecl*> formal_args;
  std::vector<Vardecl*> locals;  // filled by elaboration
  Type type = Type::Unknown;     // declared (`function f:long`) or inferred
  const Token* type_tok = nullptr;
  Statement* body = nullptr;     // a Block, or an EmbeddedCode for `%{ ... %}` bodies
  bool is_private = false;
  bool synthetic = false;
  bool from_tapset = false;
  // Pragmas written in an embedded body: /* pure */ /* stable */ /* unprivileged */ ...
  std::vector<std::string> pragmas;
  bool has_embedded_body() const;
};

// One dotted piece of a probe point: `process("ls")`, `function("main")`, `return`.
struct ProbePointComponent {
  std::string functor;       // may contain wildcards: "sys*", "*", "**", "{a,b}"
  Expression* arg = nullptr;  // LiteralNumber or LiteralString, or null
  const Token* tok = nullptr;
};

struct ProbePoint {
  std::vector<ProbePointComponent> components;
  bool optional = false;    // trailing '?'
  bool sufficient = false;  // trailing '!'
  Expression* condition = nullptr;  // `if (cond)`; may be null
  const Token* tok = nullptr;
  // Canonical text: `process("/bin/ls").function("main").return` (no ?, !, condition).
  std::string str() const;
  bool has_wildcard() const;
};

struct Probe : Node {
  std::vector<ProbePoint*> locations;
  Block* body = nullptr;
  std::vector<Vardecl*> locals;  // filled by elaboration
  bool privileged = false;  // from a tapset or -g
  bool synthetic = false;   // made by the translator (e.g. the end-of-run global display)
};

// probe NAME = POINTS { prologue }    (epilogue_style: NAME += POINTS { epilogue })
struct ProbeAlias : Probe {
  std::vector<ProbePoint*> alias_names;
  bool epilogue_style = false;
  // The combined form `probe NAME = POINTS { prologue }, { epilogue }`: the second block runs
  // after the user's handler (null otherwise).
  Block* epilogue = nullptr;
};

struct StapFile {
  const SourceFile* source = nullptr;
  std::string name;
  std::vector<Probe*> probes;
  std::vector<ProbeAlias*> aliases;
  std::vector<Function*> functions;
  std::vector<Vardecl*> globals;
  std::vector<EmbeddedCode*> embeds;
  bool privileged = false;
  bool synthetic = false;
  bool is_tapset = false;
};

// ------------------------------------------------------------------------------------- visitors

struct Visitor {
  virtual ~Visitor() = default;
  virtual void visit(LiteralNumber& e) = 0;
  virtual void visit(LiteralString& e) = 0;
  virtual void visit(BinaryExpression& e) = 0;
  virtual void visit(UnaryExpression& e) = 0;
  virtual void visit(PreCrement& e) = 0;
  virtual void visit(PostCrement& e) = 0;
  virtual void visit(LogicalOrExpr& e) = 0;
  virtual void visit(LogicalAndExpr& e) = 0;
  virtual void visit(ComparisonExpr& e) = 0;
  virtual void visit(ConcatenationExpr& e) = 0;
  virtual void visit(RegexMatch& e) = 0;
  virtual void visit(TernaryExpression& e) = 0;
  virtual void visit(AssignmentExpr& e) = 0;
  virtual void visit(Symbol& e) = 0;
  virtual void visit(TargetSymbol& e) = 0;
  virtual void visit(CastOp& e) = 0;
  virtual void visit(AtVarOp& e) = 0;
  virtual void visit(DefinedOp& e) = 0;
  virtual void visit(EntryOp& e) = 0;
  virtual void visit(PerfOp& e) = 0;
  virtual void visit(HistogramOp& e) = 0;
  virtual void visit(StatOp& e) = 0;
  virtual void visit(ArrayIndex& e) = 0;
  virtual void visit(ArrayIn& e) = 0;
  virtual void visit(FunctionCall& e) = 0;
  virtual void visit(PrintFormat& e) = 0;

  virtual void visit(Block& s) = 0;
  virtual void visit(TryBlock& s) = 0;
  virtual void visit(EmbeddedCode& s) = 0;
  virtual void visit(NullStatement& s) = 0;
  virtual void visit(ExprStatement& s) = 0;
  virtual void visit(IfStatement& s) = 0;
  virtual void visit(ForLoop& s) = 0;
  virtual void visit(ForeachLoop& s) = 0;
  virtual void visit(ReturnStatement& s) = 0;
  virtual void visit(DeleteStatement& s) = 0;
  virtual void visit(NextStatement& s) = 0;
  virtual void visit(BreakStatement& s) = 0;
  virtual void visit(ContinueStatement& s) = 0;
};

// Visits every child in source order; override what you need and call the base to recurse.
// Null children are skipped.
struct TraversingVisitor : Visitor {
  void visit(LiteralNumber& e) override;
  void visit(LiteralString& e) override;
  void visit(BinaryExpression& e) override;
  void visit(UnaryExpression& e) override;
  void visit(PreCrement& e) override;
  void visit(PostCrement& e) override;
  void visit(LogicalOrExpr& e) override;
  void visit(LogicalAndExpr& e) override;
  void visit(ComparisonExpr& e) override;
  void visit(ConcatenationExpr& e) override;
  void visit(RegexMatch& e) override;
  void visit(TernaryExpression& e) override;
  void visit(AssignmentExpr& e) override;
  void visit(Symbol& e) override;
  void visit(TargetSymbol& e) override;
  void visit(CastOp& e) override;
  void visit(AtVarOp& e) override;
  void visit(DefinedOp& e) override;
  void visit(EntryOp& e) override;
  void visit(PerfOp& e) override;
  void visit(HistogramOp& e) override;
  void visit(StatOp& e) override;
  void visit(ArrayIndex& e) override;
  void visit(ArrayIn& e) override;
  void visit(FunctionCall& e) override;
  void visit(PrintFormat& e) override;

  void visit(Block& s) override;
  void visit(TryBlock& s) override;
  void visit(EmbeddedCode& s) override;
  void visit(NullStatement& s) override;
  void visit(ExprStatement& s) override;
  void visit(IfStatement& s) override;
  void visit(ForLoop& s) override;
  void visit(ForeachLoop& s) override;
  void visit(ReturnStatement& s) override;
  void visit(DeleteStatement& s) override;
  void visit(NextStatement& s) override;
  void visit(BreakStatement& s) override;
  void visit(ContinueStatement& s) override;

 protected:
  void visit_components(std::vector<TargetComponent>& comps);
};

// ---------------------------------------------------------------------------------------- arena

// Owns every node and token of a session. Nodes never move and live until the arena dies.
class Arena {
 public:
  template <typename T, typename... Args>
  T* make(Args&&... args) {
    auto p = std::make_unique<T>(std::forward<Args>(args)...);
    T* raw = p.get();
    nodes_.push_back(Holder{raw, [](void* q) { delete static_cast<T*>(q); }});
    p.release();
    return raw;
  }
  // Allocate a node of type T carrying token `tok`.
  template <typename T>
  T* node(const Token* tok) {
    T* n = make<T>();
    n->tok = tok;
    return n;
  }
  // Tokens (tens of thousands: every tapset is parsed at each start) live in chunks, not one
  // allocation and one deleter each; a deque never moves what it holds.
  const Token* token(Token t) { return &tokens_.emplace_back(std::move(t)); }

  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) it->del(it->ptr);
  }

 private:
  struct Holder {
    void* ptr;
    void (*del)(void*);
  };
  std::vector<Holder> nodes_;
  std::deque<Token> tokens_;
};

}  // namespace ukstap::ast
