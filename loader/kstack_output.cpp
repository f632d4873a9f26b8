// KSTACK records -> SystemTap's kernel backtrace and symbol texts (see kstack_output.h).
#include "loader/kstack_output.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/stp_records.h"
#include "common/stp_strings.h"
#include "loader/ksym.h"
#include "loader/stack_ids.h"
#include "loader/symbol_list.h"
#include "loader/stack_tokens.h"

namespace ukstap::loader {

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}


std::string payload_str(const unsigned char* p, size_t n) {
  if (n < 4) return "";
  uint32_t len;
  std::memcpy(&len, p, 4);
  return std::string(reinterpret_cast<const char*>(p) + 4, std::min<size_t>(len, n - 4));
}

}  // namespace

Frame KernelStacks::resolve(uint64_t pc, bool caller) {
  Frame f;
  f.addr = pc;
  f.kernel = true;
  const ksym::Symbol* s = syms_.lookup(caller && pc ? pc - 1 : pc);
  if (!s) {
    ++unresolved_frames;
    return f;
  }
  f.name = s->name;
  f.module = s->module;
  f.offset = pc - s->start;
  f.size = s->size;
  return f;
}

std::string KernelStacks::format_one(const Frame& f, int flags) {
  const uint64_t pc = f.addr;
  const bool s = !f.name.empty();
  std::string off = s ? hex(f.offset) : "";
  if (flags & _STP_SYM_SYMBOL) return s ? f.name : hex(pc);
  if (flags & _STP_SYM_MODULE) return s ? f.module : "<unknown>";
  if (flags & _STP_SYM_DATA)
    return s ? f.name + "+" + off + "/" + hex(f.size) + " [" + f.module + "]" : hex(pc);
  if (flags & _STP_SYM_BRIEF) return (s ? f.name + "+" + off : hex(pc)) + "\n";
  if (flags & _STP_SYM_SIMPLE) return (s ? f.name + "+" + off + " [" + f.module + "]" : hex(pc)) + "\n";
  if (s) return " " + hex(pc) + " : " + f.name + "+" + off + "/" + hex(f.size) + " [" + f.module + "]\n";
  return " " + hex(pc) + "\n";
}

void KernelStacks::walk(const std::vector<uint64_t>& pcs, int flags, std::vector<Frame>* out,
                        std::string* text) {
  ++stacks;
  for (size_t i = 0; i < pcs.size(); ++i) {
    ++frames;
    // Kernel text does not move and the table is read once: a frame depends on its pc, the
    // flags and whether it is a return address only. Profiles repeat the same frames.
    FrameKey key{pcs[i], (uint32_t)flags << 1 | (i > 0 ? 1u : 0u)};
    if (out) {  // a profile sample: Frames
      auto hit = frame_cache_.find(key);
      if (hit == frame_cache_.end()) {
        if (frame_cache_.size() > 200000) frame_cache_.clear();
        hit = frame_cache_.emplace(key, resolve(pcs[i], i > 0)).first;
      }
      if (hit->second.name.empty()) ++unresolved_frames;
      out->push_back(hit->second);
      if (text) *text += format_one(hit->second, flags);
      continue;
    }
    auto hit = text_cache_.find(key);
    if (hit == text_cache_.end()) {
      Frame f = resolve(pcs[i], i > 0);
      if (text_cache_.size() > 200000) text_cache_.clear();
      hit = text_cache_.emplace(key, CachedText{format_one(f, flags), f.name.empty()}).first;
    }
    if (hit->second.unresolved) ++unresolved_frames;
    if (text) *text += hit->second.text;
  }
}

// print_syms: what the tapset's loop did in stap: tokenize(list, " ") and, per token,
// sprintf(" %s : %s\n", tok, symdata(strtol(tok, 16))).
std::string KernelStacks::format_list(const std::string& list) {
  return format_symbol_list(list, [&](uint64_t addr) { return format_one(resolve(addr, false), _STP_SYM_DATA); });
}

std::string KernelStacks::no_stack(uint16_t probe_id, const std::string& native_pp) const {
  std::string pp = native_pp;
  if (probe_id != STP_USTACK_NATIVE_PROBE && probe_id < pps_.size()) pp = pps_[probe_id];
  return "<no kernel backtrace at " + pp + ">\n";
}

std::string KernelStacks::record(uint16_t flags, const stp_ustack& u, const unsigned char* p,
                                 size_t n) {
  return decode(flags, u, p, n, nullptr);
}

std::vector<Frame> KernelStacks::sample_frames(uint16_t flags, const stp_ustack& u,
                                               const unsigned char* p, size_t n) {
  std::vector<Frame> out;
  decode(flags, u, p, n, &out);
  return out;
}

std::string KernelStacks::decode(uint16_t flags, const stp_ustack& u, const unsigned char* p,
                                 size_t n, std::vector<Frame>* frames_out) {
  std::string text;
  std::string* text_out = frames_out ? nullptr : &text;
  switch (u.kind) {
    case STP_USTACK_NO_USER:
      // sprint_backtrace() there is "" (as sprint_ubacktrace() without user registers)
      if (!u.token) text = no_stack(u.probe_id, u.probe_id == STP_USTACK_NATIVE_PROBE ? payload_str(p, n) : "");
      break;
    case STP_USTACK_PCS: {
      std::vector<uint64_t> pcs(std::min<size_t>(u.nr, n / 8));
      if (!pcs.empty()) std::memcpy(pcs.data(), p, pcs.size() * 8);
      walk(pcs, flags, frames_out, text_out);
      break;
    }
    case STP_USTACK_HEXSTR:
      if (flags & _STP_SYM_LIST)
        text = format_list(payload_str(p, n));
      else
        walk(parse_hex_list(payload_str(p, n)), flags, frames_out, text_out);
      break;
    case STP_USTACK_SYM: {
      if (n < 8) break;
      uint64_t addr;
      std::memcpy(&addr, p, 8);
      text = format_one(resolve(addr, false), flags);
      break;
    }
    case STP_USTACK_ID: {
      if (n < 8) break;
      uint64_t id;
      std::memcpy(&id, p, 8);
      const StoredStack* st = stack_ids_ ? stack_ids_->find(id) : nullptr;
      if (!st)
        text = "<unknown stack id " + hex(id) + ">\n";
      else if (st->h.kind == STP_USTACK_NO_USER)
        text = no_stack(st->h.probe_id, "");
      else
        walk(st->pcs, flags, frames_out, text_out);
      break;
    }
    default:
      break;
  }
  if (frames_out) return "";  // a profile sample: the frames are the output
  if (!u.token) return text;
  tokens_[u.token] = text;
  return "";
}

std::string KernelStacks::expand(const std::string& s) const { return expand_tokens(s, 'K', tokens_); }

}  // namespace ukstap::loader
