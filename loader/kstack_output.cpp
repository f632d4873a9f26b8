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

std::string KernelStacks::format_one(uint64_t pc, int flags, bool caller) {
  const ksym::Symbol* s = syms_.lookup(caller && pc ? pc - 1 : pc);
  if (!s) ++unresolved_frames;
  std::string off = s ? hex(pc - s->start) : "";
  if (flags & _STP_SYM_SYMBOL) return s ? s->name : hex(pc);
  if (flags & _STP_SYM_MODULE) return s ? s->module : "<unknown>";
  if (flags & _STP_SYM_DATA)
    return s ? s->name + "+" + off + "/" + hex(s->size) + " [" + s->module + "]" : hex(pc);
  if (flags & _STP_SYM_BRIEF) return (s ? s->name + "+" + off : hex(pc)) + "\n";
  if (flags & _STP_SYM_SIMPLE) return (s ? s->name + "+" + off + " [" + s->module + "]" : hex(pc)) + "\n";
  if (s) return " " + hex(pc) + " : " + s->name + "+" + off + "/" + hex(s->size) + " [" + s->module + "]\n";
  return " " + hex(pc) + "\n";
}

std::string KernelStacks::format_frames(const std::vector<uint64_t>& pcs, int flags) {
  std::string out;
  ++stacks;
  for (size_t i = 0; i < pcs.size(); ++i) {
    ++frames;
    // Kernel text does not move and the table is read once: a frame's text depends on its pc,
    // the flags and whether it is a return address only. Profiles repeat the same frames.
    FrameKey key{pcs[i], (uint32_t)flags << 1 | (i > 0 ? 1u : 0u)};
    auto hit = frame_cache_.find(key);
    if (hit != frame_cache_.end()) {
      if (hit->second.second) ++unresolved_frames;
      out += hit->second.first;
      continue;
    }
    uint64_t before = unresolved_frames;
    std::string text = format_one(pcs[i], flags, i > 0);
    if (frame_cache_.size() > 200000) frame_cache_.clear();
    frame_cache_.emplace(key, std::make_pair(text, unresolved_frames != before));
    out += text;
  }
  return out;
}

// print_syms: what the tapset's loop did in stap: tokenize(list, " ") and, per token,
// sprintf(" %s : %s\n", tok, symdata(strtol(tok, 16))).
std::string KernelStacks::format_list(const std::string& list) {
  std::string out;
  size_t i = 0;
  while (i < list.size()) {
    size_t j = list.find(' ', i);
    if (j == std::string::npos) j = list.size();
    if (j > i) {
      std::string tok = list.substr(i, j - i);
      std::string buf(tok, 0, 4095);
      buf.resize(4096, '\0');  // the parser indexes modulo its power-of-two capacity
      uint64_t addr = (uint64_t)stp_s_strtol(buf.c_str(), 16, 4096);
      out += " " + tok + " : " + format_one(addr, _STP_SYM_DATA, false) + "\n";
    }
    i = j + 1;
  }
  return out;
}

std::string KernelStacks::no_stack(uint16_t probe_id, const std::string& native_pp) const {
  std::string pp = native_pp;
  if (probe_id != STP_USTACK_NATIVE_PROBE && probe_id < pps_.size()) pp = pps_[probe_id];
  return "<no kernel backtrace at " + pp + ">\n";
}

std::string KernelStacks::record(uint16_t flags, const stp_ustack& u, const unsigned char* p,
                                 size_t n) {
  std::string text;
  switch (u.kind) {
    case STP_USTACK_NO_USER:
      // sprint_backtrace() there is "" (as sprint_ubacktrace() without user registers)
      if (!u.token) text = no_stack(u.probe_id, u.probe_id == STP_USTACK_NATIVE_PROBE ? payload_str(p, n) : "");
      break;
    case STP_USTACK_PCS: {
      std::vector<uint64_t> pcs(std::min<size_t>(u.nr, n / 8));
      if (!pcs.empty()) std::memcpy(pcs.data(), p, pcs.size() * 8);
      text = format_frames(pcs, flags);
      break;
    }
    case STP_USTACK_HEXSTR:
      if (flags & _STP_SYM_LIST)
        text = format_list(payload_str(p, n));
      else
        text = format_frames(parse_hex_list(payload_str(p, n)), flags);
      break;
    case STP_USTACK_SYM: {
      if (n < 8) break;
      uint64_t addr;
      std::memcpy(&addr, p, 8);
      text = format_one(addr, flags, false);
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
        text = format_frames(st->pcs, flags);
      break;
    }
    default:
      break;
  }
  if (!u.token) return text;
  tokens_[u.token] = text;
  return "";
}

std::string KernelStacks::expand(const std::string& s) const { return expand_tokens(s, 'K', tokens_); }

}  // namespace ukstap::loader
