// 12-byte rows into the kernel's 4-byte rows and rule dictionary (see compact_table.h).
#include "unwind-tables/compact_table.h"

#include <algorithm>
#include <cstring>

#include "unwind-tables/table_compiler.h"

namespace ukstap::unwind {

namespace {
static_assert(sizeof(stp_cfi_row) == 12 && sizeof(stp_cfi_crow) == 4 && sizeof(stp_cfi_elem) == 8);
static_assert(STP_CFI_RULES <= 65536, "rule indexes are 16-bit");
uint64_t rule_key(const stp_cfi_row& row) {
  uint64_t k;
  std::memcpy(&k, reinterpret_cast<const char*>(&row) + 4, 8);  // every field after pc
  return k;
}
}  // namespace

uint32_t RuleDict::intern(const stp_cfi_row& row) {
  uint64_t k = rule_key(row);
  if (auto it = index_.find(k); it != index_.end()) return it->second;
  if (rules_.size() >= cap_) return UINT32_MAX;
  stp_cfi_row r = row;
  r.pc = 0;
  rules_.push_back(r);
  index_.emplace(k, (uint32_t)(rules_.size() - 1));
  return (uint32_t)(rules_.size() - 1);
}

void RuleDict::truncate(size_t n) {
  while (rules_.size() > n) {
    index_.erase(rule_key(rules_.back()));
    rules_.pop_back();
  }
}

bool compact(const CfiTable& t, RuleDict& d, CompactTable& out) {
  out.rows.clear();
  out.pages.clear();
  size_t n = t.rows.size();
  if (n == 0) return true;
  // The smallest page whose index takes at most one byte per row (8 bytes per page), up to the
  // 64 KiB a 16-bit in-page pc can address.
  uint64_t last_pc = t.rows.back().pc;
  uint32_t shift = STP_CFI_PAGE_SHIFT;
  while (shift < STP_CFI_PAGE_SHIFT_MAX && ((last_pc >> shift) + 1) * 8 > n) ++shift;
  out.page_shift = shift;
  size_t npages = (last_pc >> shift) + 1;
  out.rows.reserve(n);
  // A few hundred rules cover hundreds of thousands of rows: a small direct-mapped memo in front
  // of the dictionary's hash map answers most rows (cc1plus: 26 ms -> a few).
  struct Memo {
    uint64_t key = ~0ull;
    uint32_t rule = 0;
  } memo[1024];
  for (const stp_cfi_row& r : t.rows) {
    uint64_t k = rule_key(r);
    Memo& m = memo[(k ^ (k >> 17) ^ (k >> 37)) & 1023];
    uint32_t rule = m.key == k ? m.rule : d.intern(r);
    if (rule == UINT32_MAX) return false;
    m.key = k;
    m.rule = rule;
    out.rows.push_back({(uint16_t)(r.pc & ((1u << shift) - 1)), (uint16_t)rule});
  }
  // Page p: the last row starting at or before its first byte, the last row starting in it.
  out.pages.resize(npages);
  size_t cover = 0, last = 0;
  for (size_t p = 0; p < npages; ++p) {
    uint64_t start = (uint64_t)p << shift, end = start + (1ull << shift);
    while (cover + 1 < n && t.rows[cover + 1].pc <= start) ++cover;
    while (last + 1 < n && t.rows[last + 1].pc < end) ++last;
    out.pages[p].page.first = (uint32_t)cover;
    out.pages[p].page.last = (uint32_t)last;
  }
  return true;
}

stp_cfi_row expand(const CompactTable& c, const RuleDict& d, size_t i) {
  // The page row i starts in: the first whose last starting row is i or later.
  auto it = std::lower_bound(c.pages.begin(), c.pages.end(), i,
                             [](const stp_cfi_elem& e, size_t v) { return e.page.last < v; });
  uint64_t page = (uint64_t)(it - c.pages.begin());
  stp_cfi_row r = d.rules()[c.rows[i].rule];
  r.pc = (uint32_t)((page << c.page_shift) + c.rows[i].pc);
  return r;
}

const stp_cfi_row* compact_find(const CompactTable& c, const RuleDict& d, uint64_t rel) {
  uint64_t page = rel >> c.page_shift;
  if (page >= c.pages.size()) return nullptr;
  uint64_t off = rel & ((1ull << c.page_shift) - 1);
  // Rows first+1 .. last start in this page: their in-page pcs order them.
  int64_t ans = c.pages[page].page.first, lo = ans + 1, hi = c.pages[page].page.last;
  for (int it = 0; it < 32 && lo <= hi; ++it) {  // the kernel's bpf_loop(32, ...)
    int64_t mid = lo + ((hi - lo) >> 1);
    if (c.rows[mid].pc <= off) {
      ans = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return &d.rules()[c.rows[ans].rule];
}

}  // namespace ukstap::unwind
