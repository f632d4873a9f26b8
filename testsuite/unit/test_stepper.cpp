// The portable DWARF step (runtime/unwind/stp_cfi_step.h) and frame-pointer step
// (stp_fp_walk.h) — the code the BPF module runs — on synthetic stacks whose every byte the test
// wrote itself, so each expected register value is known independently of the stepper.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <map>

namespace {
// A fake user address space: 8-byte words at chosen addresses; anything else faults.
std::map<uint64_t, uint64_t> g_mem;
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
#include "unwind/stp_fp_walk.h"

namespace {
stp_cfi_row row(uint8_t cfa, int16_t cfa_off, uint8_t fp = STP_FP_SAME, int16_t fp_off = 0) {
  stp_cfi_row r{};
  r.cfa_kind = cfa;
  r.cfa_off = cfa_off;
  r.fp_kind = fp;
  r.fp_off = fp_off;
  return r;
}
stp_uregs regs(uint64_t pc, uint64_t sp, uint64_t fp) {
  stp_uregs r{};
  r.pc = pc;
  r.sp = sp;
  r.fp = fp;
  r.sp0 = sp;
  r.fp_valid = 1;
  r.exact_pc = 1;
  return r;
}
}  // namespace

TEST_CASE("stepper: CFA = sp + off, RA at CFA-8, fp saved at CFA+off", "[stepper]") {
  g_mem = {{0x7000 + 24, 0x401234}, {0x7000 + 16, 0x7777}};  // RA at CFA-8, saved fp at CFA-16
  stp_uregs r = regs(0x400100, 0x7000, 0x1111);
  uint32_t stop = 99;
  stp_cfi_row rw = row(STP_CFA_SP, 32, STP_FP_CFA_OFF, -16);
  REQUIRE(stp_cfi_step(&rw, &r, &stop) == 1);
  CHECK(r.pc == 0x401234);
  CHECK(r.sp == 0x7020);
  CHECK(r.fp == 0x7777);
  CHECK(r.exact_pc == 0);
}

TEST_CASE("stepper: CFA = fp + off keeps fp when it is the same value", "[stepper]") {
  g_mem = {{0x8010 - 8, 0x402000}};
  stp_uregs r = regs(0x400100, 0x7f00, 0x8000);
  uint32_t stop = 0;
  stp_cfi_row rw = row(STP_CFA_FP, 16);
  REQUIRE(stp_cfi_step(&rw, &r, &stop) == 1);
  CHECK(r.pc == 0x402000);
  CHECK(r.sp == 0x8010);
  CHECK(r.fp == 0x8000);
}

TEST_CASE("stepper: a scaled CFA offset (a 96 KiB frame: 6145 << 4 = 98320)", "[stepper]") {
  const uint64_t sp = 0x100000, cfa = sp + 98320;
  g_mem = {{cfa - 8, 0x403000}, {cfa - 16, 0x5555}};
  stp_uregs r = regs(0x400100, sp, 0x1111);
  uint32_t stop = 0;
  stp_cfi_row rw = row(STP_CFA_KIND_SHIFT(STP_CFA_SP, 4), 6145, STP_FP_CFA_OFF, -16);
  REQUIRE(stp_cfi_step(&rw, &r, &stop) == 1);
  CHECK(r.pc == 0x403000);
  CHECK(r.sp == cfa);
  CHECK(r.fp == 0x5555);
}

TEST_CASE("stepper: an rbx-based CFA, rbx restored from where a callee saved it", "[stepper]") {
  // Callee (leaf): CFA = sp + 16, rbx saved at CFA-16. Its caller realigned its stack: CFA =
  // rbx + 56 (ld.so's _dl_runtime_resolve_xsavec).
  const uint64_t sp = 0x7000, cfa1 = sp + 16, rbx = 0x7400, cfa2 = rbx + 56;
  g_mem = {{cfa1 - 8, 0x401000}, {cfa1 - 16, rbx}, {cfa2 - 8, 0x402000}};
  stp_uregs r = regs(0x400100, sp, 0x1111);
  r.bx = 0xdead;  // the leaf's own rbx: the callee's value, not the caller's
  r.bx_valid = 1;
  uint32_t stop = 0;
  stp_cfi_row callee = row(STP_CFA_SP, 16);
  callee.bx_off = -16;
  REQUIRE(stp_cfi_step(&callee, &r, &stop) == 1);
  CHECK(r.bx == rbx);
  CHECK(r.bx_valid == 1);
  stp_cfi_row caller = row(STP_CFA_BX, 56);
  REQUIRE(stp_cfi_step(&caller, &r, &stop) == 1);
  CHECK(r.pc == 0x402000);
  CHECK(r.sp == cfa2);

  SECTION("a frame whose rbx rule is not kept makes rbx unknown: the rbx-based step stops") {
    stp_uregs u = regs(0x400100, sp, 0x1111);
    u.bx_valid = 1;
    callee.bx_off = STP_BX_UNKNOWN;
    REQUIRE(stp_cfi_step(&callee, &u, &stop) == 1);
    CHECK(u.bx_valid == 0);
    CHECK(stp_cfi_step(&caller, &u, &stop) == 0);
    CHECK(stop == STP_STOP_UNTRUSTED);
  }
}

TEST_CASE("stepper: an fp-based CFA with an untrusted fp stops", "[stepper]") {
  stp_uregs r = regs(0x400100, 0x7f00, 0x8000);
  r.fp_valid = 0;
  uint32_t stop = 0;
  stp_cfi_row rw = row(STP_CFA_FP, 16);
  CHECK(stp_cfi_step(&rw, &r, &stop) == 0);
  CHECK(stop == STP_STOP_UNTRUSTED);
}

TEST_CASE("stepper: the PLT expression (sp + 8, + 8 past the push)", "[stepper]") {
  // .plt entry: 0 jmp *GOT; 6 push $n; 11 jmp PLT0. From offset 11 on, one more word is pushed.
  for (uint64_t off : {0u, 6u, 10u, 11u, 15u}) {
    uint64_t extra = off >= 11 ? 8 : 0;
    g_mem = {{0x7000 + 8 + extra - 8, 0x403000}};
    stp_uregs r = regs(0x401020 + off, 0x7000, 0x1);
    uint32_t stop = 0;
    stp_cfi_row rw = row(STP_CFA_PLT, 11);
    INFO("offset " << off);
    REQUIRE(stp_cfi_step(&rw, &r, &stop) == 1);
    CHECK(r.sp == 0x7008 + extra);
    CHECK(r.pc == 0x403000);
  }
}

TEST_CASE("stepper: a signal frame restores pc, sp, fp from the ucontext; pc is exact", "[stepper]") {
  uint64_t sp = 0x7000;
  g_mem = {{sp + STP_SIGCTX_RSP, 0x9000}, {sp + STP_SIGCTX_RIP, 0x405555}, {sp + STP_SIGCTX_RBP, 0x9100}};
  stp_uregs r = regs(0x7ffff7a00000, sp, 0x2);
  r.exact_pc = 0;
  uint32_t stop = 0;
  stp_cfi_row rw = row(STP_CFA_SIGNAL, 0);
  REQUIRE(stp_cfi_step(&rw, &r, &stop) == 1);
  CHECK(r.pc == 0x405555);
  CHECK(r.sp == 0x9000);
  CHECK(r.fp == 0x9100);
  CHECK(r.exact_pc == 1);
}

TEST_CASE("stepper: STOP, INVALID, a CFA that does not move up, a read fault", "[stepper]") {
  uint32_t stop = 0;
  stp_uregs r = regs(0x400100, 0x7000, 0x1);
  stp_cfi_row s = row(STP_CFA_STOP, 0);
  CHECK(stp_cfi_step(&s, &r, &stop) == 0);
  CHECK(stop == STP_STOP_END);

  stp_cfi_row inv = row(STP_CFA_INVALID, 0, 0, STP_INV_CFA_EXPR);
  CHECK(stp_cfi_step(&inv, &r, &stop) == 0);
  CHECK(stop == STP_STOP_INVALID_ROW);

  stp_cfi_row down = row(STP_CFA_SP, 0);  // CFA == sp: the walk would not advance
  CHECK(stp_cfi_step(&down, &r, &stop) == 0);
  CHECK(stop == STP_STOP_BAD_FRAME);

  g_mem.clear();  // nothing readable
  stp_cfi_row ok = row(STP_CFA_SP, 16);
  CHECK(stp_cfi_step(&ok, &r, &stop) == 0);
  CHECK(stop == STP_STOP_READ_FAULT);
  CHECK(r.pc == 0x400100);  // a failed step leaves the registers alone
}

TEST_CASE("stepper: a return address of 0 ends the walk", "[stepper]") {
  g_mem = {{0x7008, 0}};
  stp_uregs r = regs(0x400100, 0x7000, 0x1);
  uint32_t stop = 0;
  stp_cfi_row rw = row(STP_CFA_SP, 16);
  CHECK(stp_cfi_step(&rw, &r, &stop) == 0);
  CHECK(stop == STP_STOP_END);
}

TEST_CASE("frame-pointer step: a chain, then misaligned, downward and looping frames stop", "[stepper]") {
  // fp chain: 0x7100 -> 0x7200 -> 0
  g_mem = {{0x7100, 0x7200}, {0x7108, 0x401000}, {0x7200, 0}, {0x7208, 0x402000}};
  stp_fp_state st;
  stp_fp_init(&st, 0x7000, 0x7100);
  uint64_t ra = 0;
  REQUIRE(stp_fp_step(&st, &ra) == 1);
  CHECK(ra == 0x401000);
  REQUIRE(stp_fp_step(&st, &ra) == 1);
  CHECK(ra == 0x402000);
  CHECK(stp_fp_step(&st, &ra) == 0);
  CHECK(st.stop == STP_STOP_END);

  g_mem = {{0x7100, 0x7100}, {0x7108, 0x401000}};  // a frame pointing at itself
  stp_fp_init(&st, 0x7000, 0x7100);
  REQUIRE(stp_fp_step(&st, &ra) == 1);
  CHECK(stp_fp_step(&st, &ra) == 0);
  CHECK(st.stop == STP_STOP_BAD_FRAME);

  stp_fp_init(&st, 0x7000, 0x7103);  // misaligned
  CHECK(stp_fp_step(&st, &ra) == 0);
  CHECK(st.stop == STP_STOP_BAD_FRAME);

  stp_fp_init(&st, 0x7000, 0x6000);  // below the stack pointer
  CHECK(stp_fp_step(&st, &ra) == 0);
  CHECK(st.stop == STP_STOP_BAD_FRAME);
}
