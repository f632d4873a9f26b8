// Pass 2: alias/wildcard expansion, resolution, type inference and the diagnostics users see.
// Tapsets are given inline so each test states exactly what it elaborates against; expected
// texts come from docs/STAP-FORMATS.md (§2, §5, §6), not from this code's output.
#include <catch2/catch.hpp>

#include <set>
#include <sstream>

#include "driver/passes.h"
#include "driver/session.h"
#include "parse/parser.h"

using namespace ukstap;

namespace {

const char* kMiniTapset = R"(
function log(msg:string) %{ /* unprivileged */ %}
function exit() %{ /* unprivileged */ %}
function execname:string () %{ /* pure */ /* unprivileged */ %}
private function helper:long () { return 42 }
function uses_helper:long () { return helper() }
probe foo.bar = begin { name = "bar"; n = 1 }
probe foo.baz = end { name = "baz"; n = 2 }
probe foo.after += begin { after = 1 }
probe deep.alias = foo.bar { deep = 1 }
)";

struct Elab {
  std::ostringstream err;
  Session s{err};
  parse::MacroLibrary lib;
  int rc = -1;

  explicit Elab(const std::string& script, const std::string& tapset = kMiniTapset) {
    s.opts.last_pass = 2;
    auto* ts = s.add_source("mini.stp", tapset, true);
    auto* tf = parse::parse_file(s, ts, lib);
    REQUIRE(tf != nullptr);
    s.tapset_files.push_back(tf);
    auto* us = s.add_source("<input>", script, false);
    s.user_file = parse::parse_file(s, us, lib);
    REQUIRE(s.user_file != nullptr);
    rc = pass2_elaborate(s);
  }
  std::string p2() {
    std::ostringstream o;
    print_pass2(s, o);
    return o.str();
  }
  const ast::Vardecl* global(const std::string& n) {
    for (auto* g : s.globals)
      if (g->name == n) return g;
    return nullptr;
  }
};

}  // namespace

TEST_CASE("types are inferred for globals, arrays and locals", "[elaborate]") {
  Elab e("global x, a\nprobe begin { x = 1; s = \"a\"; a[\"k\", 2] = s; log(s) }\n"
         "probe end { log(a[\"k\", 2] . sprint(x)) }");
  REQUIRE(e.rc == 0);
  REQUIRE(e.global("x")->type == ast::Type::Long);
  auto* a = e.global("a");
  REQUIRE(a->type == ast::Type::String);
  REQUIRE(a->arity == 2);
  REQUIRE(a->index_types == std::vector<ast::Type>{ast::Type::String, ast::Type::Long});
  REQUIRE(e.s.probes.size() == 2);
  REQUIRE(e.s.probes[0]->locals.size() == 1);
  REQUIRE(e.s.probes[0]->locals[0]->type == ast::Type::String);
}

TEST_CASE("-p2 prints globals, functions and probes in stap's layout", "[elaborate]") {
  Elab e("global x\nfunction foo:long (n) { return n * 2 }\n"
         "probe begin { x = foo(1); y = \"s\"; log(y) }");
  REQUIRE(e.rc == 0);
  REQUIRE(e.p2() ==
          "# globals\n"
          "x:long\n"
          "# functions\n"
          "foo:long (n:long)\n"
          "log:unknown (msg:string)\n"
          "# probes\n"
          "begin /* <- begin */\n"
          "  # locals\n"
          "  y:string\n"
          // x is written and never read: stap's end-of-run display probe.
          "end /* <- end */\n");
}

TEST_CASE("wildcards expand through aliases with their prologues", "[elaborate]") {
  Elab e("probe foo.ba* { log(name . sprint(n)) }");
  REQUIRE(e.rc == 0);
  REQUIRE(e.s.probes.size() == 2);
  std::string out = e.p2();
  REQUIRE(out.find("begin /* <- begin <- foo.bar <- foo.ba* */\n  # locals\n  name:string\n  n:long\n") !=
          std::string::npos);
  REQUIRE(out.find("end /* <- end <- foo.baz <- foo.ba* */") != std::string::npos);
  // The prologue runs before the user's body: the body has the prologue block first.
  REQUIRE(e.s.probes[0]->body->statements.size() == 2);
}

TEST_CASE("nested aliases chain their prologues outermost last", "[elaborate]") {
  Elab e("probe deep.alias { log(name) }");
  REQUIRE(e.rc == 0);
  REQUIRE(e.s.probes.size() == 1);
  REQUIRE(e.p2().find("begin /* <- begin <- foo.bar <- deep.alias */") != std::string::npos);
  // foo.bar's prologue, deep.alias's prologue, then the user's body.
  REQUIRE(e.s.probes[0]->body->statements.size() == 3);
}

TEST_CASE("an epilogue alias runs after the user's body", "[elaborate]") {
  Elab e("probe foo.after { x = 1; log(sprint(x)) }");
  REQUIRE(e.rc == 0);
  auto* body = e.s.probes[0]->body;
  REQUIRE(body->statements.size() == 2);
  // The user's block (x = 1) is first.
  auto* first = dynamic_cast<ast::Block*>(body->statements[0]);
  REQUIRE(first != nullptr);
  auto* es = dynamic_cast<ast::ExprStatement*>(first->statements.at(0));
  REQUIRE(es != nullptr);
  auto* as = dynamic_cast<ast::AssignmentExpr*>(es->value);
  REQUIRE(dynamic_cast<ast::Symbol*>(as->left)->name == "x");
}

TEST_CASE("unresolved function names similar ones", "[elaborate]") {
  Elab e("probe begin { exti() }");
  REQUIRE(e.rc != 0);
  REQUIRE(e.err.str() ==
          "semantic error: unresolved function exti (similar: exit, log, execname): identifier 'exti' at "
          "<input>:1:15\n"
          "        source: probe begin { exti() }\n"
          "                              ^\n"
          "\n");
}

TEST_CASE("private tapset functions are invisible to the script", "[elaborate]") {
  Elab ok("probe begin { x = uses_helper(); log(sprint(x)) }");
  // sprint is a print operator, not a function: this elaborates.
  REQUIRE(ok.rc == 0);
  Elab bad("probe begin { x = helper() }");
  REQUIRE(bad.rc != 0);
  REQUIRE(bad.err.str().find("unresolved function helper") != std::string::npos);
}

TEST_CASE("unresolved types are errors, never-assigned locals warnings", "[elaborate]") {
  Elab e("probe begin { x = y }");
  REQUIRE(e.rc != 0);
  std::string err = e.err.str();
  REQUIRE(err.find("WARNING: never-assigned local variable 'y' (similar: x): identifier 'y' at <input>:1:19\n"
                   " source: probe begin { x = y }\n"
                   "                           ^\n") != std::string::npos);
  // A new message names its file even when the previous one (the warning) named the same.
  REQUIRE(err.find("semantic error: unresolved type for identifier 'x': identifier 'x' at "
                   "<input>:1:15") != std::string::npos);
}

TEST_CASE("type mismatches name both sides", "[elaborate]") {
  Elab e("probe begin { x = 1; x = \"s\" }");
  REQUIRE(e.rc != 0);
  REQUIRE(e.err.str().find("semantic error: type mismatch: expected long but found string: "
                           "string 's' at <input>:1:26") !=
          std::string::npos);
  Elab f("probe begin { printf(\"%s\\n\", 1) }");
  REQUIRE(f.rc != 0);
  REQUIRE(f.err.str().find("type mismatch: expected string but found long") != std::string::npos);
  Elab g("probe begin { printf(\"%d %d\\n\", 1) }");
  REQUIRE(g.err.str().find("Wrong number of args to formatted print operator") !=
          std::string::npos);
}

TEST_CASE("arrays and aggregates must be global", "[elaborate]") {
  Elab e("probe begin { a[1] = 2 }");
  REQUIRE(e.err.str().find("semantic error: array locals not supported, missing global "
                           "declaration?: identifier 'a' at <input>:1:15") != std::string::npos);
  Elab f("probe begin { s <<< 2 }");
  REQUIRE(f.err.str().find("aggregate locals not supported") != std::string::npos);
}

TEST_CASE("unknown probe points say what is close", "[elaborate]") {
  Elab e("probe foo.bax { }");
  REQUIRE(e.rc != 0);
  REQUIRE(e.err.str().find("semantic error: while resolving probe point: identifier 'foo' at "
                           "<input>:1:7\n") == 0);
  // stap's rule: up to 5 names within 7 edits, closest first.
  REQUIRE(e.err.str().find("semantic error: probe point mismatch (similar: bar, baz, after): "
                           "identifier 'bax' at <input>:1:11\n") != std::string::npos);
  Elab opt("probe foo.bax ?, begin { }");
  REQUIRE(opt.rc == 0);
  REQUIRE(opt.s.probes.size() == 1);
}

TEST_CASE("@defined folds and drops the dead branch", "[elaborate]") {
  Elab e("probe begin { if (@defined($nosuch)) x = $nosuch else x = 0; log(sprint(x)) }");
  REQUIRE(e.rc == 0);
  Elab bad("probe begin { x = $nosuch }");
  REQUIRE(bad.rc != 0);
  REQUIRE(bad.err.str().find("unable to find target variable '$nosuch'") != std::string::npos);
}

TEST_CASE("control flow outside loops is rejected", "[elaborate]") {
  Elab e("probe begin { break }");
  REQUIRE(e.err.str().find("break statement outside loop") != std::string::npos);
  Elab f("function f() { next }\nprobe begin { f() }");
  REQUIRE(f.err.str().find("next statement in a function") != std::string::npos);
}

TEST_CASE("globals written but never read get stap's end-of-run display", "[elaborate]") {
  Elab e("global count, s, agg, arr, read_me\n"
         "probe begin { count = 1; s = \"x\"; agg <<< 3; arr[\"a\", 1] = 1; read_me = 1 }\n"
         "probe end { log(sprint(read_me)) }");
  REQUIRE(e.rc == 0);
  // The user's two probes, then one synthetic `end` per displayed global, declaration order.
  REQUIRE(e.s.probes.size() == 6);
  std::string p2 = e.p2();
  REQUIRE(p2.find("end /* <- end */\n  # locals\n  __k1:string\n  __k2:long\n") !=
          std::string::npos);
  // The display probes print with exactly the stap formats.
  std::ostringstream bodies;
  for (size_t i = 2; i < e.s.probes.size(); ++i)
    REQUIRE(e.s.probes[i]->source->synthetic);
  auto fmt_of = [&](size_t i) {
    struct Find : ast::TraversingVisitor {
      std::string fmts;
      void visit(ast::PrintFormat& p) override { fmts += p.raw_format + "|"; }
    } f;
    e.s.probes[i]->body->accept(f);
    return f.fmts;
  };
  REQUIRE(fmt_of(2) == "count=%d\n|");
  REQUIRE(fmt_of(3) == "s=\"%s\"\n|");
  REQUIRE(fmt_of(4) == "agg @count=%d @min=%d @max=%d @sum=%d @avg=%d\n|agg @count=0x0\n|");
  REQUIRE(fmt_of(5) == "arr[\"%s\",%d]=%d\n|");
}

TEST_CASE("assignments nothing reads are elided unless -u", "[elaborate]") {
  // The alias computes name and n; the script reads only name.
  Elab e("probe foo.bar { log(name) }");
  REQUIRE(e.rc == 0);
  REQUIRE(e.s.probes[0]->locals.size() == 1);
  REQUIRE(e.s.probes[0]->locals[0]->name == "name");
  // A user-script assignment that is elided is reported, as stap does.
  Elab w("probe begin { x = 1 }");
  REQUIRE(w.rc == 0);
  REQUIRE(w.err.str().find("WARNING: Eliding assignment to 'x': operator '=' at <input>:1:17") !=
          std::string::npos);
  // An assignment whose right side has an effect stays.
  Elab keep("global g\nfunction f() { g = 1; return 2 }\nprobe begin { x = f() }");
  REQUIRE(keep.rc == 0);
  REQUIRE(keep.s.probes[0]->locals.size() == 1);
}

TEST_CASE("-T adds a timer probe first", "[elaborate]") {
  std::ostringstream err;
  Session s(err);
  s.opts.timeout_s = 3;
  parse::MacroLibrary lib;
  auto* ts = s.add_source("mini.stp", kMiniTapset, true);
  s.tapset_files.push_back(parse::parse_file(s, ts, lib));
  s.user_file = parse::parse_file(s, s.add_source("<input>", "probe begin {}", false), lib);
  REQUIRE(pass2_elaborate(s) == 0);
  std::ostringstream o;
  print_pass2(s, o);
  REQUIRE(o.str().find("# probes\ntimer.ms(3000) /* <- timer.ms(3000) */\nbegin /* <- begin */\n") !=
          std::string::npos);
}

// SystemTap (langref "Tapset probes"): a tapset file's own probes are part of the script when
// the file is used: here a begin probe that fills the table an alias reads.
TEST_CASE("a used tapset file brings its own probes, an unused one does not", "[elaborate]") {
  const std::string tapset = std::string(kMiniTapset) + R"(
global __names
probe begin(-100) { __names[1] = "one" }
probe named.point = end { nm = __names[1] }
)";
  Elab used("probe named.point { log(nm) }", tapset);
  REQUIRE(used.rc == 0);
  REQUIRE(used.s.probes.size() == 2);
  std::string out = used.p2();
  REQUIRE(out.find("end /* <- end <- named.point */") != std::string::npos);
  REQUIRE(out.find("begin(-100) /* <- begin(-100) */") != std::string::npos);

  // Nothing of the file in use (no function, global or alias of it): no begin probe.
  Elab unused("probe end { n = 1; n++ }", tapset);
  REQUIRE(unused.rc == 0);
  REQUIRE(unused.s.probes.size() == 1);
}

TEST_CASE("an if whose branches only assign unread locals is elided with them", "[elaborate]") {
  // As the syscall tapsets' open: argstr in both branches of an if on flags. A script that
  // reads none of them keeps no local (and its probe's code is the same as any other's).
  const char* tapset = R"(
function quote:string (s:string) %{ /* pure */ %}
probe foo.open = begin { flags = 64; file = quote("x")
  if (flags & 64) argstr = file . "!" else argstr = file }
)";
  Elab e("global n; probe foo.open { n++ }", tapset);
  REQUIRE(e.rc == 0);
  REQUIRE(e.s.probes[0]->locals.empty());
  // Read, they stay (the condition's flags too).
  Elab r("probe foo.open { print(argstr) }", tapset);
  REQUIRE(r.rc == 0);
  std::set<std::string> names;
  for (auto* l : r.s.probes[0]->locals) names.insert(l->name);
  REQUIRE(names == std::set<std::string>{"argstr", "file", "flags"});
  // A condition with an effect keeps the if.
  Elab k("global n; probe foo.open { n++ }",
         "global g\nfunction f:long () { g++; return 1 }\n"
         "probe foo.open = begin { if (f()) a = 1 else a = 2 }");
  REQUIRE(k.rc == 0);
  REQUIRE(k.s.functions.size() == 1);
}

TEST_CASE("an else-if chain whose branches only assign unread locals is elided whole", "[elaborate]") {
  const char* tapset = R"(
function quote:string (s:string) %{ /* pure */ %}
probe foo.open = begin { flags = 64; file = quote("x")
  if (flags & 64) argstr = file . "!"
  else if (flags & 1) argstr = file . "?"
  else if (flags & 2) { argstr = file }
  else argstr = "" }
)";
  Elab e("global n; probe foo.open { n++ }", tapset);
  REQUIRE(e.rc == 0);
  REQUIRE(e.s.probes[0]->locals.empty());
  // Read, the chain and what it reads stay.
  Elab r("probe foo.open { print(argstr) }", tapset);
  REQUIRE(r.rc == 0);
  REQUIRE(r.s.probes[0]->locals.size() == 3);
  // An effect in an inner condition keeps that if (and the outer one around it).
  Elab k("global n; probe foo.open { n++ }",
         "global g\nfunction f:long () { g++; return 1 }\n"
         "probe foo.open = begin { x = 1; if (x) a = 1 else if (f()) a = 2 else a = 3 }");
  REQUIRE(k.rc == 0);
  REQUIRE(k.s.functions.size() == 1);
}
