#include "parse/lexer.h"

#include <cctype>
#include <cstdio>

namespace ukstap::parse {

static const char* const kKeywords[] = {
    "probe", "global", "private", "function", "if",     "else",     "for",  "foreach",
    "in",    "limit",  "return",  "delete",   "while",  "break",    "continue", "next",
    "string", "long",  "try",     "catch",
};

static const char* const kAtwords[] = {
    "cast", "defined", "probewrite", "entry", "perf", "var", "avg", "count", "sum", "min",
    "max", "hist_linear", "hist_log", "const", "variance", "kregister", "uregister", "kderef",
    "uderef",
};

bool is_keyword(const std::string& word) {
  for (const char* k : kKeywords)
    if (word == k) return true;
  return false;
}

bool is_atword(const std::string& word) {
  for (const char* k : kAtwords)
    if (word == k) return true;
  return false;
}

std::string quote_string(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      case '\r': r += "\\r"; break;
      default: r += c;
    }
  }
  return r + "\"";
}

Lexer::Lexer(ast::Arena& arena, const SourceFile* file, const std::vector<std::string>* args)
    : arena_(arena), file_(file), args_(args), buf_(file ? file->text : std::string()) {}

int Lexer::peekc(size_t n) const {
  if (pos_ + n >= buf_.size()) return -1;
  return static_cast<unsigned char>(buf_[pos_ + n]);
}

int Lexer::get() {
  int c = peekc();
  if (c < 0) return c;
  ++pos_;
  if (suspend_ > 0) {
    if (--suspend_ == 0) {
      line_ = saved_line_;
      col_ = saved_col_;
    }
  } else if (c == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  return c;
}

void Lexer::put(const std::string& chars, const Location& loc) {
  if (chars.empty()) return;
  buf_.insert(pos_, chars);
  if (suspend_ == 0) {
    saved_line_ = line_;
    saved_col_ = col_;
  }
  suspend_ += chars.size();
  line_ = loc.line;
  col_ = loc.column;
}

const Token* Lexer::make(TokenKind kind, std::string text, const Location& loc, bool spaced) {
  Token t;
  t.kind = kind;
  t.text = std::move(text);
  t.loc = loc;
  t.spaced = spaced;
  const Token* p = arena_.token(std::move(t));
  saw_tokens_ = true;
  return p;
}

const Token* Lexer::junk(Junk why, std::string text, const Location& loc, bool spaced) {
  const Token* p = make(TokenKind::Junk, std::move(text), loc, spaced);
  junk_[p] = why;
  return p;
}

const Token* Lexer::eof_token() {
  if (!eof_) {
    Token t;
    t.kind = TokenKind::EndOfFile;
    t.loc = Location{file_, line_, col_};
    eof_ = arena_.token(std::move(t));
  }
  return eof_;
}

std::string Lexer::junk_message(const Token* t) const {
  auto it = junk_.find(t);
  if (it == junk_.end()) return "";
  switch (it->second) {
    case Junk::NestedArg: return "invalid nested substitution of command line arguments";
    case Junk::InvalidArg:
      return "command line argument out of range [1-" + std::to_string(args_count()) + "]";
    case Junk::UnclosedQuote: return "Could not find matching closing quote";
    case Junk::UnclosedEmbedded:
      return "Could not find matching '%}' to close embedded function block";
    case Junk::Unknown: return "";
  }
  return "";
}

std::vector<const Token*> Lexer::tokenize_all() {
  std::vector<const Token*> r;
  for (;;) {
    const Token* t = scan();
    if (t->kind == TokenKind::EndOfFile) break;
    r.push_back(t);
  }
  return r;
}

static bool is_odigit(int c) { return c >= '0' && c <= '7'; }

const Token* Lexer::scan() {
  bool spaced = false;
  for (;;) {
    bool suspended = suspend_ > 0;
    Location loc{file_, line_, col_};
    int c = get();
    if (c < 0) return eof_token();
    if (std::isspace(c)) {
      spaced = true;
      continue;
    }
    int c2 = peekc();

    // Command-line arguments: $N raw, @N quoted; $# @# their count.
    if ((c == '$' || c == '@') && c2 == '#') {
      get();
      std::string text{static_cast<char>(c), '#'};
      if (suspended) return junk(Junk::NestedArg, text, loc, spaced);
      std::string n = std::to_string(args_count());
      put(c == '$' ? n : quote_string(n), loc);
      continue;
    }
    if ((c == '$' || c == '@') && c2 >= 0 && std::isdigit(c2)) {
      std::string text(1, static_cast<char>(c));
      size_t idx = 0;
      do {
        get();
        text.push_back(static_cast<char>(c2));
        idx = idx * 10 + static_cast<size_t>(c2 - '0');
        c2 = peekc();
      } while (c2 >= 0 && std::isdigit(c2) && idx <= args_count());
      if (suspended) return junk(Junk::NestedArg, text, loc, spaced);
      if (idx == 0 || idx - 1 >= args_count()) return junk(Junk::InvalidArg, text, loc, spaced);
      const std::string& arg = (*args_)[idx - 1];
      put(c == '$' ? arg : quote_string(arg), loc);
      continue;
    }

    if (std::isalpha(c) || c == '$' || c == '@' || c == '_') {
      std::string text(1, static_cast<char>(c));
      while (c2 >= 0 && (std::isalnum(c2) || c2 == '_' || c2 == '$')) {
        get();
        text.push_back(static_cast<char>(c2));
        c2 = peekc();
      }
      TokenKind kind = text[0] == '@'      ? TokenKind::Operator
                       : is_keyword(text) ? TokenKind::Keyword
                                          : TokenKind::Identifier;
      return make(kind, std::move(text), loc, spaced);
    }

    if (std::isdigit(c)) {
      std::string text(1, static_cast<char>(c));
      while (c2 >= 0 && std::isalnum(c2)) {
        get();
        text.push_back(static_cast<char>(c2));
        c2 = peekc();
      }
      return make(TokenKind::Number, std::move(text), loc, spaced);
    }

    if (c == '"') {
      std::string text;
      for (;;) {
        c = get();
        if (c < 0 || c == '\n') return junk(Junk::UnclosedQuote, "", loc, spaced);
        if (c == '"') break;
        if (c != '\\') {
          text.push_back(static_cast<char>(c));
          continue;
        }
        c = get();
        switch (c) {
          case -1: return junk(Junk::UnclosedQuote, "", loc, spaced);
          case 'a': text.push_back('\a'); break;
          case 'b': text.push_back('\b'); break;
          case 't': text.push_back('\t'); break;
          case 'n': text.push_back('\n'); break;
          case 'v': text.push_back('\v'); break;
          case 'f': text.push_back('\f'); break;
          case 'r': text.push_back('\r'); break;
          case 'x': {
            int v = 0, n = 0;
            while (n < 2 && peekc() >= 0 && std::isxdigit(peekc())) {
              int d = get();
              v = v * 16 + (std::isdigit(d) ? d - '0' : (std::tolower(d) - 'a' + 10));
              ++n;
            }
            if (n == 0)
              text.push_back('x');
            else
              text.push_back(static_cast<char>(v));
            break;
          }
          default:
            if (is_odigit(c)) {
              int v = c - '0', n = 1;
              while (n < 3 && is_odigit(peekc())) {
                v = v * 8 + (get() - '0');
                ++n;
              }
              text.push_back(static_cast<char>(v & 0xff));
            } else {
              text.push_back(static_cast<char>(c));  // \\ \" and unknown escapes
            }
        }
      }
      return make(TokenKind::String, std::move(text), loc, spaced);
    }

    if (std::ispunct(c)) {
      int c3 = peekc(1);
      if (c == '#') {  // shell comment
        while (c >= 0 && c != '\n') c = get();
        spaced = true;
        continue;
      }
      if (c == '/' && c2 == '/') {
        while (c >= 0 && c != '\n') c = get();
        spaced = true;
        continue;
      }
      if (c == '/' && c2 == '*') {
        get();
        int a = get(), b = get();
        while (b >= 0 && !(a == '*' && b == '/')) {
          a = b;
          b = get();
        }
        spaced = true;
        continue;
      }
      if (c == '%' && c2 == '{') {
        get();
        std::string text;
        int a = get(), b = get();
        while (b >= 0) {
          if (a == '%' && b == '}') return make(TokenKind::EmbeddedCode, std::move(text), loc, spaced);
          text.push_back(static_cast<char>(a));
          a = b;
          b = get();
        }
        return junk(Junk::UnclosedEmbedded, "", loc, spaced);
      }
      std::string text(1, static_cast<char>(c));
      if ((c == '<' && c2 == '<' && c3 == '<') || (c == '>' && c2 == '>' && c3 == '>') ||
          (c == '<' && c2 == '<' && c3 == '=') || (c == '>' && c2 == '>' && c3 == '=')) {
        text.push_back(static_cast<char>(get()));
        text.push_back(static_cast<char>(get()));
      } else {
        static const char* const two[] = {"==", "!=", "<=", ">=", "=~", "!~", "+=", "-=", "*=",
                                          "/=", "%=", "&=", "^=", "|=", ".=", "&&", "||", "++",
                                          "--", "->", "<<", ">>", "%(", "%?", "%:", "%)"};
        for (const char* op : two) {
          if (c == op[0] && c2 == op[1]) {
            text.push_back(static_cast<char>(get()));
            break;
          }
        }
      }
      return make(TokenKind::Operator, std::move(text), loc, spaced);
    }

    char hex[16];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    return junk(Junk::Unknown, hex, loc, spaced);
  }
}

}  // namespace ukstap::parse
