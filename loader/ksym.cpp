// Kernel symbols from /proc/kallsyms (see ksym.h).
#include "loader/ksym.h"
#include "driver/text_lines.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ukstap::ksym {

namespace {

struct Cand {
  uint64_t start;
  int rank;         // 0 global, 1 local, +2 weak
  bool padding;     // __pfx_/__cfi_
  size_t index;     // file order
  std::string_view name, module;
};

int underscores(std::string_view n) {
  size_t k = 0;
  while (k < n.size() && n[k] == '_') ++k;
  return (int)k;
}

bool is_padding(std::string_view n) {
  return n.substr(0, 6) == "__pfx_" || n.substr(0, 6) == "__cfi_";
}

bool parse_hex(std::string_view s, uint64_t& v) {
  if (s.empty() || s.size() > 16) return false;
  v = 0;
  for (char ch : s) {
    int d;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F') d = ch - 'A' + 10;
    else return false;
    v = v << 4 | (uint64_t)d;
  }
  return true;
}

}  // namespace

bool Kallsyms::load(const std::string& path, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  parse(ss.str());
  if (syms_.empty() && !hidden_) {
    why = path + " lists no symbols";
    return false;
  }
  return true;
}

void Kallsyms::parse(std::string_view text) {
  std::vector<Cand> cands;
  size_t lines = 0, zero = 0;
  for (std::string_view line : text_lines(text)) {
    // "ffffffff81000000 T _text" or "ffffffffc0a01000 t foo\t[ext4]"
    size_t a = line.find(' ');
    if (a == std::string_view::npos || a + 3 > line.size() || line[a + 2] != ' ') continue;
    uint64_t addr;
    if (!parse_hex(line.substr(0, a), addr)) continue;
    char type = line[a + 1];
    std::string_view rest = line.substr(a + 3), module = "kernel";
    size_t tab = rest.find('\t');
    if (tab != std::string_view::npos) {
      std::string_view m = rest.substr(tab + 1);
      rest = rest.substr(0, tab);
      if (m.size() >= 2 && m.front() == '[' && m.back() == ']') module = m.substr(1, m.size() - 2);
    }
    if (rest.empty()) continue;
    ++lines;
    if (addr == 0) {
      ++zero;
      continue;
    }
    // Absolute, undefined and debugging symbols name no code or data (per-CPU offsets, ...).
    if (std::strchr("aAuUnN?", type)) continue;
    bool weak = type == 'w' || type == 'W' || type == 'v' || type == 'V';
    bool global = type >= 'A' && type <= 'Z';
    cands.push_back({addr, (weak ? 2 : 0) + (global ? 0 : 1), is_padding(rest), cands.size(), rest, module});
  }
  hidden_ = lines > 0 && zero == lines;
  std::sort(cands.begin(), cands.end(), [](const Cand& x, const Cand& y) {
    if (x.start != y.start) return x.start < y.start;
    if (x.rank != y.rank) return x.rank < y.rank;
    if (x.padding != y.padding) return !x.padding;
    int ux = underscores(x.name), uy = underscores(y.name);
    if (ux != uy) return ux < uy;
    if (x.name.size() != y.name.size()) return x.name.size() > y.name.size();
    return x.index < y.index;
  });
  syms_.clear();
  syms_.reserve(cands.size());
  for (const Cand& c : cands)
    if (syms_.empty() || syms_.back().start != c.start)
      syms_.push_back({c.start, 0, std::string(c.name), std::string(c.module)});
  for (size_t i = 0; i + 1 < syms_.size(); ++i)
    if (syms_[i + 1].module == syms_[i].module) syms_[i].size = syms_[i + 1].start - syms_[i].start;
}

const Symbol* Kallsyms::find(const std::string& name) const {
  for (const Symbol& s : syms_)
    if (s.name == name && s.module == "kernel") return &s;
  return nullptr;
}

const Symbol* Kallsyms::lookup(uint64_t addr) const {
  auto it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                             [](uint64_t a, const Symbol& s) { return a < s.start; });
  if (it == syms_.begin()) return nullptr;
  const Symbol& s = *std::prev(it);
  uint64_t off = addr - s.start;
  if (s.size ? off < s.size : off < 4096) return &s;
  return nullptr;
}

}  // namespace ukstap::ksym
