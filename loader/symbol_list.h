// print_syms / print_usyms: SystemTap's tapset loop, done in user space. Its loop was
// tokenize(list, " ") and, per token, sprintf(" %s : %s\n", tok, symdata(strtol(tok, 16))); here
// each token's address is read by the script's own strtol (common/stp_strings.h), so a token the
// script would misread is misread the same way.
#pragma once

#include <cstdint>
#include <string>

#include "common/stp_strings.h"

namespace ukstap::loader {

// symdata(addr) gives the text after " TOKEN : " for one address.
template <typename SymData>
std::string format_symbol_list(const std::string& list, SymData&& symdata) {
  std::string out;
  size_t i = 0;
  while (i < list.size()) {
    size_t j = list.find(' ', i);
    if (j == std::string::npos) j = list.size();
    if (j > i) {
      std::string tok = list.substr(i, j - i);
      std::string buf(tok, 0, 4095);
      buf.resize(4096, '\0');  // the parser indexes modulo its power-of-two capacity
      uint64_t addr = (uint64_t)stp_s_strtol(buf.c_str(), 16, 4096);
      out += " " + tok + " : " + symdata(addr) + "\n";
    }
    i = j + 1;
  }
  return out;
}

}  // namespace ukstap::loader
