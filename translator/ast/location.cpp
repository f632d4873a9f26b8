#include "ast/location.h"

namespace ukstap {

std::string SourceFile::line_text(int line) const {
  if (line < 1) return "";
  size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return "";
    ++pos;
  }
  size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

static const char* kind_name(TokenKind k) {
  switch (k) {
    case TokenKind::Identifier: return "identifier";
    case TokenKind::Operator: return "operator";
    case TokenKind::String: return "string";
    case TokenKind::Number: return "number";
    case TokenKind::Keyword: return "keyword";
    case TokenKind::Junk: return "junk";
    case TokenKind::EmbeddedCode: return "embedded-code";
    case TokenKind::EndOfFile: return "EOF";
  }
  return "junk";
}

std::string describe_token(const Token& tok, const SourceFile* prev_file) {
  std::string file = tok.loc.file ? tok.loc.file->name : "<input>";
  if (tok.kind == TokenKind::EndOfFile) return file + " EOF";
  std::string s = kind_name(tok.kind);
  if (tok.kind != TokenKind::Keyword && tok.kind != TokenKind::EmbeddedCode)
    s += " '" + tok.text + "'";
  s += " at ";
  if (!(prev_file && prev_file == tok.loc.file)) s += file;
  s += ":" + std::to_string(tok.loc.line) + ":" + std::to_string(tok.loc.column);
  return s;
}

}  // namespace ukstap
