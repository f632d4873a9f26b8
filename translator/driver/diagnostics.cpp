#include "driver/diagnostics.h"

#include <ostream>

namespace ukstap {

Diagnostics::Diagnostics(std::ostream& err) : err_(err) {}

void Diagnostics::print_location(const Token* tok, const char* label, int label_indent,
                                 int source_indent, int caret_indent) {
  if (!tok) return;
  if (label) {
    err_ << std::string(label_indent, ' ') << label << ": " << describe_token(*tok)
         << "\n";
  }
  if (tok->loc.file) {
    int line_no = tok->loc.line;
    int column = tok->loc.column;
    std::string line = tok->loc.file->line_text(line_no);
    if (tok->kind == TokenKind::EndOfFile) {
      // The end of the input: show where the text stopped, just after its last character.
      while (line_no > 1 && line.find_first_not_of(" \t\r") == std::string::npos)
        line = tok->loc.file->line_text(--line_no);
      column = static_cast<int>(line.find_last_not_of(" \t\r") + 2);
      if (line.find_first_not_of(" \t\r") == std::string::npos) column = 1;
    }
    err_ << std::string(source_indent, ' ') << "source: " << line << "\n";
    // The caret line keeps the tabs of the source line so the caret lines up.
    std::string caret(caret_indent, ' ');
    for (int i = 0; i + 1 < column; ++i)
      caret += i < static_cast<int>(line.size()) && line[i] == '\t' ? '\t' : ' ';
    err_ << caret << "^\n";
  }
  // A token made by a macro expansion: name each invocation it came through, innermost first,
  // so an error inside a library macro (tapsets/*.stpm) still points at the script's line.
  for (const Token* from = tok->expanded_from; from; from = from->expanded_from) {
    err_ << std::string(source_indent, ' ') << "in expansion of macro: "
         << describe_token(*from) << "\n";
    if (from->loc.file) {
      std::string line = from->loc.file->line_text(from->loc.line);
      err_ << std::string(source_indent, ' ') << "source: " << line << "\n";
      std::string caret(caret_indent, ' ');
      for (int i = 0; i + 1 < from->loc.column && i < static_cast<int>(line.size()); ++i)
        caret += line[i] == '\t' ? '\t' : ' ';
      err_ << caret << "^\n";
    }
  }
}

bool Diagnostics::is_duplicate(const std::string& key, bool warning) {
  if (verbose > 0) return false;
  if (seen_.insert(key).second) return false;
  (warning ? suppressed_warnings_ : suppressed_errors_)++;
  return true;
}

void Diagnostics::parse_error(const ParseError& e) {
  ++parse_errors_;
  // Every message, and every link of a chain, names its file (stap drops a repeated one:
  // `at :1:15`; a reader of the second line cannot tell which file that is).
  err_ << "parse error: " << e.what() << "\n";
  if (e.own_token)
    print_location(e.tok, "at", 9, 5, 13);
  else
    print_location(e.tok, "saw", 8, 5, 13);
  err_ << "\n";
}

void Diagnostics::semantic_error(const SemanticError& e) {
  std::string key = std::string("E:") + e.what();
  if (e.tok) key += describe_token(*e.tok);
  if (is_duplicate(key, false)) return;
  ++semantic_errors_;
  for (const SemanticError* cur = &e; cur; cur = cur->chain.get()) {
    err_ << "semantic error: " << cur->what();
    if (cur->tok) err_ << ": " << describe_token(*cur->tok);
    err_ << "\n";
    if (cur->tok) {
      print_location(cur->tok, nullptr, 0, 8, 16);
    }
    err_ << "\n";
  }
}

void Diagnostics::warning(const std::string& msg, const Token* tok) {
  if (suppress_warnings) return;
  std::string key = "W:" + msg;
  if (tok) key += describe_token(*tok);
  if (is_duplicate(key, true)) return;
  ++warnings_;
  err_ << "WARNING: " << msg;
  if (tok) err_ << ": " << describe_token(*tok);
  err_ << "\n";
  if (tok) {
    print_location(tok, nullptr, 0, 1, 9);
  }
}

void Diagnostics::fatal(const std::string& msg) { err_ << "ukstap: " << msg << "\n"; }

void Diagnostics::pass_failed(int pass, const char* what) {
  err_ << "Pass " << pass << ": " << what << " failed.  [man error::pass" << pass << "]\n";
}

void Diagnostics::summarize_parse_errors() {
  if (parse_errors_ > 0)
    err_ << parse_errors_ << " parse error" << (parse_errors_ == 1 ? "" : "s") << ".\n";
}

void Diagnostics::summarize_semantic_errors() {
  if (suppressed_errors_ > 0) {
    err_ << "Number of similar error messages suppressed: " << suppressed_errors_ << ".\n"
         << "Rerun with -v to see them.\n";
  }
  if (suppressed_warnings_ > 0) {
    err_ << "Number of similar warning messages suppressed: " << suppressed_warnings_ << ".\n"
         << "Rerun with -v to see them.\n";
  }
}

}  // namespace ukstap
