#include "ctf-writer/statedump_out.h"

namespace ukstap::ctf {
namespace {

FieldSpec spec_of(const FieldDef& d) {
  FieldSpec s;
  s.name = d.name;
  switch (d.kind) {
    case FieldKind::U8: s.type = Type::Uint, s.bits = 8; break;
    case FieldKind::U32: s.type = Type::Uint, s.bits = 32; break;
    case FieldKind::U64: s.type = Type::Uint, s.bits = 64; break;
    case FieldKind::U64Hex: s.type = Type::Uint, s.bits = 64, s.base = 16; break;
    case FieldKind::String: s.type = Type::String; break;
    case FieldKind::U8SeqHex: s.type = Type::UintSeq, s.bits = 8, s.base = 16; break;
  }
  return s;
}

}  // namespace

uint32_t TraceStatedumpOut::define(const std::string& name, const std::vector<FieldDef>& fields) {
  std::vector<FieldSpec> specs;
  std::vector<FieldKind> kinds;
  for (const FieldDef& d : fields) {
    specs.push_back(spec_of(d));
    kinds.push_back(d.kind);
  }
  uint32_t id = trace_.define_class(name, specs);
  if (kinds_.size() <= id) kinds_.resize(id + 1);
  kinds_[id] = std::move(kinds);
  return id;
}

void TraceStatedumpOut::emit(uint32_t cls, uint64_t ts_ns, uint32_t cpu, int pid, int tid,
                             uint64_t ip, const std::vector<FieldValue>& values) {
  Encoder& e = trace_.begin_event(cls, ts_ns, cpu);
  common_(e, pid, tid, ip);
  const std::vector<FieldKind>& kinds = kinds_.at(cls);
  for (size_t i = 0; i < kinds.size(); ++i) {
    const FieldValue& v = values.at(i);
    switch (kinds[i]) {
      case FieldKind::String: e.str(v.s); break;
      case FieldKind::U8SeqHex:
        e.u32(static_cast<uint32_t>(v.bytes.size()));
        for (uint8_t b : v.bytes) e.u64(b);
        break;
      default: e.u64(v.u); break;
    }
  }
  trace_.end_event();
}

}  // namespace ukstap::ctf
