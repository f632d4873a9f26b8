// Source positions and tokens. Every AST node keeps the token it came from, because
// SystemTap's diagnostics print "TYPE 'text' at FILE:LINE:COL" plus the source line.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ukstap {

// One script or tapset file, kept alive for the whole session so diagnostics can quote any
// line of it after parsing is done.
struct SourceFile {
  std::string name;  // "<input>" for -e and stdin, else the path as given
  std::string text;
  bool is_tapset = false;   // from a tapset directory (not the user's script)
  bool privileged = false;  // tapsets and -g scripts may use embedded code

  // The text of 1-based line `line`, without its newline ("" when out of range).
  std::string line_text(int line) const;
};

struct Location {
  const SourceFile* file = nullptr;
  int line = 0;  // 1-based
  int column = 0;  // 1-based, counted in bytes, a tab counts as one
};

enum class TokenKind {
  Identifier,
  Operator,
  String,
  Number,
  Keyword,
  Junk,
  EmbeddedCode,
  EndOfFile,
};

struct Token {
  TokenKind kind = TokenKind::Junk;
  std::string text;  // strings: unescaped content; embedded code: the text between %{ and %}
  Location loc;
  // When a token came out of a @define macro expansion, the token of the invocation site, so an
  // error inside a macro body can still point at the user's line. Null otherwise.
  const Token* expanded_from = nullptr;
  // Whitespace or a comment came before it in its file (the parser tells `a.b` from `a . b`).
  bool spaced = false;

  bool is(TokenKind k, const char* t) const { return kind == k && text == t; }
  bool is_op(const char* t) const { return is(TokenKind::Operator, t); }
  bool is_keyword(const char* t) const { return is(TokenKind::Keyword, t); }
};

// "identifier 'foo' at FILE:LINE:COL", "keyword at FILE:LINE:COL", "<input> EOF".
// prev_file: the file named by the previous message in a chain; when equal, the file name is
// dropped (stap prints "at :1:15").
std::string describe_token(const Token& tok, const SourceFile* prev_file = nullptr);

}  // namespace ukstap
