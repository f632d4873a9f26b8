// Deferred tokens of the stack printers (ustack_output, kstack_output): a sprint_* string holds
// "\x1e" LETTER <16 hex digits> "\x1f" (U: user, K: kernel) until it is printed; a record
// defined what it stands for (RUNTIME-HOOKS.md).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/stp_stack_abi.h"

namespace ukstap::loader {

// s with every token of `letter` replaced by its text (unknown tokens: ""); other bytes, and
// tokens of other letters, unchanged.
inline std::string expand_tokens(const std::string& s, char letter,
                                 const std::unordered_map<uint64_t, std::string>& table) {
  if (s.find('\x1e') == std::string::npos) return s;
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t a = s.find('\x1e', i);
    if (a == std::string::npos || a + STP_TOKEN_LEN > s.size() || s[a + 1] != letter ||
        s[a + STP_TOKEN_LEN - 1] != '\x1f') {
      out.append(s, i, a == std::string::npos ? std::string::npos : a + 1 - i);
      if (a == std::string::npos) break;
      i = a + 1;
      continue;
    }
    out.append(s, i, a - i);
    uint64_t token = std::strtoull(s.substr(a + 2, 16).c_str(), nullptr, 16);
    auto it = table.find(token);
    if (it != table.end()) out += it->second;
    i = a + STP_TOKEN_LEN;
  }
  return out;
}

// "0x4005d4 0x400612 " -> addresses: what ubacktrace()/ucallers() and backtrace()/callers()
// produce, read back by print_ustack/print_stack and friends. Tokens that are not hex are skipped.
inline std::vector<uint64_t> parse_hex_list(const std::string& s) {
  std::vector<uint64_t> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\n' && s[j] != '\t') ++j;
    if (j > i) {
      std::string tok = s.substr(i, j - i);
      char* end = nullptr;
      uint64_t v = std::strtoull(tok.c_str(), &end, 16);
      if (end && *end == '\0') out.push_back(v);
    }
    i = j;
  }
  return out;
}

}  // namespace ukstap::loader
