// The byte stream between ukstap and its CTF writer process (writer_process.h): ukstap describes
// the trace (clock, environment, common context), its event classes, then sends events; the
// writer turns each message into libbabeltrace2 trace-IR objects (bt_source.h). Host byte order,
// one process pair on one machine: no versioning.
//
// A message: uint32 body length, then the body, whose first byte is a Kind.
//   Init   u64 clock offset (ns of CLOCK_REALTIME at CLOCK_MONOTONIC 0), str clock name,
//          u32 n, n x (str key, str value) environment, u32 n, n x FieldSpec: the stream event
//          common context (vpid, vtid, ... in every event)
//   Class  u32 class id (dense, from 0), str event name, u32 n, n x FieldSpec
//   Event  u32 class id, u64 timestamp (clock cycles = ns), u32 cpu (its stream and packet
//          context cpu_id), the common-context values, then the class's field values, in order
//   Symbol u32 symbol id (dense, from 0), str text: a string that SymbolSeq values name by id
//          (a stack frame's "func+0xOFF/0xSIZE [module]": sent once, not with every event)
//   Discarded  u32 cpu, u64 timestamp, u64 count: events the ring buffer lost before that time
//          (the CPU's stream reports them as CTF discarded events)
// FieldSpec: u8 Type, u8 bits (8/16/32/64; integers and integer sequences), u8 base (2/8/10/16),
//            u8 Scope, str name
// Values: Sint/Uint: 8 bytes; String: str; UintSeq: u32 n, n x u64; StringSeq: u32 n, n x str;
//         SymbolSeq: u32 n, n x u32 symbol id (in the trace: a sequence of strings, as StringSeq).
// str: u32 length, bytes (no NUL).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ukstap::ctf {

enum class Kind : uint8_t { Init = 1, Class = 2, Event = 3, Symbol = 4, Discarded = 5 };
enum class Type : uint8_t { Sint = 1, Uint = 2, String = 3, UintSeq = 4, StringSeq = 5, SymbolSeq = 6 };
// Payload: the event's fields. Context: the event class's specific context. Common-context
// fields (Init) are every event's: LTTng's channel contexts (vpid, vtid, procname,
// callstack_user) live there. A sequence in a specific context makes babeltrace2 2.0.4's reader
// abort (ctf-meta-update-value-storing-indexes.c: `tgt_fc`), so callstacks go to the common
// context, as `lttng add-context -t callstack-user` puts them.
enum class Scope : uint8_t { Payload = 0, Context = 1 };

struct FieldSpec {
  Type type = Type::Sint;
  uint8_t bits = 64;
  uint8_t base = 10;
  Scope scope = Scope::Payload;
  std::string name;
};

// Appends the encodings to a message body.
struct Encoder {
  std::string b;
  void u8(uint8_t v) { b.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); }
  void u64(uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    b += s;
  }
  void spec(const FieldSpec& f) {
    u8(static_cast<uint8_t>(f.type));
    u8(f.bits);
    u8(f.base);
    u8(static_cast<uint8_t>(f.scope));
    str(f.name);
  }
};

// Reads a body; `ok` turns false at the first read past its end (the message is then dropped).
struct Decoder {
  const char* p;
  size_t n, off = 0;
  bool ok = true;
  bool need(size_t k) {
    if (!ok || off + k > n) ok = false;
    return ok;
  }
  uint8_t u8() { return need(1) ? static_cast<uint8_t>(p[off++]) : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    if (need(4)) std::memcpy(&v, p + off, 4), off += 4;
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    if (need(8)) std::memcpy(&v, p + off, 8), off += 8;
    return v;
  }
  std::string str() { return std::string(sv()); }
  // A str without a copy: valid while the body is.
  std::string_view sv() {
    uint32_t len = u32();
    if (!need(len)) return {};
    std::string_view s(p + off, len);
    off += len;
    return s;
  }
  FieldSpec spec() {
    FieldSpec f;
    f.type = static_cast<Type>(u8());
    f.bits = u8();
    f.base = u8();
    f.scope = static_cast<Scope>(u8());
    f.name = str();
    return f;
  }
};

// The reading side's framing: bytes as read(2) gives them in, complete message bodies out. A
// body (and the string_views decoded from it) stays valid until compact().
struct MessageReader {
  std::string buf;  // bytes read, not yet decoded from `pos`
  size_t pos = 0;
  void append(const char* p, size_t n) { buf.append(p, n); }
  // The next complete message's body into `d`; false while only part of one is buffered.
  bool next(Decoder& d) {
    if (buf.size() - pos < 4) return false;
    uint32_t len;
    std::memcpy(&len, buf.data() + pos, 4);
    if (buf.size() - pos - 4 < len) return false;
    d = Decoder{buf.data() + pos + 4, len};
    pos += 4 + len;
    return true;
  }
  // Drops the decoded bytes once all are decoded or 1 MiB of them is (not after every message:
  // each erase moves what is left).
  void compact() {
    if (pos > (1u << 20) || pos == buf.size()) {
      buf.erase(0, pos);
      pos = 0;
    }
  }
};

}  // namespace ukstap::ctf
