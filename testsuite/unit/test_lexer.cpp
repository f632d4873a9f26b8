// The lexer (translator/parse/lexer.cpp).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "driver/session.h"
#include "parse/lexer.h"

using namespace ukstap;
using ukstap::parse::Lexer;

namespace {

struct Lexed {
  std::ostringstream err;
  Session s{err};
  const SourceFile* src = nullptr;
  std::vector<std::string> args;
  std::unique_ptr<Lexer> lex;
  std::vector<const Token*> toks;
  Lexed(const std::string& text, std::vector<std::string> a = {}) : args(std::move(a)) {
    src = s.add_source("<input>", text, false);
    lex = std::make_unique<Lexer>(s.arena, src, &args);
    toks = lex->tokenize_all();
  }
  std::vector<std::string> texts() const {
    std::vector<std::string> r;
    for (auto* t : toks) r.push_back(t->text);
    return r;
  }
};

}  // namespace

TEST_CASE("lexer: identifiers, keywords and @words", "[lexer]") {
  Lexed l("probe foo_1 $var $$vars @cast @foo global private try catch string long");
  REQUIRE(l.toks.size() == 12);
  CHECK(l.toks[0]->kind == TokenKind::Keyword);
  CHECK(l.toks[1]->kind == TokenKind::Identifier);
  CHECK(l.toks[1]->text == "foo_1");
  CHECK(l.toks[2]->text == "$var");
  CHECK(l.toks[2]->kind == TokenKind::Identifier);
  CHECK(l.toks[3]->text == "$$vars");
  CHECK(l.toks[4]->kind == TokenKind::Operator);
  CHECK(l.toks[4]->text == "@cast");
  for (int i = 7; i < 12; ++i) CHECK(l.toks[i]->kind == TokenKind::Keyword);
}

TEST_CASE("lexer: operators, longest match", "[lexer]") {
  Lexed l("<<< >>> <<= >>= .= =~ !~ -> ++ -- && || == != <= >= %( %? %: %) << >> + . ;");
  std::vector<std::string> want = {"<<<", ">>>", "<<=", ">>=", ".=", "=~", "!~", "->",
                                   "++",  "--",  "&&",  "||",  "==", "!=", "<=", ">=",
                                   "%(",  "%?",  "%:",  "%)",  "<<", ">>", "+",  ".",  ";"};
  CHECK(l.texts() == want);
  for (auto* t : l.toks) CHECK(t->kind == TokenKind::Operator);
  Lexed m("a<<<b");
  CHECK(m.texts() == std::vector<std::string>{"a", "<<<", "b"});
}

TEST_CASE("lexer: numbers keep their text", "[lexer]") {
  Lexed l("0 42 0x1F 017 12abc");
  CHECK(l.texts() == std::vector<std::string>{"0", "42", "0x1F", "017", "12abc"});
  for (auto* t : l.toks) CHECK(t->kind == TokenKind::Number);
}

TEST_CASE("lexer: string escapes are decoded", "[lexer]") {
  Lexed l(R"("a\nb\t\\\"q\101\x41\0z")");
  REQUIRE(l.toks.size() == 1);
  CHECK(l.toks[0]->kind == TokenKind::String);
  CHECK(l.toks[0]->text == std::string("a\nb\t\\\"qAA\0z", 11));
}

TEST_CASE("lexer: unclosed string is junk with stap's message", "[lexer]") {
  Lexed l("x = \"abc\ny");
  REQUIRE(l.toks.size() == 4);
  CHECK(l.toks[2]->kind == TokenKind::Junk);
  CHECK(l.lex->junk_message(l.toks[2]) == "Could not find matching closing quote");
  CHECK(l.toks[2]->loc.column == 5);
  CHECK(l.toks[3]->text == "y");
}

TEST_CASE("lexer: comments and locations", "[lexer]") {
  Lexed l("# shell\n// c++\n  /* c\n */ x\t+ y");
  REQUIRE(l.toks.size() == 3);
  CHECK(l.toks[0]->loc.line == 4);
  CHECK(l.toks[0]->loc.column == 5);
  CHECK(l.toks[1]->loc.column == 7);  // a tab counts as one column
  CHECK(l.toks[2]->loc.column == 9);
  CHECK(l.lex->preceded_by_space(l.toks[0]));
}

TEST_CASE("lexer: adjacency for probe point wildcards", "[lexer]") {
  Lexed l("sys* a *");
  REQUIRE(l.toks.size() == 4);
  CHECK_FALSE(l.lex->preceded_by_space(l.toks[1]));
  CHECK(l.lex->preceded_by_space(l.toks[2]));
}

TEST_CASE("lexer: embedded code", "[lexer]") {
  Lexed l("%{ int x; /* pure */ %} y");
  REQUIRE(l.toks.size() == 2);
  CHECK(l.toks[0]->kind == TokenKind::EmbeddedCode);
  CHECK(l.toks[0]->text == " int x; /* pure */ ");
  Lexed u("%{ never closed");
  REQUIRE(u.toks.size() == 1);
  CHECK(u.toks[0]->kind == TokenKind::Junk);
  CHECK(u.lex->junk_message(u.toks[0]) ==
        "Could not find matching '%}' to close embedded function block");
}

TEST_CASE("lexer: command line arguments", "[lexer]") {
  Lexed l("x = $1 + @2; n = $#", {"12", "a\"b"});
  auto t = l.texts();
  REQUIRE(t.size() == 9);
  CHECK(t[2] == "12");
  CHECK(l.toks[2]->kind == TokenKind::Number);
  CHECK(l.toks[2]->loc.column == 5);
  CHECK(l.toks[4]->kind == TokenKind::String);
  CHECK(t[4] == "a\"b");
  CHECK(t[8] == "2");
  CHECK(l.toks[8]->loc.column == 18);

  Lexed e("$3 @0", {"1"});
  REQUIRE(e.toks.size() == 2);
  CHECK(e.toks[0]->kind == TokenKind::Junk);
  CHECK(e.lex->junk_message(e.toks[0]) == "command line argument out of range [1-1]");
  CHECK(e.toks[1]->kind == TokenKind::Junk);

  Lexed n("$1", {"$1"});
  REQUIRE(n.toks.size() == 1);
  CHECK(n.lex->junk_message(n.toks[0]) == "invalid nested substitution of command line arguments");

  Lexed multi("$1;", {"a + b"});
  CHECK(multi.texts() == std::vector<std::string>{"a", "+", "b", ";"});
  CHECK(multi.toks[3]->loc.column == 3);
}

TEST_CASE("lexer: unknown bytes are junk", "[lexer]") {
  Lexed l("a \x01 \xff");
  REQUIRE(l.toks.size() == 3);
  CHECK(l.toks[1]->kind == TokenKind::Junk);
  CHECK(l.toks[1]->text == "\\x01");
  CHECK(l.toks[2]->text == "\\xff");
  CHECK(l.lex->junk_message(l.toks[1]).empty());
}

TEST_CASE("lexer: EOF token is stable", "[lexer]") {
  Lexed l("a\n");
  const Token* e1 = l.lex->scan();
  const Token* e2 = l.lex->scan();
  CHECK(e1 == e2);
  CHECK(e1->kind == TokenKind::EndOfFile);
  CHECK(describe_token(*e1) == "<input> EOF");
}
