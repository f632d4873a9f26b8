// The stack facts the BPF module, the native module and ukstap share (runtime/common/
// stp_stack_abi.h): the content hash and the deferred token, checked against truths from
// outside the header — the FNV-1a 64 reference vectors, snprintf, and the formulas written out
// again here. testsuite/e2e/stack_token.sh checks the tokens the BPF and native modules make.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/stp_records.h"
#include "common/stp_stack_abi.h"

namespace {
// FNV-1a 64 over bytes, written from its definition (http://www.isthe.com/chongo/tech/comp/fnv/).
uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t shared_bytes(const std::string& s) {
  uint64_t h = STP_FNV_OFFSET;
  for (unsigned char c : s) h = stp_fnv_u64(h, c);
  return h;
}
}  // namespace

TEST_CASE("stp_fnv_u64 over bytes is FNV-1a 64 (reference vectors)", "[token]") {
  // From the FNV reference test suite (test_fnv.c, fnv1a_64 of the plain strings).
  CHECK(shared_bytes("") == 0xcbf29ce484222325ull);
  CHECK(shared_bytes("a") == 0xaf63dc4c8601ec8cull);
  CHECK(shared_bytes("foobar") == 0x85944171f73967e8ull);
  for (const char* s : {"0x4005d4 0x400612 ", "", "\x1e\x1f", "0xffffffff81000174 "})
    CHECK(shared_bytes(s) == fnv1a64(s));
}

TEST_CASE("stp_stack_token mixes kind and flags and is never 0", "[token]") {
  const uint64_t h = 0x0123456789abcdefull;
  const uint64_t mix = (uint64_t{STP_USTACK_PCS} << 32) | uint32_t{_STP_SYM_SIMPLE};
  CHECK(stp_stack_token(h, STP_USTACK_PCS, _STP_SYM_SIMPLE) == (h ^ mix) * 0x100000001b3ull);
  CHECK(stp_stack_token(h, STP_USTACK_PCS, _STP_SYM_SIMPLE) !=
        stp_stack_token(h, STP_USTACK_HEXSTR, _STP_SYM_SIMPLE));
  CHECK(stp_stack_token(h, STP_USTACK_PCS, _STP_SYM_SIMPLE) !=
        stp_stack_token(h, STP_USTACK_PCS, _STP_SYM_FULL));
  // (h ^ v) * prime is 0 only for h == v (the prime is odd): that token becomes 1, because a
  // record's token 0 means "print now".
  const uint64_t zero_h = (uint64_t{STP_USTACK_SYM} << 32) | uint32_t{_STP_SYM_SYMBOL};
  CHECK(stp_stack_token(zero_h, STP_USTACK_SYM, _STP_SYM_SYMBOL) == 1);
  // Negative flags keep their low 32 bits only (the kind owns the high half).
  CHECK(stp_stack_token(h, 1, -1) == (h ^ ((uint64_t{1} << 32) | 0xffffffffull)) * 0x100000001b3ull);
}

TEST_CASE("stp_value_token = the token of one hashed value", "[token]") {
  const uint64_t off = 0xcbf29ce484222325ull, prime = 0x100000001b3ull;
  uint64_t want = ((off ^ 0x1234) * prime ^ ((uint64_t{STP_USTACK_SYM} << 32) | 16)) * prime;
  CHECK(stp_value_token(0x1234, STP_USTACK_SYM, _STP_SYM_SYMBOL) == want);
  // What symname(0x1234) returns in kernel and native probes alike (stack_token.sh), and what
  // the formula gives by hand.
  CHECK(want == 0x3782a36ddd1e09e9ull);
}

TEST_CASE("stp_token_str = \\x1e LETTER %016llx \\x1f", "[token]") {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{0xabc}, uint64_t{0xfedcba9876543210ull},
                     ~uint64_t{0}}) {
    for (char letter : {STP_TOKEN_USER, STP_TOKEN_KERNEL}) {
      char want[32], got[STP_TOKEN_LEN + 1 + 4];
      std::snprintf(want, sizeof want, "\x1e%c%016llx\x1f", letter, (unsigned long long)v);
      std::memset(got, 'x', sizeof got);
      stp_token_str(got, v, letter);
      CHECK(std::string(got) == want);
      CHECK(std::string(got).size() == STP_TOKEN_LEN);
      CHECK(got[STP_TOKEN_LEN] == '\0');
      CHECK(got[STP_TOKEN_LEN + 1] == 'x');  // nothing written past the NUL
    }
  }
}
