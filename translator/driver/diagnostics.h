// SystemTap-format diagnostics (docs/STAP-FORMATS.md section 5).
//
//   parse error: expected literal string or number
//           saw: operator '}' at /tmp/e1.stp:3:1
//        source: }
//                ^
//
// Semantic errors may be chained ("while resolving probe point: ..." then the cause).
#pragma once

#include <iosfwd>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "ast/location.h"

namespace ukstap {

// Thrown by the parser for a syntax error. `own_token`: the error is about the token itself
// (printed as "at:"), not about what the parser expected to see ("saw:").
struct ParseError : std::runtime_error {
  ParseError(const std::string& msg, const Token* tok, bool own_token = false)
      : std::runtime_error(msg), tok(tok), own_token(own_token) {}
  const Token* tok;
  bool own_token;
};

// Thrown by elaboration. `chain` is the deeper cause, printed after this one.
struct SemanticError : std::runtime_error {
  SemanticError(const std::string& msg, const Token* tok = nullptr)
      : std::runtime_error(msg), tok(tok) {}
  SemanticError(const std::string& msg, const Token* tok, const SemanticError& cause)
      : std::runtime_error(msg), tok(tok), chain(std::make_shared<SemanticError>(cause)) {}
  const Token* tok;
  std::shared_ptr<SemanticError> chain;
};

class Diagnostics {
 public:
  explicit Diagnostics(std::ostream& err);

  void parse_error(const ParseError& e);
  void semantic_error(const SemanticError& e);
  void warning(const std::string& msg, const Token* tok = nullptr);
  // A one-line error not tied to a script location: "ukstap: MSG" (bad options, missing files).
  void fatal(const std::string& msg);
  // "Pass N: NAME failed.  [man error::passN]"
  void pass_failed(int pass, const char* what);

  // Prints "N parse error(s)." after pass 1, plus the suppressed-duplicates summary.
  void summarize_parse_errors();
  void summarize_semantic_errors();

  int parse_errors() const { return parse_errors_; }
  int semantic_errors() const { return semantic_errors_; }
  int warnings() const { return warnings_; }  // printed (not suppressed) warnings, for -W
  bool suppress_warnings = false;  // -w
  int verbose = 0;                 // -v: show duplicate messages too
  bool color = false;              // stderr is a tty and SYSTEMTAP_COLORS allows it

  std::ostream& stream() { return err_; }

 private:
  // Prints the token description and the source/caret lines with the given indents.
  void print_location(const Token* tok, const char* label, int label_indent, int source_indent,
                      int caret_indent);
  bool is_duplicate(const std::string& key, bool warning);

  std::ostream& err_;
  int parse_errors_ = 0;
  int semantic_errors_ = 0;
  int suppressed_errors_ = 0;
  int suppressed_warnings_ = 0;
  int warnings_ = 0;
  std::set<std::string> seen_;
};

}  // namespace ukstap
