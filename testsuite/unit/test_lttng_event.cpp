// --lttng's writer: one wire event (ctf-writer/wire.h, encoded here with its Encoder as ukstap
// encodes it) -> ukstap:event's values (lttng-writer/event_text.h). Truths: the values put in,
// C's escape conventions for the quoted strings, printf's %#x / %d / %o for the integers.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "ctf-writer/wire.h"
#include "lttng-writer/event_text.h"

using namespace ukstap::ctf;
using ukstap::lttng::EventValues;
using ukstap::lttng::quoted;

namespace {

EventValues decode(const std::string& body, const std::vector<FieldSpec>& common, const std::vector<FieldSpec>& fields) {
  Decoder d{body.data(), body.size()};
  EventValues v;
  for (const FieldSpec& f : common) v.read(d, f, true);
  for (const FieldSpec& f : fields) v.read(d, f, false);
  REQUIRE(d.ok);
  REQUIRE(d.off == body.size());
  return v;
}

}  // namespace

TEST_CASE("ukstap:event: LTTng's context names become typed fields, the rest the fields text", "[lttng]") {
  std::vector<FieldSpec> common = {
      {Type::Sint, 32, 10, Scope::Payload, "vpid"},          {Type::Sint, 32, 10, Scope::Payload, "vtid"},
      {Type::String, 8, 10, Scope::Payload, "procname"},     {Type::Uint, 64, 16, Scope::Payload, "ip"},
      {Type::UintSeq, 64, 16, Scope::Payload, "callstack_user"}, {Type::UintSeq, 64, 16, Scope::Payload, "callstack_kernel"},
  };
  std::vector<FieldSpec> fields = {
      {Type::String, 8, 10, Scope::Payload, "filename"},
      {Type::Sint, 64, 10, Scope::Payload, "flags"},
      {Type::Uint, 64, 16, Scope::Payload, "addr"},
      {Type::Uint, 64, 8, Scope::Payload, "mode"},
      {Type::Uint, 64, 10, Scope::Payload, "count"},
      {Type::StringSeq, 8, 10, Scope::Payload, "callstack_user_symbols"},
  };
  Encoder e;
  e.u64((uint64_t)(int64_t)-1);  // vpid: signed 32-bit, sign-extended on the wire
  e.u64(4321);
  e.str("cat");
  e.u64(0x401234);
  e.u32(2), e.u64(0x401234), e.u64(0x7f0000001000);
  e.u32(0);
  e.str("a \"b\", c\\d\n\x01");
  e.u64((uint64_t)(int64_t)-5);
  e.u64(0xdeadbeef);
  e.u64(0755);
  e.u64(18446744073709551615ull);
  e.u32(2), e.str("leaf+0x4/0x10 [prog]"), e.str("main+0x20/0x40 [prog]");
  EventValues v = decode(e.b, common, fields);
  CHECK(v.vpid == -1);
  CHECK(v.vtid == 4321);
  CHECK(v.procname == "cat");
  CHECK(v.ip == 0x401234);
  CHECK(v.ustack == std::vector<uint64_t>{0x401234, 0x7f0000001000});
  CHECK(v.kstack.empty());
  CHECK(v.usyms == "leaf+0x4/0x10 [prog]\nmain+0x20/0x40 [prog]");
  CHECK(v.ksyms.empty());
  CHECK(v.fields ==
        "filename=\"a \\\"b\\\", c\\\\d\\n\\x01\", flags=-5, addr=0xdeadbeef, mode=0755, count=18446744073709551615");

  ukstap_lttng_event ev = v.to_event();
  CHECK(ev.n_ustack == 2);
  CHECK(ev.ustack[1] == 0x7f0000001000);
  CHECK(ev.n_kstack == 0);
  CHECK(std::strcmp(ev.fields, v.fields.c_str()) == 0);
  CHECK(std::strcmp(ev.procname, "cat") == 0);
}

TEST_CASE("ukstap:event: a field named like a context but in the payload stays a printed value", "[lttng]") {
  std::vector<FieldSpec> fields = {{Type::Sint, 64, 10, Scope::Payload, "vpid"}, {Type::String, 8, 10, Scope::Payload, "s"}};
  Encoder e;
  e.u64(7);
  e.str("");
  EventValues v = decode(e.b, {}, fields);
  CHECK(v.vpid == 0);
  CHECK(v.fields == "vpid=7, s=\"\"");
}

TEST_CASE("ukstap:event: a truncated event is refused", "[lttng]") {
  Encoder e;
  e.u32(3);  // a sequence of 3 with one element
  e.u64(1);
  Decoder d{e.b.data(), e.b.size()};
  EventValues v;
  v.read(d, {Type::UintSeq, 64, 16, Scope::Payload, "callstack_user"}, true);
  CHECK_FALSE(d.ok);
}

TEST_CASE("quoted: C escapes", "[lttng]") {
  CHECK(quoted("plain") == "\"plain\"");
  CHECK(quoted("tab\there") == "\"tab\\there\"");
  CHECK(quoted(std::string("\x7f", 1)) == "\"\\x7f\"");
  CHECK(quoted("\xc3\xa9") == "\"\xc3\xa9\"");  // UTF-8 passes
}

TEST_CASE("ukstap:event: frames sent as symbol ids (wire.h SymbolSeq) become their texts; an unknown id is refused", "[lttng]") {
  // ukstap's CTF path sends each frame text once (a Symbol message) and stacks as ids.
  const std::vector<std::string> symbols = {"main+0x20/0x40 [prog]", "leaf+0x4/0x10 [prog]"};
  FieldSpec spec{Type::SymbolSeq, 32, 10, Scope::Payload, "callstack_user_symbols"};
  Encoder e;
  e.u32(3), e.u32(1), e.u32(0), e.u32(1);
  Decoder d{e.b.data(), e.b.size()};
  EventValues v;
  v.symbols = &symbols;
  v.read(d, spec, false);
  REQUIRE(d.ok);
  CHECK(v.usyms == "leaf+0x4/0x10 [prog]\nmain+0x20/0x40 [prog]\nleaf+0x4/0x10 [prog]");
  CHECK(v.fields.empty());

  Encoder bad;
  bad.u32(1), bad.u32(2);  // id 2 was never sent
  Decoder d2{bad.b.data(), bad.b.size()};
  EventValues w;
  w.symbols = &symbols;
  w.read(d2, spec, false);
  CHECK_FALSE(d2.ok);
}
