// The front end against hostile input: the one escaping function for text that reaches the
// generated C (codegen/c_text.h) and the nesting limit of the parser (parse/parser.h
// kMaxNesting), which must stop any input deep enough to exhaust the stack of a later pass.
// Expected texts are C's own rules (C11 5.2.1.1 trigraphs, 6.4.9 comments, 6.4.4.4 escapes).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "codegen/c_text.h"
#include "codegen/module_info.h"
#include "driver/passes.h"
#include "driver/session.h"
#include "parse/parser.h"
#include "test_util.h"

using namespace ukstap;
using codegen::c_comment;
using codegen::c_escape;
using codegen::c_string_literal;

namespace {

// Would this text end a /* comment early, splice lines, or hold a trigraph or a raw byte?
bool inert_in_comment(const std::string& body) {
  for (size_t i = 0; i + 1 < body.size(); ++i) {
    if (body[i] == '*' && body[i + 1] == '/') return false;
    if (body[i] == '/' && body[i + 1] == '*') return false;
    if (body[i] == '?' && body[i + 1] == '?') return false;
  }
  for (unsigned char ch : body)
    if (ch < 0x20 || ch >= 0x7f) return false;
  return true;
}

const char kHostile[] = "*/ int injected = 42; /*";

}  // namespace

TEST_CASE("c_escape: comment terminators, trigraphs, newlines and NUL are neutralized",
          "[c_text]") {
  CHECK(c_escape("plain text 1.2 (x)") == "plain text 1.2 (x)");
  CHECK(c_escape("*/") == "\\052\\057");
  CHECK(c_escape("/*") == "\\057\\052");
  CHECK(c_escape("?\?/") == "\\?\\?/");  // ??/ would be a backslash under -trigraphs
  CHECK(c_escape("a\\\nb") == "a\\\\\\nb");  // backslash-newline: no line splice
  CHECK(c_escape(std::string("a\0b", 3)) == "a\\000b");
  CHECK(c_escape(std::string("\0" "1", 2)) == "\\0001");  // three digits: "1" stays a 1
  CHECK(c_escape("\"q\"") == "\\\"q\\\"");
  CHECK(c_escape("\xff\x01\t\r") == "\\377\\001\\t\\r");
  CHECK(c_escape("/usr/bin/x*") == "/usr/bin/x*");  // '*' and '/' apart stay readable
  CHECK(c_string_literal(kHostile) == "\"\\052\\057 int injected = 42; \\057\\052\"");
  CHECK(c_comment(kHostile) == "/* \\052\\057 int injected = 42; \\057\\052 */");
}

TEST_CASE("c_escape: every byte pair and hostile mix stays inert in a comment", "[c_text]") {
  std::string all;
  for (int a = 0; a < 256; ++a)
    for (int b : {int('*'), int('/'), int('?'), int('\\'), int('\n'), 0, int('x')}) {
      all += static_cast<char>(a);
      all += static_cast<char>(b);
    }
  for (const std::string& s : {all, std::string(kHostile), std::string("?\?/\n*/\\\n?\?=")}) {
    std::string body = c_escape(s);
    CHECK(inert_in_comment(body));
  }
}

TEST_CASE("c_escape: clang reads the literal back as the original bytes", "[c_text]") {
  // The compiler is the independent truth: a program printing the literal and the comment
  // must reproduce the bytes and must not see `injected`.
  test::TempDir dir("c-text");
  std::string text = std::string(kHostile) + "\n?\?/\\\n" + std::string(1, '\0') + "1\xff";
  std::string c = "#include <stdio.h>\n" + c_comment(text) +
                  "\nint main(void) { static const char s[] = " + c_string_literal(text) +
                  "; fwrite(s, 1, sizeof s - 1, stdout); return 0; }\n" + c_comment(text) + "\n";
  dir.write("t.c", c);
  REQUIRE(test::sh("cc -std=c99 -trigraphs -Werror -Wall -o '" + (dir / "t") + "' '" +
                   (dir / "t.c") + "'"));
  CHECK(test::run("'" + (dir / "t") + "'") == text);
  CHECK(test::run("nm '" + (dir / "t") + "'").find("injected") == std::string::npos);
}

namespace {

const char* kMiniTapset = R"(
function exit() %{ /* unprivileged */ _stp_exit(); %}
function f:long (x:long) { return x }
)";

// Passes 1-3 on `script` against a minimal tapset; returns the number of the pass that failed
// (0: none) and keeps the diagnostics.
struct Frontend {
  std::ostringstream err;
  Session s{err};
  parse::MacroLibrary lib;
  int failed_pass = 0;
  explicit Frontend(const std::string& script) {
    s.opts.last_pass = 3;
    auto* tf = parse::parse_file(s, s.add_source("mini.stp", kMiniTapset, true), lib);
    REQUIRE(tf != nullptr);
    s.tapset_files.push_back(tf);
    s.user_file = parse::parse_file(s, s.add_source("<input>", script, false), lib);
    if (!s.user_file) {
      failed_pass = 1;
      return;
    }
    std::ostringstream sink;
    print_pass1(s, sink);
    if (pass2_elaborate(s) != 0) {
      failed_pass = 2;
      return;
    }
    print_pass2(s, sink);
    if (pass3_translate(s) != 0) failed_pass = 3;
  }
};

std::string repeat(const std::string& s, int n) {
  std::string o;
  for (int i = 0; i < n; ++i) o += s;
  return o;
}

std::string chain(int terms) {
  std::string o = "1";
  for (int i = 1; i < terms; ++i) o += " + 1";
  return o;
}

std::string probe(const std::string& body) {
  return "global a\nprobe begin { x = 0; y = 1; s = \"\"; a[1] = 1\n" + body +
         "\nprintf(\"%d %d %s\", x, y, s); exit() }\n";
}

}  // namespace

TEST_CASE("c_integer_type: C integer words and common typedefs, nothing else", "[c_text]") {
  CHECK(codegen::c_integer_type("unsigned int") == "unsigned int");
  CHECK(codegen::c_integer_type("long long unsigned int") == "long long unsigned int");
  CHECK(codegen::c_integer_type("int32_t") == "int32_t");
  // typedefs that vmlinux.h or the C library define, as their fixed-width type (LP64)
  CHECK(codegen::c_integer_type("uintptr_t") == "uint64_t");
  CHECK(codegen::c_integer_type("intptr_t") == "int64_t");
  CHECK(codegen::c_integer_type("u_int32_t") == "uint32_t");
  CHECK(codegen::c_integer_type("pid_t") == "int32_t");
  CHECK(codegen::c_integer_type("const size_t") == "size_t");
  // a name of the program's own, or C text from a hostile DWARF name, gives nothing
  CHECK(codegen::c_integer_type("my_counter_t").empty());
  CHECK(codegen::c_integer_type("int); injected(); (int").find("injected") == std::string::npos);
}

TEST_CASE("nesting limit: chains and nests beyond it are one parse error with a location",
          "[depth]") {
  const int over = parse::kMaxNesting + 10, chain_over = parse::kMaxChain + 10;
  for (const std::string& body :
       {"x = " + chain(14000), "x = " + chain(100000), "x = " + repeat("(", over) + "1" +
        repeat(")", over), "x = " + repeat("- ", over) + "1", "x = " + repeat("!", over) + "1",
        repeat("if (y) ", over) + "x = 1", repeat("{", over) + "x = 1" + repeat("}", over),
        "x = " + repeat("y ? ", over) + "1" + repeat(" : 0", over),
        "x = " + repeat("f(", over) + "1" + repeat(")", over),
        "s = " + repeat("\"a\" . ", chain_over) + "\"a\"",
        "x = " + repeat("1 * ", chain_over) + "1", "x = " + repeat("1 || ", chain_over) + "1",
        "x = " + repeat("1 < ", chain_over) + "1",
        // a mix: half the nesting budget, then a chain of the other half and more
        repeat("if (y) ", parse::kMaxNesting / 2) + "x = " + chain(parse::kMaxChain / 2 + 10)}) {
    Frontend fe(probe(body));
    CHECK(fe.failed_pass == 1);
    std::string e = fe.err.str();
    CHECK(e.find("parse error: too deeply nested: more than " +
                 std::to_string(parse::kMaxNesting)) == 0);
    INFO(e.substr(0, 300));
    CHECK(e.find(" at <input>:") != std::string::npos);
    CHECK(fe.s.diag.parse_errors() == 1);
  }
}

TEST_CASE("nesting limit: inputs just under it go through passes 1-3", "[depth]") {
  const int under = parse::kMaxNesting - 20, chain_under = parse::kMaxChain - 30;
  for (const std::string& body :
       {"x = " + chain(under), "x = " + chain(chain_under),
        "s = " + repeat("\"a\" . ", chain_under) + "\"a\"", "x = " + repeat("(", under) + "1" + repeat(")", under),
        "x = " + repeat("- ", under) + "1", repeat("if (y) ", under) + "x = 1",
        repeat("{", under) + "x = 1" + repeat("}", under),
        "x = " + repeat("y ? ", under) + "1" + repeat(" : 0", under),
        "x = " + repeat("1 ? ", under) + "1" + repeat(" : 0", under),  // folded: not 2^depth
        "x = " + repeat("f(", under) + "1" + repeat(")", under),
        "x = " + repeat("a[", under) + "1" + repeat("]", under),
        "x = " + repeat("(1 + ", under / 2) + "1" + repeat(")", under / 2)}) {
    Frontend fe(probe(body));
    INFO(body.substr(0, 40));
    CHECK(fe.failed_pass == 0);
    CHECK(fe.err.str() == "");
  }
}
