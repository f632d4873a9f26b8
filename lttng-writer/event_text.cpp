// ukstap:event's values from a wire event (event_text.h).
#include "lttng-writer/event_text.h"

#include <cstdio>

namespace ukstap::lttng {

using ctf::FieldSpec;
using ctf::Type;

std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
    else if (c == '\n') o += "\\n";
    else if (c == '\t') o += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      o += b;
    } else o += static_cast<char>(c);
  }
  return o + "\"";
}

namespace {

std::string integer_text(uint64_t v, const FieldSpec& f) {
  char b[32];
  if (f.base == 16) std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  else if (f.base == 8) std::snprintf(b, sizeof b, "0%llo", (unsigned long long)v);
  else if (f.type == Type::Sint) std::snprintf(b, sizeof b, "%lld", (long long)(int64_t)v);
  else std::snprintf(b, sizeof b, "%llu", (unsigned long long)v);
  return b;
}

}  // namespace

void EventValues::read(ctf::Decoder& d, const FieldSpec& f, bool common) {
  std::string text;  // the value as `fields` shows it
  switch (f.type) {
    case Type::Sint:
    case Type::Uint: {
      uint64_t v = d.u64();
      if (common && f.name == "vpid") vpid = (int32_t)v;
      else if (common && f.name == "vtid") vtid = (int32_t)v;
      else if (common && f.name == "ip") ip = v;
      else text = integer_text(v, f);
      break;
    }
    case Type::String: {
      std::string s = d.str();
      if (common && f.name == "procname") procname = std::move(s);
      else text = quoted(s);
      break;
    }
    case Type::UintSeq: {
      uint32_t n = d.u32();
      std::vector<uint64_t> v;
      for (uint32_t i = 0; i < n && d.ok; ++i) v.push_back(d.u64());
      if (f.name == "callstack_user") ustack = std::move(v);
      else if (f.name == "callstack_kernel") kstack = std::move(v);
      else {
        text = "[";
        for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + integer_text(v[i], f);
        text += "]";
      }
      break;
    }
    case Type::StringSeq:
    case Type::SymbolSeq: {
      uint32_t n = d.u32();
      std::vector<std::string> v;
      for (uint32_t i = 0; i < n && d.ok; ++i) {
        if (f.type == Type::StringSeq) {
          v.push_back(d.str());
          continue;
        }
        uint32_t id = d.u32();
        // An id never sent as a Symbol: the stream is malformed, not a frame to invent.
        if (!symbols || id >= symbols->size()) {
          d.ok = false;
          return;
        }
        v.push_back((*symbols)[id]);
      }
      std::string* lines = f.name == "callstack_user_symbols" ? &usyms : f.name == "callstack_kernel_symbols" ? &ksyms : nullptr;
      if (lines) {
        for (size_t i = 0; i < v.size(); ++i) *lines += (i ? "\n" : "") + v[i];
      } else {
        text = "[";
        for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + quoted(v[i]);
        text += "]";
      }
      break;
    }
    default: d.ok = false; return;
  }
  if (!text.empty()) fields += (fields.empty() ? "" : ", ") + f.name + "=" + text;
}

ukstap_lttng_event EventValues::to_event() const {
  ukstap_lttng_event e{};
  e.name = name.c_str();
  e.hit_ns = hit_ns;
  e.cpu = cpu;
  e.vpid = vpid;
  e.vtid = vtid;
  e.procname = procname.c_str();
  e.ip = ip;
  e.ustack = ustack.data();
  e.n_ustack = (uint32_t)ustack.size();
  e.kstack = kstack.data();
  e.n_kstack = (uint32_t)kstack.size();
  e.usyms = usyms.c_str();
  e.ksyms = ksyms.c_str();
  e.fields = fields.c_str();
  return e;
}

}  // namespace ukstap::lttng
