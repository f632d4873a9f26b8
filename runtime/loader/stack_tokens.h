// Deferred tokens of the stack printers (ustack_output, kstack_output): a sprint_* string holds
// "\x1e" LETTER <16 hex digits> "\x1f" (U: user, K: kernel) until it is printed; a record
// defined what it stands for (RUNTIME-HOOKS.md).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "common/stp_records.h"

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

}  // namespace ukstap::loader
