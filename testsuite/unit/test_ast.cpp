// AST basics: accept() dispatch, TraversingVisitor order, type names, probe point text,
// wildcards, embedded bodies, deep clone.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ast/ast.h"
#include "ast/clone.h"
#include "ast/printer.h"
#include "ast_builders.h"

using namespace ukstap;
using namespace ukstap::ast;
using ukstap::testing::B;

namespace {

// Records symbol names and literal values in visiting order.
struct Recorder : TraversingVisitor {
  std::vector<std::string> seen;
  void visit(Symbol& e) override { seen.push_back(e.name); }
  void visit(LiteralNumber& e) override { seen.push_back(std::to_string(e.value)); }
  void visit(LiteralString& e) override { seen.push_back("\"" + e.value + "\""); }
  void visit(TargetSymbol& e) override {
    seen.push_back(e.name);
    TraversingVisitor::visit(e);
  }
  using TraversingVisitor::visit;
};

struct KindName : Visitor {
  std::string k;
#define K(T) \
  void visit(T&) override { k = #T; }
  K(LiteralNumber) K(LiteralString) K(BinaryExpression) K(UnaryExpression) K(PreCrement)
  K(PostCrement) K(LogicalOrExpr) K(LogicalAndExpr) K(ComparisonExpr) K(ConcatenationExpr)
  K(RegexMatch) K(TernaryExpression) K(AssignmentExpr) K(Symbol) K(TargetSymbol) K(CastOp)
  K(AtVarOp) K(DefinedOp) K(EntryOp) K(PerfOp) K(HistogramOp) K(StatOp) K(ArrayIndex)
  K(ArrayIn) K(FunctionCall) K(PrintFormat) K(Block) K(TryBlock) K(EmbeddedCode)
  K(NullStatement) K(ExprStatement) K(IfStatement) K(ForLoop) K(ForeachLoop)
  K(ReturnStatement) K(DeleteStatement) K(NextStatement) K(BreakStatement)
  K(ContinueStatement)
#undef K
};

template <typename T>
std::string kind_of(Arena& a) {
  KindName v;
  a.make<T>()->accept(v);
  return v.k;
}

}  // namespace

TEST_CASE("type_name", "[ast]") {
  CHECK(std::string(type_name(Type::Unknown)) == "unknown");
  CHECK(std::string(type_name(Type::Long)) == "long");
  CHECK(std::string(type_name(Type::String)) == "string");
  CHECK(std::string(type_name(Type::Stats)) == "stats");
}

TEST_CASE("accept dispatches to the node's own visit", "[ast]") {
  Arena a;
#define CHECK_KIND(T) CHECK(kind_of<T>(a) == #T)
  CHECK_KIND(LiteralNumber); CHECK_KIND(LiteralString); CHECK_KIND(BinaryExpression);
  CHECK_KIND(UnaryExpression); CHECK_KIND(PreCrement); CHECK_KIND(PostCrement);
  CHECK_KIND(LogicalOrExpr); CHECK_KIND(LogicalAndExpr); CHECK_KIND(ComparisonExpr);
  CHECK_KIND(ConcatenationExpr); CHECK_KIND(RegexMatch); CHECK_KIND(TernaryExpression);
  CHECK_KIND(AssignmentExpr); CHECK_KIND(Symbol); CHECK_KIND(TargetSymbol); CHECK_KIND(CastOp);
  CHECK_KIND(AtVarOp); CHECK_KIND(DefinedOp); CHECK_KIND(EntryOp); CHECK_KIND(PerfOp);
  CHECK_KIND(HistogramOp); CHECK_KIND(StatOp); CHECK_KIND(ArrayIndex); CHECK_KIND(ArrayIn);
  CHECK_KIND(FunctionCall); CHECK_KIND(PrintFormat); CHECK_KIND(Block); CHECK_KIND(TryBlock);
  CHECK_KIND(EmbeddedCode); CHECK_KIND(NullStatement); CHECK_KIND(ExprStatement);
  CHECK_KIND(IfStatement); CHECK_KIND(ForLoop); CHECK_KIND(ForeachLoop);
  CHECK_KIND(ReturnStatement); CHECK_KIND(DeleteStatement); CHECK_KIND(NextStatement);
  CHECK_KIND(BreakStatement); CHECK_KIND(ContinueStatement);
#undef CHECK_KIND
}

TEST_CASE("TraversingVisitor visits every child in source order, skipping nulls", "[ast]") {
  B b;
  // $p->a[i + 1]->b
  auto* ts = b.a.make<TargetSymbol>();
  ts->name = "$p";
  TargetComponent c1;
  c1.kind = TargetComponent::Kind::StructMember;
  c1.member = "a";
  TargetComponent c2;
  c2.kind = TargetComponent::Kind::ExpressionIndex;
  c2.expr_index = b.bin(b.sym("i"), "+", b.num(1));
  TargetComponent c3;
  c3.kind = TargetComponent::Kind::LiteralIndex;
  c3.num_index = 7;
  ts->components = {c1, c2, c3};

  // foreach (v = [k1, k2] in arr[*, "x"] limit 5) { delete arr[k1, *]; }
  auto* fe = b.a.make<ForeachLoop>();
  fe->value = b.sym("v");
  fe->indexes = {b.sym("k1"), b.sym("k2")};
  fe->base = b.sym("arr");
  fe->array_slice = {nullptr, b.str("x")};
  fe->limit = b.num(5);
  auto* del = b.a.make<DeleteStatement>();
  del->value = b.index(b.sym("arr"), {b.sym("k1"), nullptr});
  fe->body = b.block({del});

  // printf("%d", y) with a hist and args
  auto* pf = b.printf_("%d", {b.sym("y"), b.num(9)});

  // if (t) ts; else { pf; return }  -- with a null return value
  auto* ifs = b.a.make<IfStatement>();
  ifs->condition = b.sym("t");
  ifs->then_stmt = b.es(ts);
  ifs->else_stmt = b.block({b.es(pf), b.a.make<ReturnStatement>()});

  // for (j = 0; ; j++) next
  auto* fl = b.a.make<ForLoop>();
  fl->init = b.es(b.assign(b.sym("j"), "=", b.num(0)));
  auto* inc = b.a.make<PostCrement>();
  inc->operand = b.sym("j");
  inc->op = "++";
  fl->incr = b.es(inc);
  fl->body = b.a.make<NextStatement>();

  auto* tb = b.a.make<TryBlock>();
  tb->try_block = b.block({b.es(b.call("f", {b.sym("z")}))});
  tb->catch_var = b.sym("err");
  tb->catch_block = b.block({});

  Block* top = b.block({ifs, fe, fl, tb});
  Recorder r;
  top->accept(r);
  std::vector<std::string> want = {"t", "$p", "i", "1", "y", "9",          // if
                                   "v", "k1", "k2", "arr", "\"x\"", "5",    // foreach head
                                   "arr", "k1",                             // delete
                                   "j", "0", "j",                           // for
                                   "z", "err"};                             // try
  CHECK(r.seen == want);
}

TEST_CASE("TraversingVisitor covers operators and Vardecl init", "[ast]") {
  B b;
  auto* h = b.a.make<HistogramOp>();
  h->kind = HistogramOp::Kind::Linear;
  h->stat = b.sym("s");
  h->params = {0, 100, 10};
  auto* pf = b.a.make<PrintFormat>();
  pf->name = "print";
  pf->hist = h;
  auto* cast = b.a.make<CastOp>();
  cast->operand = b.sym("ptr");
  TargetComponent ci;
  ci.kind = TargetComponent::Kind::ExpressionIndex;
  ci.expr_index = b.sym("q");
  cast->components = {ci};
  auto* tern = b.a.make<TernaryExpression>();
  tern->condition = b.sym("c");
  tern->truevalue = cast;
  tern->falsevalue = pf;
  Recorder r;
  tern->accept(r);
  CHECK(r.seen == std::vector<std::string>{"c", "ptr", "q", "s"});

  auto* v = b.var("g");
  v->init = b.num(42);
  Recorder r2;
  v->accept(r2);
  CHECK(r2.seen == std::vector<std::string>{"42"});
}

TEST_CASE("ProbePoint::str is stap's canonical text", "[ast][probepoint]") {
  B b;
  CHECK(b.pp({{"process", b.str("/bin/ls")}, {"function", b.str("main")}, {"return", nullptr}})
            ->str() == "process(\"/bin/ls\").function(\"main\").return");
  CHECK(b.pp({{"timer", nullptr}, {"ms", b.num(100)}})->str() == "timer.ms(100)");
  CHECK(b.pp({{"begin", b.num(-1)}})->str() == "begin(-1)");
  CHECK(b.pp({{"kernel", nullptr}, {"trace", b.str("sched:*")}})->str() ==
        "kernel.trace(\"sched:*\")");
  // C escaping of string args
  CHECK(b.pp({{"process", b.str("a\"b\\c\n")}})->str() == "process(\"a\\\"b\\\\c\\n\")");
  // ?, ! and the condition are not part of str()
  auto* p = b.pp({{"syscall", nullptr}, {"open", nullptr}});
  p->optional = true;
  p->condition = b.sym("x");
  CHECK(p->str() == "syscall.open");
}

TEST_CASE("ProbePoint::has_wildcard", "[ast][probepoint]") {
  B b;
  CHECK_FALSE(b.pp({{"syscall", nullptr}, {"open", nullptr}})->has_wildcard());
  CHECK(b.pp({{"syscall", nullptr}, {"*", nullptr}})->has_wildcard());
  CHECK(b.pp({{"syscall", nullptr}, {"open*", nullptr}})->has_wildcard());
  CHECK(b.pp({{"sys?", nullptr}})->has_wildcard());
  CHECK(b.pp({{"sys[ab]", nullptr}})->has_wildcard());
  CHECK(b.pp({{"syscall", nullptr}, {"{open,close}", nullptr}})->has_wildcard());
  CHECK(b.pp({{"kernel", nullptr}, {"trace", b.str("sched:*")}})->has_wildcard());
  CHECK(b.pp({{"process", b.str("/bin/ls")}, {"function", b.str("ma?n")}})->has_wildcard());
  CHECK_FALSE(b.pp({{"process", b.str("/bin/ls")}, {"function", b.str("main")}})->has_wildcard());
  CHECK_FALSE(b.pp({{"timer", nullptr}, {"ms", b.num(100)}})->has_wildcard());
}

TEST_CASE("Function::has_embedded_body", "[ast]") {
  Arena a;
  auto* f = a.make<Function>();
  CHECK_FALSE(f->has_embedded_body());
  f->body = a.make<Block>();
  CHECK_FALSE(f->has_embedded_body());
  f->body = a.make<EmbeddedCode>();
  CHECK(f->has_embedded_body());
}

TEST_CASE("clone makes a deep copy without resolution results", "[ast][clone]") {
  B b;
  Token t{TokenKind::Identifier, "x", {}, nullptr};
  const Token* tok = b.a.token(t);
  auto* x = b.a.node<Symbol>(tok);
  x->name = "x";
  auto* decl = b.var("x");
  x->referent = decl;
  x->type = Type::Long;
  x->type_tok = tok;
  auto* fc = b.call("foo", {x, b.str("s")});
  auto* fn = b.a.make<Function>();
  fc->referent = fn;
  fc->type = Type::String;
  Block* body = b.block({b.es(b.assign(b.sym("y"), "=", fc)), b.a.make<NextStatement>()});

  Block* copy = clone(b.a, body);
  REQUIRE(copy != nullptr);
  REQUIRE(copy != body);
  CHECK(to_string(*copy) == to_string(*body));
  auto* es = dynamic_cast<ExprStatement*>(copy->statements[0]);
  REQUIRE(es);
  CHECK(es != body->statements[0]);
  auto* as = dynamic_cast<AssignmentExpr*>(es->value);
  REQUIRE(as);
  auto* fc2 = dynamic_cast<FunctionCall*>(as->right);
  REQUIRE(fc2);
  CHECK(fc2 != fc);
  CHECK(fc2->referent == nullptr);
  CHECK(fc2->type == Type::Unknown);
  auto* x2 = dynamic_cast<Symbol*>(fc2->args[0]);
  REQUIRE(x2);
  CHECK(x2 != x);
  CHECK(x2->tok == tok);  // tokens are shared
  CHECK(x2->referent == nullptr);
  CHECK(x2->type == Type::Unknown);
  CHECK(x2->type_tok == nullptr);
  CHECK(dynamic_cast<NextStatement*>(copy->statements[1]) != nullptr);
  // the original is untouched
  CHECK(x->referent == decl);
  CHECK(fc->referent == fn);

  CHECK(clone(b.a, static_cast<const Expression*>(nullptr)) == nullptr);
  CHECK(clone(b.a, static_cast<const Statement*>(nullptr)) == nullptr);
}

TEST_CASE("clone copies every kind of node", "[ast][clone]") {
  B b;
  auto* ts = b.a.make<TargetSymbol>();
  ts->name = "$p";
  ts->addressof = true;
  TargetComponent c;
  c.kind = TargetComponent::Kind::ExpressionIndex;
  c.expr_index = b.sym("i");
  ts->components = {c};
  auto* fe = b.a.make<ForeachLoop>();
  fe->indexes = {b.sym("k")};
  fe->base = b.sym("arr");
  fe->array_slice = {nullptr};
  fe->sort_direction = -1;
  fe->sort_column = 1;
  fe->limit = b.num(3);
  fe->body = b.block({b.es(ts)});
  auto* tb = b.a.make<TryBlock>();
  tb->try_block = b.block({fe});
  tb->catch_var = b.sym("e");
  tb->catch_block = b.block({b.a.make<BreakStatement>()});

  Statement* copy = clone(b.a, static_cast<Statement*>(tb));
  CHECK(to_string(*copy) == to_string(*tb));
  auto* tb2 = dynamic_cast<TryBlock*>(copy);
  REQUIRE(tb2);
  auto* fe2 = dynamic_cast<ForeachLoop*>(static_cast<Block*>(tb2->try_block)->statements[0]);
  REQUIRE(fe2);
  CHECK(fe2 != fe);
  CHECK(fe2->sort_direction == -1);
  CHECK(fe2->sort_column == 1u);
  auto* ts2 =
      dynamic_cast<TargetSymbol*>(static_cast<ExprStatement*>(
                                      static_cast<Block*>(fe2->body)->statements[0])
                                      ->value);
  REQUIRE(ts2);
  CHECK(ts2->components[0].expr_index != c.expr_index);
  CHECK(ts2->addressof);

  auto* p = b.pp({{"process", b.str("/bin/ls")}, {"function", b.str("main")}});
  p->optional = true;
  p->condition = b.cmp(b.sym("x"), ">", b.num(0));
  ProbePoint* p2 = clone(b.a, p);
  CHECK(p2 != p);
  CHECK(p2->str() == p->str());
  CHECK(p2->optional);
  CHECK(p2->condition != p->condition);
  CHECK(p2->components[0].arg != p->components[0].arg);
  CHECK(to_string(*p2->condition) == "(x) > (0)");
}
