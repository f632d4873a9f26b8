// The arm64 unwind rules (runtime/arch/stp_arch_arm64.h, the RA kinds of unwind/stp_cfi.h),
// tested natively: tables compiled from objects the Debian cross compiler builds here, checked
// row by row against binutils' `readelf --debug-dump=frames-interp` (it reads aarch64 too), then
// walked by the portable stepper over a fake stack laid out as the disassembled code would lay
// it out. Without aarch64-linux-gnu-gcc (scripts/install-deps installs it) the compiled-object
// tests warn and return; the hand-made-row tests always run.
#include "test_util.h"
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "arch/stp_arch_arm64.h"
#include "arch/stp_arch_x86_64.h"
#include "unwind-tables/table_compiler.h"

using ukstap::test::run;
using ukstap::test::sh;
using ukstap::test::TempDir;

namespace {
std::map<uint64_t, uint64_t> g_mem;  // fake user memory, 8-byte words; anything else faults
int fake_read(void* dst, size_t n, uint64_t addr) {
  for (size_t i = 0; i < n; i += 8) {
    auto it = g_mem.find(addr + i);
    if (it == g_mem.end()) return -14;
    std::memcpy(static_cast<char*>(dst) + i, &it->second, n - i < 8 ? n - i : 8);
  }
  return 0;
}
}  // namespace

#define STP_UNWIND_READ(dst, size, addr) fake_read((dst), (size), (uint64_t)(addr))
#include "unwind/stp_cfi_step.h"

using ukstap::unwind::CfiTable;
using ukstap::unwind::compile_cfi;
using ukstap::unwind::find_row;

namespace {

bool have_cross() { return std::system("command -v aarch64-linux-gnu-gcc >/dev/null 2>&1") == 0; }

// leaf() never touches the stack (its RA stays in x30), mid() calls leaf twice, outer() calls
// mid, vla() needs an x29-based CFA. Hidden visibility: direct `bl`s, no PLT in between.
const char* const kSource = R"(
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int mid(int x) { int v = leaf(x); return v + leaf(v); }
__attribute__((noinline)) int outer(int x) { return mid(x) + 2; }
extern void use(char*);
int vla(int n) { char b[n]; use(b); return b[0]; }
)";

// An arm64 ET_DYN built from kSource with `flags` (compile_cfi wants PT_LOADs, and libdw does
// not apply an ET_REL's .eh_frame relocations).
struct Arm64Lib {
  std::string dir, so;
  bool ok = false;
  explicit Arm64Lib(const std::string& flags) {
    char tmpl[] = "/tmp/ukstap-arm64-XXXXXX";
    dir = mkdtemp(tmpl);
    so = dir + "/t.so";
    FILE* f = std::fopen((dir + "/t.c").c_str(), "w");
    std::fputs(kSource, f);
    std::fclose(f);
    std::string cc = "aarch64-linux-gnu-gcc -O2 -fasynchronous-unwind-tables -fvisibility=hidden " +
                     flags + " -c '" + dir + "/t.c' -o '" + dir + "/t.o' && aarch64-linux-gnu-gcc " +
                     "-nostdlib -shared -o '" + so + "' '" + dir + "/t.o'";
    ok = std::system(cc.c_str()) == 0;
  }
  ~Arm64Lib() { std::system(("rm -rf '" + dir + "'").c_str()); }
  // Symbol value by name (readelf reads any ELF machine).
  uint64_t sym(const std::string& name) const {
    std::istringstream in(run("readelf -sW '" + so + "'"));
    for (std::string line; std::getline(in, line);) {
      std::istringstream ls(line);
      std::vector<std::string> t;
      for (std::string w; ls >> w;) t.push_back(w);
      if (t.size() >= 8 && t[7] == name && t[3] == "FUNC") return std::stoull(t[1], nullptr, 16);
    }
    return 0;
  }
  // Addresses of the instructions whose disassembly contains `what`, in order.
  std::vector<uint64_t> insns(const std::string& what) const {
    std::vector<uint64_t> out;
    std::istringstream in(run("aarch64-linux-gnu-objdump -d '" + so + "'"));
    for (std::string line; std::getline(in, line);)
      if (line.find(what) != std::string::npos && line.find(":\t") != std::string::npos)
        out.push_back(std::stoull(line, nullptr, 16));
    return out;
  }
};

// readelf's interpreted rows: [loc, end) and the CFA, x29 and ra columns ("" when absent). An
// FDE without instructions prints no rows: it has the CIE's initial row (CFA sp+0, nothing else).
struct RRow {
  uint64_t loc, end;
  std::string cfa, x29, ra;
};
std::vector<RRow> readelf_rows(const std::string& file) {
  std::istringstream in(run("readelf --debug-dump=frames-interp '" + file + "'"));
  std::vector<RRow> rows;
  std::vector<std::string> cols;
  uint64_t fde_start = 0, fde_end = 0;
  size_t fde_first = 0;
  bool in_fde = false;
  auto close = [&] {
    if (in_fde && fde_first == rows.size()) rows.push_back({fde_start, fde_end, "sp+0", "", ""});
    for (size_t i = fde_first; i < rows.size(); ++i)
      rows[i].end = i + 1 < rows.size() ? rows[i + 1].loc : fde_end;
    in_fde = false;
  };
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::vector<std::string> t;
    for (std::string w; ls >> w;) t.push_back(w);
    if (t.empty()) continue;
    size_t pc = line.find(" pc=");
    if (line.find(" FDE ") != std::string::npos && pc != std::string::npos) {
      close();
      fde_start = std::stoull(line.substr(pc + 4), nullptr, 16);
      fde_end = std::stoull(line.substr(line.find("..", pc) + 2), nullptr, 16);
      fde_first = rows.size();
      in_fde = true;
      cols.clear();
      continue;
    }
    if (line.find(" CIE ") != std::string::npos) {
      close();
      cols.clear();
      continue;
    }
    if (t[0] == "LOC") {
      cols = t;
      continue;
    }
    if (!in_fde || cols.empty() || t[0].size() != 16 || t.size() != cols.size()) continue;
    RRow r{std::stoull(t[0], nullptr, 16), 0, t[1], "", ""};
    for (size_t i = 2; i < cols.size(); ++i) {
      if (cols[i] == "x29") r.x29 = t[i];
      if (cols[i] == "ra") r.ra = t[i];
    }
    rows.push_back(r);
  }
  close();
  return rows;
}

// What readelf's row means in stp_cfi_row terms; "" when `row` says the same. readelf prints
// "u" for a column the CIE never mentions: on aarch64 that is the ABI's initial rule for x29
// and x30, same value (libdw's aarch64 backend; AAPCS64: x29 callee-saved, x30 holds the RA at
// entry) — so "u" means FP_SAME / RA_LR here.
std::string mismatch(const RRow& w, const stp_cfi_row* r) {
  if (!r) return "no row";
  char buf[200];
  std::snprintf(buf, sizeof buf, " (row: kind=%u cfa_off=%d fp=%u/%d ra=%u/%d)", r->cfa_kind,
                r->cfa_off, STP_ROW_FP_KIND(r), r->fp_off, STP_ROW_RA_KIND(r), r->ra_off);
  std::string got = buf;
  int off = 0;
  if (std::sscanf(w.cfa.c_str(), "sp+%d", &off) == 1) {
    if (r->cfa_kind != STP_CFA_SP || r->cfa_off != off) return "want CFA " + w.cfa + got;
  } else if (std::sscanf(w.cfa.c_str(), "x29+%d", &off) == 1) {
    if (r->cfa_kind != STP_CFA_FP || r->cfa_off != off) return "want CFA " + w.cfa + got;
  } else {
    return "unexpected CFA " + w.cfa;
  }
  if (w.x29.empty() || w.x29 == "u") {
    if (STP_ROW_FP_KIND(r) != STP_FP_SAME) return "want x29 same" + got;
  } else if (std::sscanf(w.x29.c_str(), "c%d", &off) == 1) {
    if (STP_ROW_FP_KIND(r) != STP_FP_CFA_OFF || r->fp_off != off) return "want x29 " + w.x29 + got;
  } else {
    return "unexpected x29 " + w.x29;
  }
  if (w.ra.empty() || w.ra == "u") {
    if (STP_ROW_RA_KIND(r) != STP_RA_LR) return "want ra in x30" + got;
  } else if (std::sscanf(w.ra.c_str(), "c%d", &off) == 1) {
    if (STP_ROW_RA_KIND(r) != STP_RA_CFA_OFF || r->ra_off != off) return "want ra " + w.ra + got;
  } else {
    return "unexpected ra " + w.ra;
  }
  return "";
}

// Every address of every readelf row (each instruction: rows change only at instructions)
// against the compiled table. `pac(vaddr)` says where the RA is signed: INVALID (PAC) there.
template <class Pac>
size_t compare_all(const std::string& so, const CfiTable& t, Pac pac) {
  auto rows = readelf_rows(so);
  REQUIRE(rows.size() >= 6);
  size_t n = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (uint64_t a = rows[i].loc; a < rows[i].end; a += 4, ++n) {
      const stp_cfi_row* r = find_row(t, a);
      INFO("vaddr " << std::hex << a << " readelf: " << rows[i].cfa << " " << rows[i].x29 << " "
                    << rows[i].ra);
      if (pac(a)) {
        REQUIRE(r);
        CHECK(r->cfa_kind == STP_CFA_INVALID);
        CHECK(r->fp_off == STP_INV_PAC);
      } else {
        CHECK(mismatch(rows[i], r) == "");
      }
    }
  }
  return n;
}

stp_cfi_row row(uint8_t cfa, int16_t cfa_off, uint8_t fp, int16_t fp_off, uint8_t ra,
                int16_t ra_off) {
  stp_cfi_row r{};
  r.cfa_kind = cfa;
  r.cfa_off = cfa_off;
  r.fp_kind = STP_FP_RA_KIND(fp, ra);
  r.fp_off = fp_off;
  r.ra_off = ra_off;
  return r;
}

// The row the walk would use for r (the caller's rule: pc-1 for a return address).
const stp_cfi_row* lookup(const CfiTable& t, const stp_uregs& r) {
  return find_row(t, r.pc - (r.exact_pc ? 0 : 1));
}

}  // namespace

TEST_CASE("arch: DWARF numbers and trust masks", "[arm64]") {
  CHECK(STP_ARM64_DWARF_SP == 31);
  CHECK(STP_ARM64_DWARF_FP == 29);
  CHECK(STP_ARM64_DWARF_RA == 30);
  CHECK(STP_ARM64_DWARF_LR == STP_ARM64_DWARF_RA);  // no separate pc column
  CHECK(STP_X86_64_DWARF_RA == 16);
  CHECK(sizeof(stp_cfi_row) == 12);
  for (int c = 0; c < STP_UCTX_NR; ++c) {
    CHECK(STP_ARM64_TRUST(c) == (STP_UREG_PC | STP_UREG_SP | STP_UREG_FP | STP_UREG_LR));
    CHECK(STP_X86_64_TRUST(c) == (STP_UREG_PC | STP_UREG_SP | STP_UREG_FP));
  }
  stp_uregs r{};
  STP_UREGS_FILL(&r, STP_UREG_PC | STP_UREG_SP, 0x1000, 0x7000, 0x7010, 0x2000);
  CHECK(r.pc == 0x1000);
  CHECK(r.sp0 == 0x7000);
  CHECK((r.fp == 0 && r.fp_valid == 0 && r.lr == 0 && r.lr_valid == 0));  // scrubbed
  CHECK(r.exact_pc == 1);
}

TEST_CASE("arm64 stepper on hand-made rows: RA in x30, RA at CFA+off, guards", "[arm64]") {
  uint32_t stop = 99;
  stp_uregs r{};
  STP_UREGS_FILL(&r, STP_ARM64_TRUST(STP_UCTX_UPROBE), 0x1004, 0x7000, 0x7100, 0x1234);

  // A leaf with no frame: CFA == sp is fine when the RA is in x30, and only once.
  stp_cfi_row leaf = row(STP_CFA_SP, 0, STP_FP_SAME, 0, STP_RA_LR, 0);
  REQUIRE(stp_cfi_step(&leaf, &r, &stop) == 1);
  CHECK((r.pc == 0x1234 && r.sp == 0x7000 && r.fp == 0x7100 && r.exact_pc == 0));
  CHECK(r.lr_valid == 0);
  CHECK(stp_cfi_step(&leaf, &r, &stop) == 0);  // x30 is gone after a call
  CHECK(stop == STP_STOP_UNTRUSTED);

  // x29/x30 at CFA-16/-8 after `stp x29, x30, [sp, #-16]!`.
  g_mem = {{0x7000, 0x7200}, {0x7008, 0x5678}};
  stp_cfi_row body = row(STP_CFA_SP, 16, STP_FP_CFA_OFF, -16, STP_RA_CFA_OFF, -8);
  REQUIRE(stp_cfi_step(&body, &r, &stop) == 1);
  CHECK((r.pc == 0x5678 && r.sp == 0x7010 && r.fp == 0x7200 && r.fp_valid == 1));

  // RA at CFA-16 (`str x30, [sp, #-16]!` of -fomit-frame-pointer code): not x86_64's CFA-8.
  g_mem = {{0x7010, 0x9abc}, {0x7018, 0xdead}};
  stp_cfi_row str = row(STP_CFA_SP, 16, STP_FP_SAME, 0, STP_RA_CFA_OFF, -16);
  REQUIRE(stp_cfi_step(&str, &r, &stop) == 1);
  CHECK((r.pc == 0x9abc && r.sp == 0x7020 && r.fp == 0x7200));

  // An RA_LR row still may not move the CFA down; an unknown RA kind is an invalid row.
  STP_UREGS_FILL(&r, STP_ARM64_TRUST_ALL, 0x1004, 0x7000, 0x7100, 0x1234);
  stp_cfi_row down = row(STP_CFA_SP, -16, STP_FP_SAME, 0, STP_RA_LR, 0);
  CHECK(stp_cfi_step(&down, &r, &stop) == 0);
  CHECK(stop == STP_STOP_BAD_FRAME);
  stp_cfi_row bad = row(STP_CFA_SP, 16, STP_FP_SAME, 0, 3, 0);
  CHECK(stp_cfi_step(&bad, &r, &stop) == 0);
  CHECK(stop == STP_STOP_INVALID_ROW);

  // x86_64 rows (RA kind 0) still mean *(CFA-8), whatever lr says.
  g_mem = {{0x7008, 0x4444}};
  stp_cfi_row x86 = row(STP_CFA_SP, 16, STP_FP_SAME, 0, STP_RA_CFA_M8, 0);
  REQUIRE(stp_cfi_step(&x86, &r, &stop) == 1);
  CHECK(r.pc == 0x4444);
}

TEST_CASE("arm64 leaf with an untrusted LR stops the walk", "[arm64]") {
  stp_uregs r{};
  // A context whose mask lacks LR: x30 is scrubbed, the RA_LR row cannot be evaluated.
  STP_UREGS_FILL(&r, STP_ARM64_TRUST_ALL & ~STP_UREG_LR, 0x1004, 0x7000, 0x7100, 0x1234);
  CHECK(r.lr == 0);
  stp_cfi_row leaf = row(STP_CFA_SP, 0, STP_FP_SAME, 0, STP_RA_LR, 0);
  uint32_t stop = 0;
  CHECK(stp_cfi_step(&leaf, &r, &stop) == 0);
  CHECK(stop == STP_STOP_UNTRUSTED);
  CHECK(r.pc == 0x1004);  // a failed step leaves the registers alone
  // Rows that do not need x30 still unwind.
  g_mem = {{0x7000, 0x7200}, {0x7008, 0x5678}};
  stp_cfi_row body = row(STP_CFA_SP, 16, STP_FP_CFA_OFF, -16, STP_RA_CFA_OFF, -8);
  REQUIRE(stp_cfi_step(&body, &r, &stop) == 1);
  CHECK(r.pc == 0x5678);
}

TEST_CASE("arm64 tables from cross-compiled objects match readelf", "[arm64]") {
  if (!have_cross()) {
    WARN("aarch64-linux-gnu-gcc not installed (scripts/install-deps): skipped");
    return;
  }
  for (const char* flags : {"-fomit-frame-pointer", "-fno-omit-frame-pointer"}) {
    INFO(flags);
    Arm64Lib lib(flags);
    REQUIRE(lib.ok);
    CfiTable t;
    std::string why;
    REQUIRE(compile_cfi(lib.so, t, why));
    CHECK(t.stats.invalid == 0);
    size_t n = compare_all(lib.so, t, [](uint64_t) { return false; });
    CHECK(n >= 20);
    // vla() keeps its CFA on x29 once sp moves by a run-time amount.
    const stp_cfi_row* r = find_row(t, lib.sym("vla") + 0x20);
    REQUIRE(r);
    CHECK(r->cfa_kind == STP_CFA_FP);
    WARN(ukstap::unwind::coverage_line(std::string("arm64 ") + flags, t) << "; " << n
                                                                         << " addresses checked");
  }
}

TEST_CASE("arm64 pointer authentication: signed-RA rows are INVALID (PAC)", "[arm64]") {
  if (!have_cross()) return;
  for (const char* flags : {"-mbranch-protection=pac-ret", "-mbranch-protection=pac-ret+b-key"}) {
    INFO(flags);
    Arm64Lib lib(std::string(flags) + " -fno-omit-frame-pointer");
    REQUIRE(lib.ok);
    CfiTable t;
    std::string why;
    REQUIRE(compile_cfi(lib.so, t, why));
    // Signed from after pac[ib]sp to after aut[ib]sp (readelf shows no sign state: objdump does).
    auto sign = lib.insns(std::string("\tpaci"));
    auto auth = lib.insns(std::string("\tauti"));
    REQUIRE(sign.size() >= 3);
    REQUIRE(sign.size() == auth.size());
    auto pac = [&](uint64_t a) {
      for (size_t i = 0; i < sign.size(); ++i)
        if (a >= sign[i] + 4 && a < auth[i] + 4) return true;
      return false;
    };
    compare_all(lib.so, t, pac);
    CHECK(t.stats.by_reason[STP_INV_PAC] > 0);
    // The entry instruction (before pac[ib]sp) still unwinds through x30.
    const stp_cfi_row* r = find_row(t, lib.sym("mid"));
    REQUIRE(r);
    CHECK(STP_ROW_RA_KIND(r) == STP_RA_LR);
    CHECK(ukstap::unwind::coverage_line("pac", t).find("signed RA (PAC)") != std::string::npos);
  }
}

TEST_CASE("arm64 3-deep walk over compiled rows: leaf in x30, x29/x30 saved, outer", "[arm64]") {
  if (!have_cross()) return;
  Arm64Lib lib("-fno-omit-frame-pointer");
  REQUIRE(lib.ok);
  CfiTable t;
  std::string why;
  REQUIRE(compile_cfi(lib.so, t, why));
  uint64_t leaf = lib.sym("leaf"), mid = lib.sym("mid"), outer = lib.sym("outer");
  REQUIRE((leaf && mid && outer));
  // Return addresses: the instruction after each `bl`.
  char b[64];
  std::snprintf(b, sizeof b, "bl\t%lx <leaf>", (unsigned long)leaf);
  auto bl_leaf = lib.insns(b);
  std::snprintf(b, sizeof b, "bl\t%lx <mid>", (unsigned long)mid);
  auto bl_mid = lib.insns(b);
  REQUIRE(bl_leaf.size() == 2);
  REQUIRE(bl_mid.size() == 1);
  uint64_t mid_ret = bl_leaf[0] + 4, outer_ret = bl_mid[0] + 4;

  // The stack as the code builds it. outer's caller: sp 0x10000, x29 0xbeef0, returns to 0x7777.
  // outer: stp x29, x30, [sp, #-16]!; mov x29, sp      -> frame at 0xfff0
  // mid:   stp x29, x30, [sp, #-16]!; mov x29, sp      -> frame at 0xffe0
  // leaf:  no stack, RA in x30; sampled at its 2nd instruction.
  g_mem = {{0xfff0, 0xbeef0}, {0xfff8, 0x7777}, {0xffe0, 0xfff0}, {0xffe8, outer_ret}};
  stp_uregs r{};
  STP_UREGS_FILL(&r, STP_ARM64_TRUST(STP_UCTX_TIMER_USER), leaf + 4, 0xffe0, 0xffe0, mid_ret);

  struct Want { uint64_t pc, sp, fp; };
  const Want want[] = {{mid_ret, 0xffe0, 0xffe0}, {outer_ret, 0xfff0, 0xfff0},
                       {0x7777, 0x10000, 0xbeef0}};
  uint32_t stop = 99;
  const stp_cfi_row* rw = lookup(t, r);
  REQUIRE(rw);
  CHECK(STP_ROW_RA_KIND(rw) == STP_RA_LR);
  for (const Want& w : want) {
    INFO("frame pc " << std::hex << r.pc);
    rw = lookup(t, r);
    REQUIRE(rw);
    REQUIRE(stp_cfi_step(rw, &r, &stop) == 1);
    CHECK(r.pc == w.pc);
    CHECK(r.sp == w.sp);
    CHECK(r.fp == w.fp);
    CHECK(r.exact_pc == 0);
  }
  CHECK(find_row(t, r.pc - 1) == nullptr);  // 0x7777 is not in the library: the walk ends here

  // The same chain with x30 untrusted stops at the leaf.
  STP_UREGS_FILL(&r, STP_ARM64_TRUST_ALL & ~STP_UREG_LR, leaf + 4, 0xffe0, 0xffe0, mid_ret);
  CHECK(stp_cfi_step(lookup(t, r), &r, &stop) == 0);
  CHECK(stop == STP_STOP_UNTRUSTED);

  // Sampled in mid's body instead (x30 already saved): x30 is not needed, the walk goes on.
  STP_UREGS_FILL(&r, STP_ARM64_TRUST_ALL & ~STP_UREG_LR, mid_ret, 0xffe0, 0xffe0, 0);
  REQUIRE(stp_cfi_step(lookup(t, r), &r, &stop) == 1);
  CHECK((r.pc == outer_ret && r.sp == 0xfff0 && r.fp == 0xfff0));
}

TEST_CASE("arm64 walk without frame pointers: RA at CFA-16, x29 untouched", "[arm64]") {
  if (!have_cross()) return;
  Arm64Lib lib("-fomit-frame-pointer");
  REQUIRE(lib.ok);
  CfiTable t;
  std::string why;
  REQUIRE(compile_cfi(lib.so, t, why));
  uint64_t leaf = lib.sym("leaf"), mid = lib.sym("mid");
  char b[64];
  std::snprintf(b, sizeof b, "bl\t%lx <leaf>", (unsigned long)leaf);
  auto bl_leaf = lib.insns(b);
  std::snprintf(b, sizeof b, "bl\t%lx <mid>", (unsigned long)mid);
  auto bl_mid = lib.insns(b);
  REQUIRE((bl_leaf.size() == 2 && bl_mid.size() == 1));
  uint64_t mid_ret = bl_leaf[1] + 4, outer_ret = bl_mid[0] + 4;
  // outer: str x30, [sp, #-16]! (frame 0xfff0); mid: the same (frame 0xffe0). x29 is some
  // unrelated value throughout.
  g_mem = {{0xfff0, 0x7777}, {0xffe0, outer_ret}};
  stp_uregs r{};
  STP_UREGS_FILL(&r, STP_ARM64_TRUST_ALL, leaf, 0xffe0, 0x42, mid_ret);
  uint32_t stop = 99;
  const uint64_t pcs[] = {mid_ret, outer_ret, 0x7777}, sps[] = {0xffe0, 0xfff0, 0x10000};
  for (int i = 0; i < 3; ++i) {
    const stp_cfi_row* rw = lookup(t, r);
    REQUIRE(rw);
    REQUIRE(stp_cfi_step(rw, &r, &stop) == 1);
    CHECK(r.pc == pcs[i]);
    CHECK(r.sp == sps[i]);
    CHECK(r.fp == 0x42);
  }
}
