// SDT argument operands (sdt_args.h).
#include "probes/sdt_args.h"

#include <cstdlib>
#include <sstream>
#include <vector>

namespace ukstap::probes {

namespace {

// "%rax", "%eax", "%ax", "%al", "%r8d", ... -> pt_regs index; -1 when unknown.
int reg_index(std::string r) {
  if (r.empty() || r[0] != '%') return -1;
  r = r.substr(1);
  // %ah..%dh (bits 8-15) are not listed: the argument reader takes a register's low bytes, so
  // one of them would read the wrong byte; such an operand is refused (-1) instead.
  static const char* const legacy[][4] = {
      {"rax", "eax", "ax", "al"}, {"rbx", "ebx", "bx", "bl"},
      {"rcx", "ecx", "cx", "cl"}, {"rdx", "edx", "dx", "dl"},
      {"rsi", "esi", "si", "sil"}, {"rdi", "edi", "di", "dil"},
      {"rbp", "ebp", "bp", "bpl"}, {"rsp", "esp", "sp", "spl"}};
  for (int i = 0; i < 8; ++i)
    for (const char* n : legacy[i])
      if (*n && r == n) return i;
  if (r == "rip") return 16;
  if (r.size() >= 2 && r[0] == 'r' && isdigit(static_cast<unsigned char>(r[1]))) {
    char* end = nullptr;
    long k = std::strtol(r.c_str() + 1, &end, 10);
    std::string suffix = end;
    if (k >= 8 && k <= 15 && (suffix.empty() || suffix == "d" || suffix == "w" || suffix == "b"))
      return static_cast<int>(k);
  }
  return -1;
}

}  // namespace

std::optional<SdtArg> parse_sdt_arg(const std::string& args, int n) {
  std::istringstream in(args);
  std::string a;
  for (int i = 1; i <= n; ++i)
    if (!(in >> a)) return std::nullopt;
  SdtArg out;
  size_t at = a.find('@');
  if (at != std::string::npos) {
    char* end = nullptr;
    long sz = std::strtol(a.c_str(), &end, 10);
    if (end != a.c_str() + at || sz == 0 || sz < -8 || sz > 8) return std::nullopt;
    out.size = static_cast<int>(sz);
    a = a.substr(at + 1);
  }
  if (a.empty()) return std::nullopt;
  if (a[0] == '$') {  // a constant
    char* end = nullptr;
    out.disp = std::strtoll(a.c_str() + 1, &end, 0);
    if (*end) return std::nullopt;
    return out;
  }
  if (a[0] == '%') {
    out.reg = reg_index(a);
    if (out.reg < 0) return std::nullopt;
    return out;
  }
  // DISP(%reg)
  size_t open = a.find('(');
  if (open == std::string::npos || a.back() != ')') return std::nullopt;
  std::string disp = a.substr(0, open), reg = a.substr(open + 1, a.size() - open - 2);
  if (!disp.empty()) {
    char* end = nullptr;
    out.disp = std::strtoll(disp.c_str(), &end, 0);
    if (*end) return std::nullopt;
  }
  out.reg = reg_index(reg);
  if (out.reg < 0) return std::nullopt;
  out.mem = true;
  return out;
}

}  // namespace ukstap::probes
