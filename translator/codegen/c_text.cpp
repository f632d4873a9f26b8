#include "codegen/c_text.h"

#include <cctype>
#include <cstdio>
#include <utility>

namespace ukstap::codegen {

std::string c_escape(std::string_view text) {
  std::string o;
  o.reserve(text.size() + 8);
  auto octal = [&](unsigned char ch) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\%03o", ch);
    o += buf;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(text[i]);
    char prev = i > 0 ? text[i - 1] : 0;
    char next = i + 1 < text.size() ? text[i + 1] : 0;
    switch (ch) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '?': o += "\\?"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      case '*':
        if (prev == '/' || next == '/') octal(ch); else o += '*';
        break;
      case '/':
        if (prev == '*' || next == '*') octal(ch); else o += '/';
        break;
      default:
        if (ch < 0x20 || ch >= 0x7f) octal(ch);
        else o += static_cast<char>(ch);
    }
  }
  return o;
}

std::string c_string_literal(std::string_view text) { return "\"" + c_escape(text) + "\""; }

std::string c_comment(std::string_view text) { return "/* " + c_escape(text) + " */"; }

std::string c_identifier(std::string_view name) {
  std::string o;
  o.reserve(name.size() + 1);
  if (!name.empty() && name[0] >= '0' && name[0] <= '9') o += '_';
  for (char ch : name) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_';
    o += ok ? ch : '_';
  }
  return o;
}

std::string c_integer_type(std::string_view dwarf_type) {
  static const char* const kWords[] = {
      "char",    "short",   "int",     "long",     "signed",   "unsigned", "_Bool",
      "int8_t",  "int16_t", "int32_t", "int64_t",  "uint8_t",  "uint16_t", "uint32_t",
      "uint64_t", "size_t", "ssize_t"};
  static const std::pair<const char*, const char*> kTypedefs[] = {
      {"intptr_t", "int64_t"},   {"uintptr_t", "uint64_t"}, {"ptrdiff_t", "int64_t"},
      {"intmax_t", "int64_t"},   {"uintmax_t", "uint64_t"}, {"off_t", "int64_t"},
      {"off64_t", "int64_t"},    {"loff_t", "int64_t"},     {"time_t", "int64_t"},
      {"pid_t", "int32_t"},      {"uid_t", "uint32_t"},     {"gid_t", "uint32_t"},
      {"mode_t", "uint32_t"},    {"u_int8_t", "uint8_t"},   {"u_int16_t", "uint16_t"},
      {"u_int32_t", "uint32_t"}, {"u_int64_t", "uint64_t"}, {"u8", "uint8_t"},
      {"u16", "uint16_t"},       {"u32", "uint32_t"},       {"u64", "uint64_t"},
      {"s8", "int8_t"},          {"s16", "int16_t"},        {"s32", "int32_t"},
      {"s64", "int64_t"}};
  std::string out;
  size_t i = 0;
  while (i < dwarf_type.size()) {
    size_t j = i;
    while (j < dwarf_type.size() && (std::isalnum(static_cast<unsigned char>(dwarf_type[j])) ||
                                     dwarf_type[j] == '_'))
      ++j;
    if (j == i) {
      ++i;
      continue;
    }
    std::string_view word = dwarf_type.substr(i, j - i);
    for (const char* w : kWords)
      if (word == w) out += (out.empty() ? "" : " ") + std::string(word);
    // The C library's and the kernel's common integer typedefs, as the fixed-width type they
    // are on the LP64 targets ukstap builds for (x86_64, arm64): their DWARF names are not
    // spliced into the C.
    for (const auto& [name, fixed] : kTypedefs)
      if (word == name) out += (out.empty() ? "" : " ") + std::string(fixed);
    i = j;
  }
  return out;
}

}  // namespace ukstap::codegen
