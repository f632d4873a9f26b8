#include "loader/stack_hex_tokens.h"

#include <cstdio>
#include <cstdlib>

#include "common/stp_stack_abi.h"

namespace ukstap::loader {

namespace {
std::string unknown_stack_id(uint64_t id) {
  char b[48];
  std::snprintf(b, sizeof b, "<unknown stack id 0x%llx>", (unsigned long long)id);
  return b;
}
}  // namespace

std::string hex_list_of(const StoredStack& st) {
  std::string out;
  char b[24];
  for (uint64_t pc : st.pcs) {
    std::snprintf(b, sizeof b, "0x%llx ", (unsigned long long)pc);
    out += b;
  }
  return out;
}

std::string expand_hexid_tokens(const std::string& s, const StackIds* ids,
                                 const StoredStack** only) {
  if (only) *only = nullptr;
  if (s.find('\x1e') == std::string::npos) return s;
  std::string out;
  size_t i = 0, found = 0;
  const StoredStack* last = nullptr;
  bool other_text = false;
  while (i < s.size()) {
    size_t a = s.find('\x1e', i);
    if (a == std::string::npos || a + STP_TOKEN_LEN > s.size() || s[a + 1] != STP_TOKEN_HEXID ||
        s[a + STP_TOKEN_LEN - 1] != STP_TOKEN_END) {
      size_t end = a == std::string::npos ? s.size() : a + 1;
      out.append(s, i, end - i);
      other_text = true;
      if (a == std::string::npos) break;
      i = a + 1;
      continue;
    }
    if (a > i) other_text = true;
    out.append(s, i, a - i);
    uint64_t id = std::strtoull(s.substr(a + 2, 16).c_str(), nullptr, 16);
    const StoredStack* st = ids ? ids->find(id) : nullptr;
    // A stack the kernel could not store (its map full, or no free element in NMI context)
    // says so, as ustack_id()'s does: never an empty key.
    if (st) out += hex_list_of(*st);
    else out += unknown_stack_id(id);
    last = st;
    ++found;
    i = a + STP_TOKEN_LEN;
  }
  if (only && found == 1 && !other_text) *only = last;
  return out;
}

}  // namespace ukstap::loader
