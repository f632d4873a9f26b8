// The preprocessor and parser (translator/parse/parser.cpp) and pass 1.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "driver/passes.h"
#include "driver/session.h"
#include "parse/parser.h"

using namespace ukstap;
using namespace ukstap::ast;
using ukstap::parse::MacroLibrary;
using ukstap::parse::PreprocEnv;

namespace {

PreprocEnv test_env() {
  PreprocEnv e;
  e.kernel_vr = "6.1.0-18-amd64";
  e.kernel_v = "6.1.0";
  e.arch = "x86_64";
  e.kernel_config = {{"CONFIG_BPF", "y"}, {"CONFIG_EXT4_FS", "m"}, {"CONFIG_HZ", "250"},
                     {"CONFIG_NR_CPUS", "512"}};
  return e;
}

struct Parsed {
  std::ostringstream err;
  Session s{err};
  MacroLibrary lib;
  PreprocEnv env = test_env();
  StapFile* f = nullptr;
  const SourceFile* src = nullptr;

  explicit Parsed(const std::string& text, bool guru = false, std::vector<std::string> args = {},
                  const std::string& stpm = "") {
    env.guru_mode = guru;
    env.args = std::move(args);
    if (!stpm.empty()) {
      const SourceFile* m = s.add_source("/tapsets/lib.stpm", stpm, true);
      REQUIRE(parse::parse_library_macros(s, m, lib, env));
    }
    src = s.add_source("<input>", text, false);
    f = parse::parse_file(s, src, lib, env);
  }
  Probe* probe(size_t i = 0) {
    REQUIRE(f);
    REQUIRE(f->probes.size() > i);
    return f->probes[i];
  }
  Statement* stmt(size_t i = 0, size_t p = 0) {
    Probe* pr = probe(p);
    REQUIRE(pr->body->statements.size() > i);
    return pr->body->statements[i];
  }
  // The value of statement i of probe 0 (an ExprStatement).
  Expression* expr(size_t i = 0) {
    auto* es = dynamic_cast<ExprStatement*>(stmt(i));
    REQUIRE(es);
    return es->value;
  }
  // The right-hand side of `x = ...` in statement i.
  Expression* rhs(size_t i = 0) {
    auto* a = dynamic_cast<AssignmentExpr*>(expr(i));
    REQUIRE(a);
    return a->right;
  }
};

template <typename T>
T* as(Expression* e) {
  auto* r = dynamic_cast<T*>(e);
  REQUIRE(r);
  return r;
}
template <typename T>
T* as(Statement* e) {
  auto* r = dynamic_cast<T*>(e);
  REQUIRE(r);
  return r;
}

// The expected parse-error output of one error, stap's layout.
std::string one_error(const std::string& msg, const std::string& label, const std::string& tok,
                      const std::string& source, int column) {
  std::string r = "parse error: " + msg + "\n" +
                  (label == "at" ? "         at: " : "        saw: ") + tok + "\n";
  if (!source.empty() || column > 0)
    r += "     source: " + source + "\n" + std::string(13 + column - 1, ' ') + "^\n";
  return r + "\n";
}

}  // namespace

// ----------------------------------------------------------------------------- top level

TEST_CASE("parser: probes with several points and components", "[parser]") {
  Parsed p(R"(probe begin, end(-1), timer.ms(100), process("/bin/ls").function("main").return,
kernel.trace("sched:sched_switch") { })");
  REQUIRE(p.f);
  auto& locs = p.probe()->locations;
  REQUIRE(locs.size() == 5);
  CHECK(locs[0]->components[0].functor == "begin");
  auto* n = as<LiteralNumber>(locs[1]->components[0].arg);
  CHECK(n->value == -1);
  CHECK(as<LiteralNumber>(locs[2]->components[1].arg)->value == 100);
  REQUIRE(locs[3]->components.size() == 3);
  CHECK(as<LiteralString>(locs[3]->components[0].arg)->value == "/bin/ls");
  CHECK(locs[3]->components[2].functor == "return");
  CHECK(as<LiteralString>(locs[4]->components[1].arg)->value == "sched:sched_switch");
  CHECK(p.probe()->locations[0]->tok->loc.column == 7);
}

TEST_CASE("parser: wildcards, braces, ? ! and conditions", "[parser]") {
  Parsed p("probe syscall.open*, sys**.x, kernel.{a,b.c}?, foo! if (x > 1) { }");
  REQUIRE(p.f);
  auto& l = p.probe()->locations;
  REQUIRE(l.size() == 5);
  CHECK(l[0]->components[1].functor == "open*");
  CHECK(l[1]->components[0].functor == "sys**");
  CHECK(l[2]->components[1].functor == "a");
  CHECK(l[2]->optional);
  CHECK(l[3]->components.size() == 3);
  CHECK(l[3]->components[2].functor == "c");
  CHECK(l[3]->optional);
  CHECK(l[4]->sufficient);
  CHECK(l[4]->optional);
  CHECK(as<ComparisonExpr>(l[4]->condition)->op == ">");
  // Spaced pieces are not glued.
  Parsed q("probe a. b * { }");
  CHECK_FALSE(q.f);
}

TEST_CASE("parser: aliases", "[parser]") {
  Parsed p("probe my.alias = kernel.function(\"x\"), begin { a = 1 } probe e.p += end { }");
  REQUIRE(p.f);
  REQUIRE(p.f->aliases.size() == 2);
  CHECK(p.f->aliases[0]->alias_names[0]->components[1].functor == "alias");
  CHECK(p.f->aliases[0]->locations.size() == 2);
  CHECK_FALSE(p.f->aliases[0]->epilogue_style);
  CHECK(p.f->aliases[1]->epilogue_style);
  CHECK(p.f->probes.empty());
}

TEST_CASE("parser: globals", "[parser]") {
  Parsed p("global a, b[100], c%, d%[10], x = 5, y = -3, s = \"str\"; private global pg\n"
           "private pg2 global late");
  REQUIRE(p.f);
  auto& g = p.f->globals;
  REQUIRE(g.size() == 10);
  CHECK(g[1]->maxsize == 100);
  CHECK(g[2]->wrap);
  CHECK(g[3]->wrap);
  CHECK(g[3]->maxsize == 10);
  CHECK(as<LiteralNumber>(g[4]->init)->value == 5);
  CHECK(g[4]->type == Type::Long);
  CHECK(as<LiteralNumber>(g[5]->init)->value == -3);
  CHECK(as<LiteralString>(g[6]->init)->value == "str");
  CHECK(g[6]->type == Type::String);
  CHECK(g[7]->is_private);
  CHECK(g[8]->is_private);
  CHECK(g[8]->name == "pg2");
  CHECK_FALSE(g[9]->is_private);
  for (auto* v : g) CHECK(v->is_global);
}

TEST_CASE("parser: functions", "[parser]") {
  Parsed p("function f:long (a:long, b, c:string) { return a }\n"
           "private function g() { return }\n"
           "function h:string () %{ /* pure */ /* unprivileged */ STAP_RETURN(1); %}\n"
           "%{ #include <x.h> %}",
           true);
  REQUIRE(p.f);
  REQUIRE(p.f->functions.size() == 3);
  Function* f = p.f->functions[0];
  CHECK(f->name == "f");
  CHECK(f->type == Type::Long);
  REQUIRE(f->formal_args.size() == 3);
  CHECK(f->formal_args[0]->type == Type::Long);
  CHECK(f->formal_args[1]->type == Type::Unknown);
  CHECK(f->formal_args[2]->type == Type::String);
  CHECK(p.f->functions[1]->is_private);
  Function* h = p.f->functions[2];
  CHECK(h->has_embedded_body());
  CHECK(h->pragmas == std::vector<std::string>{"pure", "unprivileged"});
  REQUIRE(p.f->embeds.size() == 1);
  CHECK(p.f->embeds[0]->code == " #include <x.h> ");
}

TEST_CASE("parser: embedded code needs -g in the user script", "[parser]") {
  Parsed p("function h() %{ x %}");
  CHECK_FALSE(p.f);
  CHECK(p.err.str() ==
        one_error("embedded code in unprivileged script; need stap -g",
                  "saw", "embedded-code at <input>:1:14", "function h() %{ x %}", 14));
  // Tapsets are privileged.
  std::ostringstream err;
  Session s(err);
  MacroLibrary lib;
  const SourceFile* t = s.add_source("/t/x.stp", "function h() %{ x %}", true);
  StapFile* f = parse::parse_file(s, t, lib, test_env());
  REQUIRE(f);
  CHECK(f->is_tapset);
  CHECK(f->functions[0]->from_tapset);
}

// ----------------------------------------------------------------------------- statements

TEST_CASE("parser: statements", "[parser]") {
  Parsed p(R"(function f() {
  { ; }
  if (a) b = 1; else { c = 2 }
  while (x < 3) x++
  for (;;) break
  for (i = 0; i < 10; i++) continue
  return 1;
  delete a[*, 1]
  delete x
  try { error("x") } catch (e) { print(e) }
  try { } catch { }
}
probe begin { next })");
  REQUIRE(p.f);
  auto& st = as<Block>(p.f->functions[0]->body)->statements;
  REQUIRE(st.size() == 10);
  CHECK(as<Block>(st[0])->statements.size() == 1);
  auto* ifs = as<IfStatement>(st[1]);
  CHECK(ifs->else_stmt);
  auto* wl = as<ForLoop>(st[2]);
  CHECK(wl->init == nullptr);
  CHECK(wl->incr == nullptr);
  CHECK(as<PostCrement>(as<ExprStatement>(wl->body)->value)->op == "++");
  auto* inf = as<ForLoop>(st[3]);
  CHECK(inf->cond == nullptr);
  CHECK(as<BreakStatement>(inf->body));
  auto* fl = as<ForLoop>(st[4]);
  CHECK(fl->init);
  CHECK(fl->incr);
  CHECK(as<LiteralNumber>(as<ReturnStatement>(st[5])->value)->value == 1);
  auto* del = as<ArrayIndex>(as<DeleteStatement>(st[6])->value);
  REQUIRE(del->indexes.size() == 2);
  CHECK(del->indexes[0] == nullptr);
  CHECK(as<Symbol>(as<DeleteStatement>(st[7])->value)->name == "x");
  auto* tb = as<TryBlock>(st[8]);
  REQUIRE(tb->catch_var);
  CHECK(tb->catch_var->name == "e");
  CHECK(as<TryBlock>(st[9])->catch_var == nullptr);
  CHECK(as<NextStatement>(p.stmt(0)));
}

TEST_CASE("parser: return outside a function", "[parser]") {
  Parsed p("probe begin { return 1 }");
  CHECK_FALSE(p.f);
  CHECK(p.err.str() == one_error("found 'return' not in function context", "saw",
                                 "keyword at <input>:1:15", "probe begin { return 1 }", 15));
}

TEST_CASE("parser: foreach forms", "[parser]") {
  Parsed p(R"(probe begin {
  foreach (k in arr) ;
  foreach ([a+, b] in arr) ;
  foreach ([a, b] in arr- limit 10) ;
  foreach (v = [a, b] in arr[*, "x"]) ;
  foreach (v- = k in arr) ;
  foreach (k in s @sum +) ;
  foreach (b in @hist_log(x)) ;
})");
  REQUIRE(p.f);
  auto* f0 = as<ForeachLoop>(p.stmt(0));
  CHECK(f0->indexes.size() == 1);
  CHECK(as<Symbol>(f0->base)->name == "arr");
  CHECK(f0->sort_direction == 0);
  auto* f1 = as<ForeachLoop>(p.stmt(1));
  CHECK(f1->sort_direction == 1);
  CHECK(f1->sort_column == 1);
  auto* f2 = as<ForeachLoop>(p.stmt(2));
  CHECK(f2->sort_direction == -1);
  CHECK(f2->sort_column == 0);
  CHECK(as<LiteralNumber>(f2->limit)->value == 10);
  auto* f3 = as<ForeachLoop>(p.stmt(3));
  REQUIRE(f3->value);
  CHECK(f3->value->name == "v");
  REQUIRE(f3->array_slice.size() == 2);
  CHECK(f3->array_slice[0] == nullptr);
  CHECK(as<LiteralString>(f3->array_slice[1])->value == "x");
  auto* f4 = as<ForeachLoop>(p.stmt(4));
  CHECK(f4->sort_direction == -1);
  CHECK(f4->sort_column == 0);
  CHECK(f4->value);
  auto* f5 = as<ForeachLoop>(p.stmt(5));
  CHECK(f5->sort_aggr == "sum");
  CHECK(f5->sort_direction == 1);
  auto* f6 = as<ForeachLoop>(p.stmt(6));
  CHECK(as<HistogramOp>(f6->base)->kind == HistogramOp::Kind::Log);

  Parsed q("probe begin { foreach ([a+, b-] in x) ; }");
  CHECK_FALSE(q.f);
  CHECK(q.err.str().find("multiple sort directives") != std::string::npos);
}

// ---------------------------------------------------------------------------- expressions

TEST_CASE("parser: precedence", "[parser]") {
  Parsed p("probe begin { x = a || b && c | d ^ e & f == g < h << i . j + k * -l++ }");
  REQUIRE(p.f);
  auto* lor = as<LogicalOrExpr>(p.rhs());
  auto* land = as<LogicalAndExpr>(lor->right);
  auto* bor = as<BinaryExpression>(land->right);
  CHECK(bor->op == "|");
  auto* bxor = as<BinaryExpression>(bor->right);
  CHECK(bxor->op == "^");
  auto* band = as<BinaryExpression>(bxor->right);
  CHECK(band->op == "&");
  // stap's comparisons are left-associative at one level: (f == g) < h
  auto* lt = as<ComparisonExpr>(band->right);
  CHECK(lt->op == "<");
  CHECK(as<ComparisonExpr>(lt->left)->op == "==");
  auto* shl = as<BinaryExpression>(lt->right);
  CHECK(shl->op == "<<");
  auto* cat = as<ConcatenationExpr>(shl->right);
  auto* plus = as<BinaryExpression>(cat->right);
  CHECK(plus->op == "+");
  auto* mul = as<BinaryExpression>(plus->right);
  CHECK(mul->op == "*");
  auto* neg = as<UnaryExpression>(mul->right);
  CHECK(as<PostCrement>(neg->operand)->op == "++");
}

TEST_CASE("parser: arithmetic precedence and associativity", "[parser]") {
  Parsed p("probe begin { x = 1 + 2 * 3 - 4; y = a . b . c; z = c ? d : e ? f : g; "
           "w = i >>> 2; v = ! ~-+u; t = ++a; a += b -= c; s .= \"x\"; h <<< 5 }");
  REQUIRE(p.f);
  auto* sub = as<BinaryExpression>(p.rhs(0));
  CHECK(sub->op == "-");
  auto* add = as<BinaryExpression>(sub->left);
  CHECK(add->op == "+");
  CHECK(as<BinaryExpression>(add->right)->op == "*");
  auto* cat = as<ConcatenationExpr>(p.rhs(1));
  CHECK(as<ConcatenationExpr>(cat->left));
  auto* tern = as<TernaryExpression>(p.rhs(2));
  CHECK(as<TernaryExpression>(tern->falsevalue));
  CHECK(as<BinaryExpression>(p.rhs(3))->op == ">>>");
  auto* u = as<UnaryExpression>(p.rhs(4));
  CHECK(u->op == "!");
  CHECK(as<UnaryExpression>(u->operand)->op == "~");
  CHECK(as<PreCrement>(p.rhs(5))->op == "++");
  auto* chain = as<AssignmentExpr>(p.expr(6));
  CHECK(chain->op == "+=");
  CHECK(as<AssignmentExpr>(chain->right)->op == "-=");
  CHECK(as<AssignmentExpr>(p.expr(7))->op == ".=");
  CHECK(as<AssignmentExpr>(p.expr(8))->op == "<<<");
}

TEST_CASE("parser: literals", "[parser]") {
  Parsed p(R"(probe begin { a = 0x10; b = 010; c = "x" "y" "z"; d = -5; e = 9223372036854775807 })");
  REQUIRE(p.f);
  CHECK(as<LiteralNumber>(p.rhs(0))->value == 16);
  CHECK(as<LiteralNumber>(p.rhs(1))->value == 8);
  CHECK(as<LiteralString>(p.rhs(2))->value == "xyz");
  CHECK(as<UnaryExpression>(p.rhs(3))->op == "-");
  CHECK(as<LiteralNumber>(p.rhs(4))->value == INT64_MAX);

  Parsed bad("probe begin { a = 99999999999999999999 }");
  CHECK_FALSE(bad.f);
  CHECK(bad.err.str() ==
        one_error("number invalid or out of range", "saw",
                  "number '99999999999999999999' at <input>:1:19",
                  "probe begin { a = 99999999999999999999 }", 19));
  Parsed bad2("probe begin { a = 12abc }");
  CHECK(bad2.err.str().find("number invalid or out of range") != std::string::npos);
}

TEST_CASE("parser: arrays, in, regex", "[parser]") {
  Parsed p(R"(probe begin { a[1, "x"] = 2; b = [1, 2] in arr; c = k in arr; d = [*, 1] in arr;
e = s =~ "^a.*"; f = s !~ "b" })");
  REQUIRE(p.f);
  auto* ai = as<ArrayIndex>(as<AssignmentExpr>(p.expr(0))->left);
  CHECK(as<Symbol>(ai->base)->name == "a");
  CHECK(ai->indexes.size() == 2);
  auto* in = as<ArrayIn>(p.rhs(1));
  CHECK(in->operand->indexes.size() == 2);
  CHECK(as<Symbol>(in->operand->base)->name == "arr");
  CHECK(as<ArrayIn>(p.rhs(2))->operand->indexes.size() == 1);
  CHECK(as<ArrayIn>(p.rhs(3))->operand->indexes[0] == nullptr);
  auto* re = as<RegexMatch>(p.rhs(4));
  CHECK(re->op == "=~");
  CHECK(re->regex->value == "^a.*");
  CHECK(as<RegexMatch>(p.rhs(5))->op == "!~");

  Parsed q("probe begin { e = s =~ x }");
  CHECK(q.err.str().find("expected literal string") != std::string::npos);
}

TEST_CASE("parser: calls, stats and histograms", "[parser]") {
  Parsed p(R"(probe begin { f(); g(1, "a"); a = @count(x); b = @variance(x[1], 3);
c = @hist_linear(h, 0, 100, 10)[2]; d = @avg(s) })");
  REQUIRE(p.f);
  CHECK(as<FunctionCall>(p.expr(0))->args.empty());
  CHECK(as<FunctionCall>(p.expr(1))->args.size() == 2);
  CHECK(as<StatOp>(p.rhs(2))->op == "count");
  auto* var = as<StatOp>(p.rhs(3));
  CHECK(var->op == "variance");
  CHECK(var->params == std::vector<int64_t>{3});
  CHECK(as<ArrayIndex>(var->stat));
  auto* bucket = as<ArrayIndex>(p.rhs(4));
  auto* h = as<HistogramOp>(bucket->base);
  CHECK(h->kind == HistogramOp::Kind::Linear);
  CHECK(h->params == std::vector<int64_t>{0, 100, 10});
  CHECK(as<StatOp>(p.rhs(5))->op == "avg");

  Parsed q("probe begin { x = @hist_log(h) }");
  CHECK(q.err.str().find("base histogram operator where expression expected") !=
        std::string::npos);
  Parsed r("probe begin { x = @sum(h, 2) }");
  CHECK(r.err.str().find("not more than 1 parameter allowed") != std::string::npos);
}

TEST_CASE("parser: print formats", "[parser]") {
  Parsed p(R"(probe begin { printf("%-5d|%05x %s %%\n", a, b, c); println(a, b); print(@hist_log(h));
printdln(",", a, b); x = sprintf("%*.*s%lld%p%#o%c%b%m%M%u%i%X", 1, 2, "s"); print(@hist_log(h)[1]) })");
  REQUIRE(p.f);
  auto* pf = as<PrintFormat>(p.expr(0));
  CHECK(pf->with_format);
  CHECK(pf->to_stream);
  CHECK(pf->raw_format == "%-5d|%05x %s %%\n");
  REQUIRE(pf->components.size() == 6);
  CHECK(pf->components[0].conv == FormatComponent::Conv::SignedDec);
  CHECK(pf->components[0].flag == '-');
  CHECK(pf->components[0].width == 5);
  CHECK(pf->components[1].literal == "|");
  CHECK(pf->components[2].flag == '0');
  CHECK(pf->components[2].conv == FormatComponent::Conv::HexLower);
  CHECK(pf->components[3].literal == " ");
  CHECK(pf->components[4].conv == FormatComponent::Conv::String);
  CHECK(pf->components[5].literal == " %\n");
  CHECK(pf->args.size() == 3);
  auto* pl = as<PrintFormat>(p.expr(1));
  CHECK(pl->with_newline);
  CHECK_FALSE(pl->with_format);
  auto* ph = as<PrintFormat>(p.expr(2));
  REQUIRE(ph->hist);
  CHECK(ph->args.empty());
  auto* pd = as<PrintFormat>(p.expr(3));
  CHECK(pd->with_delim);
  CHECK(pd->delimiter == ",");
  CHECK(pd->with_newline);
  auto* sp = as<PrintFormat>(p.rhs(4));
  CHECK_FALSE(sp->to_stream);
  CHECK(sp->components[0].width == -2);
  CHECK(sp->components[0].precision == -2);
  CHECK(sp->components[1].long_modifier);
  CHECK(sp->components[2].conv == FormatComponent::Conv::Pointer);
  CHECK(sp->components[3].flag == '#');
  CHECK(sp->components.back().conv == FormatComponent::Conv::HexUpper);
  auto* pb = as<PrintFormat>(p.expr(5));
  CHECK(pb->hist == nullptr);
  CHECK(as<ArrayIndex>(pb->args[0]));
}

TEST_CASE("parser: bad formats", "[parser]") {
  for (const char* f : {"%q", "%-#10x", "%", "%f", "abc%"}) {
    Parsed p(std::string("probe begin { printf(\"") + f + "\", 1) }");
    CHECK_FALSE(p.f);
    CHECK(p.err.str().rfind("parse error: invalid or missing conversion specifier\n", 0) == 0);
  }
  Parsed q("probe begin { printf(\"%q\") }");
  CHECK(q.err.str() == one_error("invalid or missing conversion specifier", "saw",
                                 "operator ')' at <input>:1:26",
                                 "probe begin { printf(\"%q\") }", 26));
  Parsed r("probe begin { printf(x) }");
  CHECK(r.err.str().rfind("parse error: expected literal string\n", 0) == 0);
}

TEST_CASE("parser: target variables and @cast/@var/@defined/@entry/@perf", "[parser]") {
  Parsed p(R"(probe begin { a = $var; b = $p->x[3]->y$; c = &$s->m; d = $$vars; e = $$parms$$;
f = $arr[i + 1]; g = @cast(p, "task_struct", "kernel")->pid; h = @var("jiffies@kernel/time.c", "kernel");
i = @defined($x) ? 1 : 0; j = @entry($n); k = @perf("cycles"); l = $x $ })");
  REQUIRE(p.f);
  CHECK(as<TargetSymbol>(p.rhs(0))->name == "$var");
  auto* b = as<TargetSymbol>(p.rhs(1));
  REQUIRE(b->components.size() == 4);
  CHECK(b->components[0].kind == TargetComponent::Kind::StructMember);
  CHECK(b->components[0].member == "x");
  CHECK(b->components[1].kind == TargetComponent::Kind::LiteralIndex);
  CHECK(b->components[1].num_index == 3);
  CHECK(b->components[2].member == "y");
  CHECK(b->components[3].kind == TargetComponent::Kind::PrettyPrint);
  CHECK(b->components[3].member == "$");
  auto* c = as<TargetSymbol>(p.rhs(2));
  CHECK(c->addressof);
  CHECK(as<TargetSymbol>(p.rhs(3))->name == "$$vars");
  auto* e = as<TargetSymbol>(p.rhs(4));
  CHECK(e->name == "$$parms");
  REQUIRE(e->components.size() == 1);
  CHECK(e->components[0].member == "$$");
  auto* f = as<TargetSymbol>(p.rhs(5));
  CHECK(f->components[0].kind == TargetComponent::Kind::ExpressionIndex);
  auto* g = as<CastOp>(p.rhs(6));
  CHECK(g->type_name == "task_struct");
  CHECK(g->module == "kernel");
  CHECK(g->components[0].member == "pid");
  auto* h = as<AtVarOp>(p.rhs(7));
  CHECK(h->target_name == "jiffies");
  CHECK(h->cu_name == "kernel/time.c");
  CHECK(h->module == "kernel");
  CHECK(as<DefinedOp>(as<TernaryExpression>(p.rhs(8))->condition));
  CHECK(as<EntryOp>(p.rhs(9)));
  CHECK(as<PerfOp>(p.rhs(10))->operand->value == "cycles");
  auto* l = as<TargetSymbol>(p.rhs(11));
  REQUIRE(l->components.size() == 1);
  CHECK(l->components[0].member == "$");
}

// ---------------------------------------------------------------------------- preprocessor

TEST_CASE("preprocessor: conditions", "[preprocessor]") {
  auto count = [](const std::string& cond) {
    Parsed p("%( " + cond + " %? probe begin {} %: probe end {} probe end {} %)");
    INFO(cond << "\n" << p.err.str());
    REQUIRE(p.f);
    return p.f->probes.size() == 1;  // true branch
  };
  CHECK(count("arch == \"x86_64\""));
  CHECK(count("arch == \"x86*\""));
  CHECK_FALSE(count("arch != \"x86*\""));
  CHECK(count("runtime == \"bpf\""));
  CHECK(count("kernel_v >= \"2.6.32\""));
  CHECK(count("kernel_v >= \"6.1\""));
  CHECK_FALSE(count("kernel_v < \"6.1.0\""));
  CHECK(count("kernel_v == \"6.1*\""));
  CHECK(count("kernel_vr == \"6.1.0-18-amd64\""));
  CHECK(count("kernel_v < \"6.10\""));  // version compare, not string compare
  CHECK(count("systemtap_v >= \"4.0\""));
  CHECK_FALSE(count("systemtap_v < \"2.0\""));
  CHECK(count("systemtap_privilege == \"stapdev\""));
  CHECK(count("guru_mode == 0"));
  CHECK(count("CONFIG_BPF == \"y\""));
  CHECK(count("CONFIG_EXT4_FS == \"m\""));
  CHECK_FALSE(count("CONFIG_NOPE == \"y\""));
  CHECK(count("CONFIG_HZ > 100"));
  CHECK(count("CONFIG_NR_CPUS > CONFIG_HZ"));
  CHECK(count("1 < 2"));
  CHECK(count("\"a\" < \"b\""));
  CHECK(count("1 == 2 || 2 == 2"));
  CHECK_FALSE(count("1 == 1 && 2 == 3"));
  CHECK(count("1 == 2 && 2 == 2 || 3 == 3"));
}

TEST_CASE("preprocessor: nesting and no else", "[preprocessor]") {
  Parsed p(R"(probe begin {
  x = %( arch == "x86_64" %? %( 1 == 2 %? 10 %: 20 %) %: 30 %)
  y = %( 1 == 2 %? 40 %)  1
})");
  REQUIRE(p.f);
  CHECK(as<LiteralNumber>(p.rhs(0))->value == 20);
  CHECK(as<LiteralNumber>(p.rhs(1))->value == 1);
}

TEST_CASE("preprocessor: errors", "[preprocessor]") {
  Parsed p("%( foo == 1 %? probe begin {} %)");
  CHECK_FALSE(p.f);
  CHECK(p.err.str().rfind("parse error: expected 'arch', 'kernel_v', 'kernel_vr', 'systemtap_v',\n"
                          "             'runtime', 'systemtap_privilege', 'CONFIG_...', or\n"
                          "             comparison between strings or integers\n"
                          "         at: identifier 'foo' at <input>:1:4\n",
                          0) == 0);
  Parsed q("%( arch == \"x86_64\" %? probe begin {}");
  CHECK(q.err.str() == one_error("incomplete conditional at end of file", "at",
                                 "operator '%(' at <input>:1:1",
                                 "%( arch == \"x86_64\" %? probe begin {}", 1));
  Parsed r("probe begin {} %)");
  CHECK(r.err.str().rfind("parse error: incomplete conditional - missing '%('\n", 0) == 0);
  Parsed s("%( kernel_v > \"2.*\" %? probe begin {} %)");
  CHECK(s.err.str().rfind(
            "parse error: wildcard not allowed with order comparison operators\n", 0) == 0);
}

TEST_CASE("preprocessor: macros", "[preprocessor]") {
  Parsed p(R"(@define ONE %( 1 %)
@define ADD(a, b) %( (@a + @b) %)
@define TWICE(x) %( @ADD(@x, @x) %)
probe begin { x = @ONE; y = @ADD(2, f(3, 4)); z = @TWICE(5) })");
  INFO(p.err.str());
  REQUIRE(p.f);
  auto* one = as<LiteralNumber>(p.rhs(0));
  CHECK(one->value == 1);
  REQUIRE(one->tok->expanded_from);
  CHECK(one->tok->expanded_from->text == "@ONE");
  CHECK(one->tok->expanded_from->loc.line == 4);
  auto* add = as<BinaryExpression>(p.rhs(1));
  CHECK(as<FunctionCall>(add->right)->args.size() == 2);
  auto* tw = as<BinaryExpression>(p.rhs(2));
  CHECK(as<LiteralNumber>(tw->left)->value == 5);
  CHECK(as<LiteralNumber>(tw->right)->value == 5);
}

TEST_CASE("preprocessor: macro errors", "[preprocessor]") {
  Parsed p("@define A(x) %( @x %) probe begin { y = @A }");
  CHECK(p.err.str().rfind("parse error: expected '(' in invocation of macro '@A' taking 1 parameter\n",
                          0) == 0);
  Parsed q("@define A(x) %( @x %) probe begin { y = @A(1, 2) }");
  CHECK(q.err.str().rfind("parse error: too many parameters for macro '@A' (expected 1)\n", 0) ==
        0);
  Parsed r("@define A %( 1 %) @define A %( 2 %)");
  CHECK(r.err.str().rfind("parse error: attempt to redefine macro '@A' in the same file\n", 0) ==
        0);
  Parsed s("@define A %( @A @A %) probe begin { x = @A }");
  CHECK_FALSE(s.f);  // terminates
  Parsed t("@define A %( 1 ");
  CHECK(t.err.str().rfind("parse error: incomplete macro definition - missing '%)'\n", 0) == 0);
}

TEST_CASE("preprocessor: library macros from .stpm", "[preprocessor]") {
  Parsed p("probe begin { x = @LIBM(3) }", false, {}, "@define LIBM(v) %( (@v * 2) %)\n");
  INFO(p.err.str());
  REQUIRE(p.f);
  REQUIRE(p.lib.find("LIBM"));
  auto* m = as<BinaryExpression>(p.rhs(0));
  CHECK(m->op == "*");

  std::ostringstream err;
  Session s(err);
  MacroLibrary lib;
  const SourceFile* bad = s.add_source("/t/bad.stpm", "@define X %( 1 %) probe", true);
  CHECK_FALSE(parse::parse_library_macros(s, bad, lib, test_env()));
  CHECK(lib.size() == 0);
  CHECK(err.str().rfind("parse error: unexpected token in library macro file '/t/bad.stpm'\n",
                        0) == 0);
}

TEST_CASE("command line arguments", "[parser]") {
  Parsed p("probe begin { x = $1; y = @1; z = $2 + 1 }", false, {"42", "a.b"});
  INFO(p.err.str());
  REQUIRE(p.f);
  CHECK(as<LiteralNumber>(p.rhs(0))->value == 42);
  CHECK(as<LiteralString>(p.rhs(1))->value == "42");
  // "a.b" is pasted as tokens: a . b + 1 parses as a . (b + 1)
  auto* cat = as<ConcatenationExpr>(p.rhs(2));
  CHECK(as<BinaryExpression>(cat->right)->op == "+");
  Parsed q("probe begin { x = $3 }", false, {"1"});
  CHECK(q.err.str() == one_error("command line argument out of range [1-1]", "at",
                                 "junk '$3' at <input>:1:19", "probe begin { x = $3 }", 19));
}

// ------------------------------------------------------------------------ errors, recovery

TEST_CASE("errors: stap's texts and locations", "[parser]") {
  Parsed p("probe begin {\n  x = \n}\n");
  CHECK(p.err.str() == one_error("expected literal string or number", "saw",
                                 "operator '}' at <input>:3:1", "}", 1));
  Parsed q("probe begin { print(\"abc) }");
  CHECK(q.err.str() == one_error("Could not find matching closing quote", "at",
                                 "junk '' at <input>:1:21", "probe begin { print(\"abc) }", 21));
  Parsed r("probe begin { x = 1 ");
  // At the end of the input, the last line and a caret just after its text (stap prints none).
  CHECK(r.err.str() == "parse error: expected statement\n        saw: <input> EOF\n"
                       "     source: probe begin { x = 1 \n"
                       "                                ^\n\n");
  Parsed s("foo");
  CHECK(s.err.str() == one_error("expected 'probe', 'global', 'private', 'function', or '%{'",
                                 "saw", "identifier 'foo' at <input>:1:1", "foo", 1));
  Parsed t("probe begin { f(1 2) }");
  CHECK(t.err.str().rfind("parse error: expected one of ') ,'\n", 0) == 0);
  Parsed u("global x[0]");
  CHECK(u.err.str().rfind("parse error: array size out of range\n", 0) == 0);
  Parsed v("global a, a");
  CHECK(v.err.str().rfind("parse error: duplicate global name\n", 0) == 0);
  Parsed w("function f(a, a) {}");
  CHECK(w.err.str().rfind("parse error: duplicate parameter names\n", 0) == 0);
}

TEST_CASE("errors: recovery reports several errors", "[parser]") {
  Parsed p("probe begin { x = }\nprobe end { y = 1 }\nglobal 5\nfunction f( { }\nprobe begin { ok() }");
  CHECK_FALSE(p.f);
  CHECK(p.s.diag.parse_errors() == 3);
  const std::string e = p.err.str();
  CHECK(e.find("saw: operator '}' at <input>:1:19") != std::string::npos);
  // Each error names its file again (only a semantic error's chain drops it after the first).
  CHECK(e.find("saw: number '5' at <input>:3:8") != std::string::npos);
  CHECK(e.find("saw: operator '{' at <input>:4:13") != std::string::npos);
}

TEST_CASE("errors: empty input", "[parser]") {
  Parsed p("");
  CHECK_FALSE(p.f);
  CHECK(p.err.str() == "Input file '<input>' is empty.\n");
  Parsed q("# only a comment\n%( 1 == 2 %? probe begin {} %)");
  CHECK_FALSE(q.f);
  CHECK(q.err.str() == "Input file '<input>' is empty after preprocessing.\n");
}

TEST_CASE("robustness: deep nesting is an error, not a crash", "[parser]") {
  std::string deep = "probe begin { x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }";
  Parsed p(deep);
  CHECK_FALSE(p.f);
  CHECK(p.err.str().find("too deeply nested") != std::string::npos);
  std::string unary = "probe begin { x = " + std::string(5000, '-') + "1 }";
  Parsed q(unary);
  CHECK_FALSE(q.f);
  std::string blocks = "probe begin " + std::string(5000, '{');
  Parsed r(blocks);
  CHECK_FALSE(r.f);
  std::string braces = "probe " + std::string(5000, '{') + "a";
  Parsed s(braces);
  CHECK_FALSE(s.f);
  std::string ifs = "probe begin { ";
  for (int i = 0; i < 3000; ++i) ifs += "if (1) ";
  Parsed t(ifs + "x = 1 }");
  CHECK_FALSE(t.f);
}

TEST_CASE("robustness: truncated inputs never crash", "[parser]") {
  const std::string full = R"(global a[10], b = "s"
@define M(x) %( (@x + 1) %)
probe kernel.function("f").return?, timer.ms(10) if (a[1] > 0) {
  foreach ([k, v-] in a[*, 1] limit 5) { printf("%d %s\n", @M(k), b) }
  try { delete a[k] } catch (e) { next }
  x = @cast($p, "s")->m[2]$ . sprintf("%5.2s", "ab") ; y <<< 1; print(@hist_log(y))
}
function f:long (x:long) { for (i = 0; i < x; i++) { if (i % 2) continue; else break } return x }
%( arch == "x86_64" %? probe end { } %: probe error { } %)
)";
  for (size_t n = 0; n <= full.size(); ++n) {
    Parsed p(full.substr(0, n), true);
    (void)p;
  }
  Parsed all(full, true);
  CHECK(all.f);
  INFO(all.err.str());
}

// ----------------------------------------------------------------------------------- pass 1

TEST_CASE("pass1: -e script, tapsets and .stpm", "[pass1]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "ukstap-pass1-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "m.stpm") << "@define TWO %( 2 %)\n";
  std::ofstream(dir / "sub" / "t.stp") << "function two() { return @TWO }\n";
  std::ofstream(dir / "a.stp") << "probe x.y = begin { }\n";

  std::ostringstream err;
  Session s(err);
  s.opts.have_script_text = true;
  s.opts.script_text = "probe begin { x = @TWO }";
  s.opts.include_dirs = {dir.string()};
  int rc = pass1_parse(s);
  INFO(err.str());
  CHECK(rc == 0);
  REQUIRE(s.user_file);
  CHECK(s.user_file->name == "<input>");
  CHECK_FALSE(s.user_file->is_tapset);
  bool found = false;
  for (auto* f : s.tapset_files) {
    CHECK(f->is_tapset);
    CHECK(f->privileged);
    if (f->name == (dir / "sub" / "t.stp").string()) found = true;
  }
  CHECK(found);
  fs::remove_all(dir);
}

TEST_CASE("pass1: missing script file", "[pass1]") {
  std::ostringstream err;
  Session s(err);
  s.opts.script_file = "/nonexistent/x.stp";
  CHECK(pass1_parse(s) != 0);
  CHECK(err.str() == "ukstap: cannot open script file '/nonexistent/x.stp': No such file or directory\n");
}
