// loader/ksym (the /proc/kallsyms table) and loader/kstack_output (kernel
// backtrace texts, docs/STAP-FORMATS.md §4). Truth: a synthetic kallsyms file whose answers are written
// here by hand, and the real /proc/kallsyms read by sort(1) and awk, not by the table under test.
#include "test_util.h"

#include <catch2/catch.hpp>
#include <cinttypes>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/stp_records.h"
#include "loader/kstack_output.h"
#include "loader/ksym.h"
#include "loader/stack_ids.h"

using ukstap::ksym::Kallsyms;
using ukstap::ksym::Symbol;
using ukstap::loader::KernelStacks;
using ukstap::loader::StackIds;
using ukstap::loader::StoredStack;

namespace {

// Addresses out of order, aliases, padding symbols, an absolute symbol, a module, a bad line.
const char* kSynthetic =
    "ffffffff81000100 T beta\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81000000 t startup_64\n"
    "ffffffff810000f0 T __pfx_beta\n"
    "ffffffff81000200 W weak_alias\n"
    "ffffffff81000200 t __local_one\n"
    "ffffffff81000200 T gamma\n"
    "ffffffff81000200 T __pfx_gamma_is_not_a_prefix_of_itself\n"
    "ffffffff81000300 T last_core\n"
    "0000000000001000 A fixed_percpu_data\n"
    "not a line\n"
    "ffffffffc0001000 t mod_init_one\t[mymod]\n"
    "ffffffffc0001040 T mod_fn\t[mymod]\n"
    "ffffffffc0003000 t other_fn\t[othermod]\n";

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

// A KSTACK record as the BPF side makes it: struct stp_ustack + payload.
struct Rec {
  stp_ustack u{};
  std::vector<unsigned char> payload;
};
Rec pcs_rec(const std::vector<uint64_t>& pcs, uint64_t token = 0) {
  Rec r;
  r.u.kind = STP_USTACK_PCS;
  r.u.nr = (uint16_t)pcs.size();
  r.u.exact = r.u.nr;
  r.u.token = token;
  r.payload.resize(pcs.size() * 8);
  if (!pcs.empty()) std::memcpy(r.payload.data(), pcs.data(), pcs.size() * 8);
  return r;
}
Rec str_rec(int kind, const std::string& s, uint64_t token = 0) {
  Rec r;
  r.u.kind = (uint8_t)kind;
  r.u.token = token;
  r.u.probe_id = STP_USTACK_NATIVE_PROBE;
  uint32_t n = (uint32_t)s.size();
  r.payload.resize(STP_REC_STR_SIZE(n));
  std::memcpy(r.payload.data(), &n, 4);
  std::memcpy(r.payload.data() + 4, s.data(), n);
  return r;
}
Rec long_rec(int kind, uint64_t v, uint64_t token = 0) {
  Rec r;
  r.u.kind = (uint8_t)kind;
  r.u.nr = 1;
  r.u.token = token;
  r.payload.resize(8);
  std::memcpy(r.payload.data(), &v, 8);
  return r;
}
std::string print(KernelStacks& ks, int flags, const Rec& r) {
  return ks.record((uint16_t)flags, r.u, r.payload.data(), r.payload.size());
}

}  // namespace

TEST_CASE("kallsyms: one name per address, sizes to the next symbol of the module", "[ksym]") {
  Kallsyms k;
  k.parse(kSynthetic);
  CHECK_FALSE(k.hidden());
  // _text/startup_64 -> _text (global); beta; __pfx_beta; gamma (global, non-weak, fewest
  // underscores, non-padding); last_core; 3 module symbols. The absolute symbol is dropped.
  CHECK(k.size() == 8);

  const Symbol* s = k.lookup(0xffffffff81000000);
  REQUIRE(s);
  CHECK(s->name == "_text");
  CHECK(s->size == 0xf0);  // up to __pfx_beta: the padding ends the previous function
  CHECK(s->module == "kernel");

  s = k.lookup(0xffffffff810000f8);
  REQUIRE(s);
  CHECK(s->name == "__pfx_beta");
  CHECK(s->size == 0x10);

  s = k.lookup(0xffffffff81000174);
  REQUIRE(s);
  CHECK(s->name == "beta");
  CHECK(s->start == 0xffffffff81000100);
  CHECK(s->size == 0x100);

  s = k.lookup(0xffffffff81000200);
  REQUIRE(s);
  CHECK(s->name == "gamma");

  // The last symbol of the core kernel: size 0, found within 4 KiB of its start only.
  s = k.lookup(0xffffffff81000310);
  REQUIRE(s);
  CHECK(s->name == "last_core");
  CHECK(s->size == 0);
  CHECK(k.lookup(0xffffffff81001300) == nullptr);

  // Modules: sizes stay inside the module; names in brackets come without them.
  s = k.lookup(0xffffffffc0001010);
  REQUIRE(s);
  CHECK(s->name == "mod_init_one");
  CHECK(s->module == "mymod");
  CHECK(s->size == 0x40);
  s = k.lookup(0xffffffffc0001044);
  REQUIRE(s);
  CHECK(s->name == "mod_fn");
  CHECK(s->size == 0);  // the next symbol belongs to another module
  CHECK(k.lookup(0xffffffffc0002100) == nullptr);
  s = k.lookup(0xffffffffc0003001);
  REQUIRE(s);
  CHECK(s->module == "othermod");

  // Below every symbol, and the absolute symbol's address.
  CHECK(k.lookup(0xffffffff80000000) == nullptr);
  CHECK(k.lookup(0x1000) == nullptr);
}

TEST_CASE("kallsyms: all-zero addresses mean kptr_restrict hides them", "[ksym]") {
  Kallsyms k;
  k.parse("0000000000000000 T _text\n0000000000000000 t foo\t[mod]\n");
  CHECK(k.hidden());
  CHECK(k.size() == 0);
  CHECK(k.lookup(0xffffffff81000000) == nullptr);

  ukstap::test::TempDir d("ksym");
  std::string why;
  Kallsyms f;
  CHECK(f.load(d.write("kallsyms", kSynthetic), why));
  CHECK(f.size() == 8);
  Kallsyms missing;
  CHECK_FALSE(missing.load(d / "nonexistent", why));
  CHECK(why.find("cannot read") != std::string::npos);
}

TEST_CASE("kallsyms: the real /proc/kallsyms against sort and awk", "[ksym]") {
  Kallsyms k;
  std::string why;
  REQUIRE(k.load("/proc/kallsyms", why));
  if (k.hidden()) {
    WARN("/proc/kallsyms hides addresses here (kptr_restrict or not root): real-file checks skipped");
    return;
  }
  // Independent table: distinct addresses of the core kernel's named symbols (types t/T/w/W/d/D/
  // b/B/r/R/v/V), sorted numerically by sort(1); the size of each is the gap to the next line.
  std::string table = ukstap::test::run(
      "awk 'NF == 3 && $1 !~ /^0+$/ && $2 ~ /^[tTwWdDbBrRvV]$/ {print $1, $3}' /proc/kallsyms | "
      "LC_ALL=C sort -k1,1 | awk 'BEGIN {p = \"\"} { if ($1 != p) print $1; p = $1 }'");
  std::vector<uint64_t> starts;
  std::istringstream in(table);
  std::string line;
  while (std::getline(in, line)) starts.push_back(std::strtoull(line.c_str(), nullptr, 16));
  REQUIRE(starts.size() > 1000);
  // Names at each address (any alias is a right answer).
  std::string names = ukstap::test::run("awk 'NF == 3 {print $1, $3}' /proc/kallsyms");
  std::map<uint64_t, std::set<std::string>> at;
  std::istringstream nin(names);
  while (std::getline(nin, line)) {
    size_t sp = line.find(' ');
    if (sp != std::string::npos) at[std::strtoull(line.c_str(), nullptr, 16)].insert(line.substr(sp + 1));
  }

  std::mt19937_64 rnd(42);
  int checked = 0;
  for (int i = 0; i < 2000; ++i) {
    size_t j = rnd() % (starts.size() - 1);
    uint64_t start = starts[j], size = starts[j + 1] - start;
    uint64_t addr = start + rnd() % size;
    const Symbol* s = k.lookup(addr);
    INFO("address " << hex(addr) << " in [" << hex(start) << ", " << hex(start + size) << ")");
    REQUIRE(s);
    CHECK(s->start == start);
    CHECK(s->size == size);
    CHECK(s->module == "kernel");
    CHECK(at[start].count(s->name) == 1);
    ++checked;
  }
  CHECK(checked == 2000);

  // The syscall entry path every syscall stack ends in.
  for (const char* fn : {"do_syscall_64", "entry_SYSCALL_64"}) {
    uint64_t a = std::strtoull(
        ukstap::test::run(std::string("awk '$3 == \"") + fn + "\" {print $1; exit}' /proc/kallsyms").c_str(),
        nullptr, 16);
    REQUIRE(a != 0);
    const Symbol* s = k.lookup(a + 1);
    REQUIRE(s);
    CHECK(s->name == fn);
  }
}

TEST_CASE("kernel stacks: SystemTap's texts for each flag", "[ksym]") {
  Kallsyms k;
  k.parse(kSynthetic);
  KernelStacks ks(k);
  ks.set_probe_points({"kernel.trace(\"syscalls:sys_enter_getdents64\")"});
  // A leaf pc, then return addresses; the second one sits right after a call that ends gamma
  // (a return address names the byte before it), the third is in no symbol.
  std::vector<uint64_t> pcs = {0xffffffff81000174, 0xffffffff81000300, 0xffffffff80000010,
                               0xffffffffc0001044};
  CHECK(print(ks, _STP_SYM_FULL, pcs_rec(pcs)) ==
        " 0xffffffff81000174 : beta+0x74/0x100 [kernel]\n"
        " 0xffffffff81000300 : gamma+0x100/0x100 [kernel]\n"
        " 0xffffffff80000010\n"
        " 0xffffffffc0001044 : mod_fn+0x4/0x0 [mymod]\n");
  CHECK(print(ks, _STP_SYM_SIMPLE, pcs_rec(pcs)) ==
        "beta+0x74 [kernel]\ngamma+0x100 [kernel]\n0xffffffff80000010\nmod_fn+0x4 [mymod]\n");
  CHECK(print(ks, _STP_SYM_BRIEF, pcs_rec(pcs)) ==
        "beta+0x74\ngamma+0x100\n0xffffffff80000010\nmod_fn+0x4\n");
  CHECK(print(ks, _STP_SYM_SYMBOL, long_rec(STP_USTACK_SYM, 0xffffffff81000174)) == "beta");
  CHECK(print(ks, _STP_SYM_SYMBOL, long_rec(STP_USTACK_SYM, 0x10)) == "0x10");
  CHECK(print(ks, _STP_SYM_DATA, long_rec(STP_USTACK_SYM, 0xffffffff81000174)) ==
        "beta+0x74/0x100 [kernel]");
  CHECK(print(ks, _STP_SYM_DATA, long_rec(STP_USTACK_SYM, 0x10)) == "0x10");

  // print_stack(backtrace()) parses the hex list; print_syms prints each token as written.
  CHECK(print(ks, _STP_SYM_FULL, str_rec(STP_USTACK_HEXSTR, "0xffffffff81000174 0xffffffff81000300 ")) ==
        " 0xffffffff81000174 : beta+0x74/0x100 [kernel]\n"
        " 0xffffffff81000300 : gamma+0x100/0x100 [kernel]\n");
  CHECK(print(ks, _STP_SYM_LIST, str_rec(STP_USTACK_HEXSTR, "0xffffffff81000174  junk ffffffff81000100")) ==
        " 0xffffffff81000174 : beta+0x74/0x100 [kernel]\n"
        " junk : 0x0\n"
        " ffffffff81000100 : beta+0x0/0x100 [kernel]\n");

  // No kernel stack: the probe point, from the table or (native probes) from the record.
  Rec none;
  none.u.kind = STP_USTACK_NO_USER;
  none.u.probe_id = 0;
  CHECK(print(ks, _STP_SYM_FULL, none) ==
        "<no kernel backtrace at kernel.trace(\"syscalls:sys_enter_getdents64\")>\n");
  CHECK(print(ks, _STP_SYM_FULL, str_rec(STP_USTACK_NO_USER, "begin")) ==
        "<no kernel backtrace at begin>\n");

  // Tokens: a record with a token prints nothing and defines the token's text.
  CHECK(print(ks, _STP_SYM_SIMPLE, pcs_rec(pcs, 0xabc)) == "");
  std::string tok = std::string("\x1eK") + "0000000000000abc" + "\x1f";
  std::string utok = std::string("\x1eU") + "0000000000000abc" + "\x1f";
  CHECK(ks.expand("[" + tok + "]") ==
        "[beta+0x74 [kernel]\ngamma+0x100 [kernel]\n0xffffffff80000010\nmod_fn+0x4 [mymod]\n]");
  CHECK(ks.expand(utok) == utok);  // user tokens are not the kernel printer's
  CHECK(ks.expand("plain") == "plain");

  // Stack ids: read from the map (here: added by hand).
  StackIds ids(-1, 0);
  StoredStack st;
  st.h.kind = STP_USTACK_PCS;
  st.h.nr = 1;
  st.pcs = {0xffffffff81000174};
  ids.add(7, st);
  StoredStack no;
  no.h.kind = STP_USTACK_NO_USER;
  no.h.probe_id = 0;
  ids.add(8, no);
  ks.set_stack_ids(&ids);
  CHECK(print(ks, _STP_SYM_FULL, long_rec(STP_USTACK_ID, 7)) ==
        " 0xffffffff81000174 : beta+0x74/0x100 [kernel]\n");
  CHECK(print(ks, _STP_SYM_FULL, long_rec(STP_USTACK_ID, 8)) ==
        "<no kernel backtrace at kernel.trace(\"syscalls:sys_enter_getdents64\")>\n");
  CHECK(print(ks, _STP_SYM_FULL, long_rec(STP_USTACK_ID, 9)) == "<unknown stack id 0x9>\n");
}
