// unwind-tables/compact_table: the kernel's 4-byte rows and rule dictionary against the
// 12-byte rows the compiler makes (which test_cfi_table.cpp checks against readelf's
// --debug-dump=frames-interp). Every row of libc's and cc1plus's tables must come back
// byte for byte, and the kernel's search (mirrored by compact_find: page index, then a bounded
// binary search within the page) must find, at every row's first and last address, the row
// the 12-byte table's plain binary search finds. Also the size: ≤ 8 bytes per row for cc1plus
// with its page index and its rules.
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "unwind-tables/compact_table.h"
#include "unwind-tables/table_compiler.h"

using ukstap::unwind::CfiTable;
using ukstap::unwind::CompactTable;
using ukstap::unwind::RuleDict;

namespace {

bool same_rule(const stp_cfi_row& a, const stp_cfi_row& b) {
  return std::memcmp(reinterpret_cast<const char*>(&a) + 4, reinterpret_cast<const char*>(&b) + 4, 8) == 0;
}

// Round trip and lookups of one file's table; returns its bytes per code row in the kernel.
double check_file(const std::string& path, RuleDict& dict) {
  CfiTable t;
  std::string why;
  REQUIRE(ukstap::unwind::compile_cfi(path, t, why));
  REQUIRE(t.rows.size() > 1);
  size_t rules_before = dict.rules().size();
  CompactTable c;
  REQUIRE(ukstap::unwind::compact(t, dict, c));
  size_t bad = 0, bad_find = 0;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    stp_cfi_row e = ukstap::unwind::expand(c, dict, i);
    if (std::memcmp(&e, &t.rows[i], sizeof e) != 0) ++bad;
    // The row's first and last address (the next row's pc - 1), as the kernel searches them.
    uint64_t ends[2] = {t.rows[i].pc, i + 1 < t.rows.size() ? t.rows[i + 1].pc - 1ull : t.rows[i].pc};
    for (uint64_t rel : ends) {
      const stp_cfi_row* want = i + 1 < t.rows.size() ? ukstap::unwind::find_row(t, t.base + rel) : &t.rows[i];
      const stp_cfi_row* got = ukstap::unwind::compact_find(c, dict, rel);
      if (!want || !got || !same_rule(*want, *got)) ++bad_find;
    }
  }
  CHECK(bad == 0);
  CHECK(bad_find == 0);
  // Random addresses inside the table's range.
  std::mt19937_64 rng(42);
  uint64_t span = t.rows.back().pc;
  size_t bad_rand = 0;
  for (int k = 0; k < 100000; ++k) {
    uint64_t rel = rng() % span;
    const stp_cfi_row* want = ukstap::unwind::find_row(t, t.base + rel);
    const stp_cfi_row* got = ukstap::unwind::compact_find(c, dict, rel);
    if (!want || !got || !same_rule(*want, *got)) ++bad_rand;
  }
  CHECK(bad_rand == 0);
  // Past the last row's page: nothing (the kernel's "no FDE").
  CHECK(ukstap::unwind::compact_find(c, dict, (uint64_t)(c.pages.size()) << c.page_shift) == nullptr);
  double bytes = (double)c.elements() * sizeof(stp_cfi_elem) +
                 (double)(dict.rules().size() - rules_before) * 16;
  WARN(path << ": " << t.rows.size() << " rows (" << t.stats.rows << " code rows), "
            << c.pages.size() << " pages of " << (1u << c.page_shift) << " bytes, "
            << dict.rules().size() - rules_before << " new rules: " << bytes / (double)t.stats.rows
            << " bytes per code row in the kernel (12-byte form: 16 with the array's stride)");
  return bytes / (double)t.stats.rows;
}

}  // namespace

TEST_CASE("compact rows of libc and cc1plus round-trip and search as the 12-byte rows", "[cfi][compact]") {
  RuleDict dict;
  check_file("/lib/x86_64-linux-gnu/libc.so.6", dict);
  const char* cc1plus = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus";
  REQUIRE(access(cc1plus, R_OK) == 0);  // g++ is a build dependency
  double per_row = check_file(cc1plus, dict);
  CHECK(per_row <= 8.0);
}

TEST_CASE("the rule dictionary: shared, full, truncated", "[cfi][compact]") {
  CfiTable t;
  std::string why;
  REQUIRE(ukstap::unwind::compile_cfi("/lib/x86_64-linux-gnu/libc.so.6", t, why));
  RuleDict whole;
  CompactTable c;
  REQUIRE(ukstap::unwind::compact(t, whole, c));
  size_t n = whole.rules().size();
  // The same table again adds nothing.
  REQUIRE(ukstap::unwind::compact(t, whole, c));
  CHECK(whole.rules().size() == n);
  // A dictionary too small for libc's rules refuses it.
  RuleDict small((uint32_t)(n - 1));
  CHECK_FALSE(ukstap::unwind::compact(t, small, c));
  // Truncated back, it knows only the rules before the mark.
  whole.truncate(3);
  CHECK(whole.rules().size() == 3);
  CHECK(whole.intern(t.rows.back()) < 4);
}

// Figures for docs (not in make check): rows, bytes per row, compile and conversion time of big
// files. testsuite/unit/unit_tests "[.pool-figures]"
TEST_CASE("compact table figures of big files", "[.pool-figures]") {
  for (const char* f : {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus",
                        "/usr/lib/chromium/chromium", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"}) {
    if (access(f, R_OK) != 0) continue;
    CfiTable t;
    std::string why;
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(ukstap::unwind::compile_cfi(f, t, why));
    auto t1 = std::chrono::steady_clock::now();
    RuleDict dict;
    CompactTable c;
    REQUIRE(ukstap::unwind::compact(t, dict, c));
    auto t2 = std::chrono::steady_clock::now();
    double bytes = (double)c.elements() * 8 + (double)dict.rules().size() * 16;
    double compile_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    double compact_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
    WARN(f << ": " << t.stats.rows << " code rows, " << t.rows.size() << " with gaps, "
           << dict.rules().size() << " rules, " << c.pages.size() << " pages of " << (1u << c.page_shift)
           << " B; kernel " << bytes << " B = " << bytes / (double)t.stats.rows << " B/code row (before: "
           << t.rows.size() * 16 << " B in the pool); compile " << compile_ms << " ms, compact "
           << compact_ms << " ms");
  }
}
