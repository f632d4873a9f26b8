// A compiled table in the kernel's form (runtime/unwind/stp_cfi.h): 4-byte rows, each the row's
// pc within its page and the index of its rule in a dictionary shared by all loaded files, two
// to a pool element, behind the file's page index. The loader builds this from the 12-byte rows
// the compiler and the on-disk cache keep, and writes it into the BPF row pool; compact_find is
// the user-space mirror of the kernel's search (bpf/stp_bpf_frame_row.h) over the same data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "unwind/stp_cfi.h"

namespace ukstap::unwind {

struct CfiTable;

// Distinct rules (a struct stp_cfi_row's fields after pc; pc is 0 in the dictionary), each
// with its index, in the order they were first seen: the BPF array stp_cfi_rules.
class RuleDict {
 public:
  explicit RuleDict(uint32_t capacity = STP_CFI_RULES) : cap_(capacity) {}
  // The index of row's rule, added when new; UINT32_MAX when it is new and the dictionary full.
  uint32_t intern(const stp_cfi_row& row);
  const std::vector<stp_cfi_row>& rules() const { return rules_; }
  uint32_t capacity() const { return cap_; }
  // Forgets the rules from index n on (those of a table that was not loaded after all).
  void truncate(size_t n);

 private:
  uint32_t cap_;
  std::unordered_map<uint64_t, uint32_t> index_;  // the 8 rule bytes -> index
  std::vector<stp_cfi_row> rules_;
};

struct CompactTable {
  uint32_t page_shift = STP_CFI_PAGE_SHIFT;
  std::vector<stp_cfi_elem> pages;  // page p: {row covering its start, last row starting in it}
  std::vector<stp_cfi_crow> rows;   // pc: offset in the page the row starts in
  size_t elements() const { return pages.size() + (rows.size() + 1) / 2; }  // pool elements
};

// t's rows in the kernel's form, their rules interned in d. False when the dictionary fills.
bool compact(const CfiTable& t, RuleDict& d, CompactTable& out);

// Row i of c as the 12-byte form (full pc and rule).
stp_cfi_row expand(const CompactTable& c, const RuleDict& d, size_t i);

// The rule covering file-relative pc `rel` (vaddr - base) by the page index and a bounded
// binary search within the page, as the kernel does it; nullptr past the last page.
const stp_cfi_row* compact_find(const CompactTable& c, const RuleDict& d, uint64_t rel);

}  // namespace ukstap::unwind
