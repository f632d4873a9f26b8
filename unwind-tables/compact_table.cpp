// 12-byte rows into the kernel's 8-byte rows and rule dictionary (see compact_table.h).
#include "unwind-tables/compact_table.h"

#include <cstring>

#include "unwind-tables/table_compiler.h"

namespace ukstap::unwind {

namespace {
static_assert(sizeof(stp_cfi_row) == 12 && sizeof(stp_cfi_crow) == 8);
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
  out.rows.reserve(n);
  for (const stp_cfi_row& r : t.rows) {
    uint32_t rule = d.intern(r);
    if (rule == UINT32_MAX) return false;
    out.rows.push_back({r.pc, rule});
  }
  if (n == 0) return true;
  // idx[p]: the row covering page p's first byte; page p's rows are [idx[p], idx[p+1]].
  // The smallest page whose index takes at most one byte per row (8 bytes per page).
  uint32_t shift = STP_CFI_PAGE_SHIFT;
  while (shift < STP_CFI_PAGE_SHIFT_MAX && (((size_t)t.rows.back().pc >> shift) + 1) * 8 > n) ++shift;
  out.page_shift = shift;
  size_t npages = ((size_t)t.rows.back().pc >> shift) + 1;
  std::vector<uint32_t> idx(npages + 1);
  size_t r = 0;
  for (size_t p = 0; p < npages; ++p) {
    uint64_t start = (uint64_t)p << shift;
    while (r + 1 < n && t.rows[r + 1].pc <= start) ++r;
    idx[p] = (uint32_t)r;
  }
  idx[npages] = (uint32_t)(n - 1);
  out.pages.resize(npages);
  for (size_t p = 0; p < npages; ++p) out.pages[p] = {idx[p], idx[p + 1]};
  return true;
}

stp_cfi_row expand(const CompactTable& c, const RuleDict& d, size_t i) {
  stp_cfi_row r = d.rules()[c.rows[i].rule];
  r.pc = c.rows[i].pc;
  return r;
}

const stp_cfi_row* compact_find(const CompactTable& c, const RuleDict& d, uint64_t rel) {
  int64_t lo = 0, hi = (int64_t)c.rows.size() - 1, ans = -1;
  uint64_t page = rel >> c.page_shift;
  if (page < c.pages.size()) {
    lo = c.pages[page].pc;
    hi = c.pages[page].rule;
  }
  for (int it = 0; it < 32 && lo <= hi; ++it) {  // the kernel's bpf_loop(32, ...)
    int64_t mid = lo + ((hi - lo) >> 1);
    if (c.rows[mid].pc <= rel) {
      ans = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (ans < 0) return nullptr;
  return &d.rules()[c.rows[ans].rule];
}

}  // namespace ukstap::unwind
