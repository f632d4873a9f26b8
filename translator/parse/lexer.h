// The SystemTap lexer: bytes of one SourceFile -> tokens (allocated in the session arena).
//
// Command-line arguments are substituted here, as in stap: `$N` pastes the argument text into the
// input, `@N` pastes it as a quoted string literal ($# / @# the argument count). Tokens made from
// pasted text carry the location of the `$N` / `@N` that produced them.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ast/ast.h"

namespace ukstap::parse {

// True for the language's reserved words (probe global function private if else ...).
bool is_keyword(const std::string& word);
// True for the built-in @operators (@cast @defined @entry @perf @var @count ... @hist_log).
bool is_atword(const std::string& word_without_at);

class Lexer {
 public:
  // Why a Junk token is junk.
  enum class Junk { Unknown, UnclosedQuote, UnclosedEmbedded, InvalidArg, NestedArg };

  Lexer(ast::Arena& arena, const SourceFile* file, const std::vector<std::string>* args = nullptr);

  // The next token; the file's EndOfFile token (always the same pointer) at the end.
  const Token* scan();
  const Token* eof_token();

  // For Junk tokens: the diagnostic stap prints instead of the parser's message (with "at:"),
  // or "" for an unknown character (the parser's own message is kept).
  std::string junk_message(const Token* t) const;
  bool is_junk_with_message(const Token* t) const { return !junk_message(t).empty(); }
  // Whether whitespace or a comment came right before the token (probe point components such
  // as `sys*` are glued together only when adjacent).
  bool preceded_by_space(const Token* t) const { return t->spaced; }
  // Whether any token was produced at all (for "Input file is empty" vs "... after preprocessing").
  bool saw_tokens() const { return saw_tokens_; }

  // Convenience for tests: every token up to (not including) EOF.
  std::vector<const Token*> tokenize_all();

  size_t args_count() const { return args_ ? args_->size() : 0; }

 private:
  int peekc(size_t n = 0) const;
  int get();
  void put(const std::string& chars, const Location& loc);
  const Token* make(TokenKind kind, std::string text, const Location& loc, bool spaced);
  const Token* junk(Junk why, std::string text, const Location& loc, bool spaced);

  ast::Arena& arena_;
  const SourceFile* file_;
  const std::vector<std::string>* args_;
  std::string buf_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  // While > 0, characters come from pasted argument text and the cursor is frozen.
  size_t suspend_ = 0;
  int saved_line_ = 1, saved_col_ = 1;
  const Token* eof_ = nullptr;
  bool saw_tokens_ = false;
  std::unordered_map<const Token*, Junk> junk_;
};

// Quote a string as a stap string literal ("..." with \\ \" \n escapes).
std::string quote_string(const std::string& s);

}  // namespace ukstap::parse
