// USTACK records -> SystemTap's backtrace and symbol texts (see ustack_output.h).
#include "loader/ustack_output.h"
#include "loader/deferred_unwind.h"
#include "loader/stack_cut_note.h"
#include "loader/stack_hex_tokens.h"
#include "loader/stack_ids.h"
#include "loader/symbol_list.h"
#include "loader/stack_tokens.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "common/stp_records.h"
#include "common/stp_stack_abi.h"
#include "common/stp_strings.h"
#include "vma-tracker/symbol_demangle.h"
#include "vma-tracker/symbolizer.h"
#include "vma-tracker/tracker.h"

namespace ukstap::loader {

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

std::string basename_of(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}


}  // namespace

UserStacks::UserStacks(vma::Tracker& tracker, sym::Symbolizer& symbolizer)
    : tracker_(tracker), sym_(symbolizer) {}

bool UserStacks::has_token(const char* s, size_t n) {
  return std::memchr(s, '\x1e', n) != nullptr;
}

void UserStacks::snapshot(const unsigned char* p, size_t n) {
  if (deferred_) deferred_->snapshot(p, n);
}

int UserStacks::pick_pid(int pid, uint64_t pc, uint64_t t_ns) {
  if (pid != 0) return pid;
  // Native probes (begin/end) have no process of their own: the target first, then whoever had
  // the address mapped most recently.
  if (target_pid_ && tracker_.lookup(target_pid_, pc, t_ns)) return target_pid_;
  for (int p : tracker_.known_pids())
    if (tracker_.lookup(p, pc, t_ns)) return p;
  return 0;
}

Frame UserStacks::resolve(int pid, uint64_t pc, uint64_t t_ns, bool caller, bool want_line,
                          bool* in_text) {
  Frame r;
  r.addr = pc;
  if (in_text) *in_text = false;
  pid = pick_pid(pid, pc, t_ns);
  if (!pid) return r;
  const vma::Mapping* m = tracker_.lookup(pid, pc, t_ns);
  if (!m) return r;
  if (in_text) *in_text = (m->prot & 4 /* PROT_EXEC */) != 0;
  if (m->path.empty()) return r;  // anonymous (JIT) memory
  r.module = m->path;
  uint64_t lo = m->start, hi = m->end;
  for (const vma::Mapping* o : tracker_.file_mappings(pid, *m, t_ns)) {
    lo = std::min(lo, o->start);
    hi = std::max(hi, o->end);
  }
  r.mod_offset = pc - lo;
  r.mod_size = hi - lo;
  const sym::ElfFile* f = m->path == "[vdso]" ? sym_.vdso() : sym_.file(m->path, m->dev, m->ino);
  if (!f) return r;
  uint64_t vaddr = pc - f->bias_for(m->start, m->pgoff);
  sym::SymbolHit hit;
  // A return address belongs to the call before it (pc-1: a call can be a function's last
  // instruction), unless a symbol starts exactly there: the signal trampoline __restore_rt is
  // "returned to" at its first byte (glibc pads a nop before it for CFI lookups).
  bool found = f->lookup(vaddr, hit) && (!caller || hit.offset == 0);
  if (!found && caller && vaddr) found = f->lookup(vaddr - 1, hit);
  std::string file;
  int line = 0;
  if (want_line && f->source_line(caller && vaddr ? vaddr - 1 : vaddr, file, line))
    r.src = file + ":" + std::to_string(line);
  if (found) {
    r.name = demangle_ ? sym::demangle(hit.name) : hit.name;
    r.offset = vaddr - hit.start;
    r.size = hit.size;
  }
  return r;
}

std::string UserStacks::format_one(const Frame& r, int flags) {
  const uint64_t pc = r.addr;
  const bool have_symbol = !r.name.empty(), have_module = !r.module.empty();
  const char* ex = r.inexact ? " (inexact)" : "";
  if (flags & _STP_SYM_SYMBOL) return have_symbol ? r.name : hex(pc);
  if (flags & _STP_SYM_MODULE) return have_module ? r.module : "<unknown>";
  if (flags & _STP_SYM_DATA) {
    if (have_symbol)
      return r.name + "+" + hex(r.offset) + "/" + hex(r.size) + " [" + r.module + "]";
    if (have_module)
      return hex(pc) + " [" + r.module + "+" + hex(r.mod_offset) + "/" + hex(r.mod_size) + "]";
    return hex(pc);
  }
  if (flags & _STP_SYM_BRIEF) return (have_symbol ? r.name + "+" + hex(r.offset) : hex(pc)) + "\n";
  if (flags & _STP_SYM_SIMPLE) {
    if (have_symbol) return r.name + "+" + hex(r.offset) + " [" + basename_of(r.module) + "]\n";
    if (have_module)
      return hex(pc) + " [" + basename_of(r.module) + "+" + hex(r.mod_offset) + "]\n";
    return hex(pc) + "\n";
  }
  // _STP_SYM_FULL; with _STP_SYM_LINENUMBER " at FILE:LINE" before the module when known
  if (have_symbol)
    return " " + hex(pc) + " : " + r.name + "+" + hex(r.offset) + "/" + hex(r.size) +
           (r.src.empty() ? "" : " at " + r.src) + " [" + r.module + "]" + ex + "\n";
  if (have_module)
    return " " + hex(pc) + " [" + r.module + "+" + hex(r.mod_offset) + "/" + hex(r.mod_size) + "]" +
           ex + "\n";
  return " " + hex(pc) + ex + "\n";
}

std::string UserStacks::format_list(int pid, uint64_t t_ns, const std::string& list) {
  return format_symbol_list(list, [&](uint64_t addr) {
    return format_one(resolve(pid, addr, t_ns, false), _STP_SYM_DATA);
  });
}

std::string UserStacks::source_text(int pid, uint64_t addr, uint64_t t_ns, int flags) {
  // SystemTap's _stp_snprint_addr with _STP_SYM_FILENAME and/or _STP_SYM_LINENUMBER: FILE:LINE,
  // FILE or LINE; the address as 0x… when what was asked for is unknown. The address is taken
  // as given (no pc-1: usymfileline(uaddr()) is the sampled instruction).
  std::string file;
  int line = 0;
  pid = pick_pid(pid, addr, t_ns);
  const vma::Mapping* m = pid ? tracker_.lookup(pid, addr, t_ns) : nullptr;
  const sym::ElfFile* f = nullptr;
  if (m && !m->path.empty())
    f = m->path == "[vdso]" ? sym_.vdso() : sym_.file(m->path, m->dev, m->ino);
  bool known = f && f->source_line(addr - f->bias_for(m->start, m->pgoff), file, line);
  const bool want_file = flags & _STP_SYM_FILE, want_line = flags & _STP_SYM_LINE;
  if (!known) return hex(addr);
  if (want_file && want_line) return file + ":" + std::to_string(line);
  if (want_file) return file;
  return std::to_string(line);
}

void UserStacks::add_cut_note(std::string& text, int flags, uint32_t stop, const WalkEnd& end) {
  if (!(flags & (_STP_SYM_FULL | _STP_SYM_BRIEF | _STP_SYM_SIMPLE)) || text.empty()) return;
  text += stack_cut_note(end.cut_here ? (uint32_t)STP_STOP_BAD_FRAME : stop,
                         end.outermost && !end.cut_here);
}

void UserStacks::add_cut_frame(std::vector<Frame>* frames, uint32_t stop, const WalkEnd& end) {
  if (!frames || frames->empty()) return;
  Frame f;
  f.name = stack_cut_frame(end.cut_here ? (uint32_t)STP_STOP_BAD_FRAME : stop,
                           end.outermost && !end.cut_here);
  if (!f.name.empty()) frames->push_back(std::move(f));
}

void UserStacks::walk(int pid, uint64_t t_ns, const std::vector<Pc>& pcs, int flags,
                      std::vector<Frame>* frames, std::string* text, WalkEnd* end,
                      WalkValid* valid) {
  WalkEnd local;
  if (!end) end = &local;
  *end = WalkEnd{};
  for (size_t i = 0; i < pcs.size(); ++i) {
    const uint64_t pc = pcs[i].pc;
    int p = pick_pid(pid, pc, t_ns);
    const vma::Mapping* m = p ? tracker_.lookup(p, pc, t_ns) : nullptr;
    if (valid) {
      if (!m) valid->all_mapped = false;
      else {
        valid->lo = std::max(valid->lo, m->since_ns);
        valid->hi = std::min(valid->hi, m->until_ns);
      }
    }
    FrameKey key{m ? m->serial : 0, pc,
                 (uint32_t)flags << 2 | (i > 0 ? 2u : 0u) | (pcs[i].inexact ? 1u : 0u)};
    if (m && frames) {  // a profile sample: Frames
      auto hit = frame_cache_.find(key);
      if (hit != frame_cache_.end()) {
        ++this->frames;
        frames->push_back(hit->second);
        if (text) *text += format_one(hit->second, flags);
        end->outermost = is_outermost_frame(hit->second.name);
        continue;
      }
    } else if (m) {
      auto hit = text_cache_.find(key);
      if (hit != text_cache_.end()) {
        ++this->frames;
        if (text) *text += hit->second.text;
        end->outermost = hit->second.outermost;
        continue;
      }
    }
    bool in_text = false;
    Frame r = resolve(pid, pc, t_ns, i > 0, (flags & _STP_SYM_LINENUMBER) != 0, &in_text);
    r.inexact = pcs[i].inexact;
    if (r.inexact && !in_text) {
      // A frame-pointer walk through code that does not keep one reads garbage: a "return
      // address" outside all code ends the stack rather than printing an invented frame.
      cut_frames += pcs.size() - i;
      end->cut_here = true;
      break;
    }
    ++this->frames;
    if (r.name.empty()) ++unresolved_frames;
    std::string t = format_one(r, flags);
    if (text) *text += t;
    end->outermost = is_outermost_frame(r.name);
    if (m && frames) {
      if (frame_cache_.size() >= kFrameCacheMax) frame_cache_.clear();
      frames->push_back(r);
      frame_cache_.emplace(key, std::move(r));
    } else if (m) {
      if (text_cache_.size() >= kFrameCacheMax) text_cache_.clear();
      text_cache_.emplace(key, TextEntry{std::move(t), end->outermost});
    } else if (frames) {
      frames->push_back(std::move(r));
    }
  }
}

const std::string& UserStacks::record(uint16_t flags, const stp_ustack& u, const unsigned char* p,
                                      size_t n, std::string& error) {
  const std::string* cached = nullptr;
  record_text_ = decode(flags, u, p, n, error, nullptr, &cached);
  return cached ? *cached : record_text_;
}

std::vector<Frame> UserStacks::sample_frames(uint16_t flags, const stp_ustack& u,
                                             const unsigned char* p, size_t n) {
  std::vector<Frame> out;
  std::string error;
  decode(flags, u, p, n, error, &out);
  return out;
}

std::string UserStacks::record_frames(uint16_t flags, const stp_ustack& u, const unsigned char* p, size_t n,
                                      std::string& error, std::vector<Frame>& frames) {
  text_too_ = true;
  std::string text = decode(flags, u, p, n, error, &frames);
  text_too_ = false;
  return text;
}

std::string UserStacks::decode(uint16_t flags, const stp_ustack& u, const unsigned char* p,
                               size_t n, std::string& error, std::vector<Frame>* frames_out,
                               const std::string** cached) {
  // A token names content (pid + addresses), so equal stacks make equal strings; it is
  // re-resolved on every record because the same address can mean another file later (a
  // mapping replaced in between), and a string printed right after its event must say what was
  // mapped then.
  // Every mapping made before the event must be known: read the side-band records unless
  // the last read began after this event.
  if (u.time_ns >= drained_at_ns_) {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    drained_at_ns_ = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    tracker_.drain();
  }
  std::string text;
  switch (u.kind) {
    case STP_USTACK_NO_USER: {
      ++stacks;
      ++stops[STP_STOP_NO_USER];
      std::string pp;
      if (u.probe_id == STP_USTACK_NATIVE_PROBE && n >= 4) {
        uint32_t len;
        std::memcpy(&len, p, 4);
        pp.assign(reinterpret_cast<const char*>(p) + 4, std::min<size_t>(len, n - 4));
      } else if (u.probe_id < pps_.size()) {
        pp = pps_[u.probe_id];
      }
      if (!u.token) text = "<no user backtrace at " + pp + ">\n";
      break;
    }
    case STP_USTACK_PCS: {
      ++stacks;
      std::vector<uint64_t>& raw = raw_;  // reused: no allocation per record
      raw.resize(std::min<size_t>(u.nr, n / 8));
      if (!raw.empty()) std::memcpy(raw.data(), p, raw.size() * 8);
      // A walk that waited for a table: finished here over its stack copy.
      uint32_t exact = u.exact, stop = u.stop;
      if (deferred_) deferred_->finish(u, raw, exact, stop);
      ++stops[stop & STP_STOP_MASK];
      // The same stack printed before, under the same mappings: its text (stack_text_cache.h).
      const bool cacheable = !frames_out && u.pid != 0;
      const StackTextCache::Key key{(int)u.pid, flags, exact, stop, raw.data(), raw.size()};
      const uint64_t gen = tracker_.generation();
      if (cacheable) {
        if (const StackTextCache::Value* v = stack_text_.find(key, u.time_ns, gen)) {
          // record(): the cached text itself, written out before the next record can evict it
          if (cached && !u.token) *cached = &v->text;
          else text = v->text;
          this->frames += v->frames;
          unresolved_frames += v->unresolved;
          cut_frames += v->cut;
          break;
        }
      }
      const uint64_t frames0 = this->frames, unresolved0 = unresolved_frames, cut0 = cut_frames;
      std::vector<Pc> pcs;
      for (size_t i = 0; i < raw.size(); ++i) pcs.push_back({raw[i], i >= exact});
      WalkEnd end;
      WalkValid valid;
      walk((int)u.pid, u.time_ns, pcs, flags, frames_out, frames_out && !text_too_ ? nullptr : &text,
           &end, &valid);
      add_cut_note(text, flags, stop, end);
      add_cut_frame(frames_out, stop, end);
      if (cacheable && valid.all_mapped && gen == tracker_.generation())
        stack_text_.put(key, valid.lo, valid.hi, gen,
                        {text, this->frames - frames0, unresolved_frames - unresolved0,
                         cut_frames - cut0});
      break;
    }
    case STP_USTACK_HEXSTR: {
      std::string s;
      if (n >= 4) {
        uint32_t len;
        std::memcpy(&len, p, 4);
        s.assign(reinterpret_cast<const char*>(p) + 4, std::min<size_t>(len, n - 4));
      }
      // A ubacktrace() key kept as a stack id: its own process and time, not this record's.
      const StoredStack* st = nullptr;
      s = expand_hexid_tokens(s, hex_stack_ids_, &st);
      if (flags & _STP_SYM_LIST) {  // print_usyms: every address as usymdata, none as a caller
        text = format_list(st ? (int)st->h.pid : (int)u.pid, st ? st->h.time_ns : u.time_ns, s);
        break;
      }
      std::vector<Pc> pcs;
      for (uint64_t pc : parse_hex_list(s)) pcs.push_back({pc, false});
      walk(st ? (int)st->h.pid : (int)u.pid, st ? st->h.time_ns : u.time_ns, pcs, flags, frames_out,
           frames_out && !text_too_ ? nullptr : &text);
      break;
    }
    case STP_USTACK_ID: {
      // A stack stored in the kernel by ustack_id(): its pcs, pid and first event's time.
      if (n < 8) break;
      uint64_t id;
      std::memcpy(&id, p, 8);
      const StoredStack* st = stack_ids_ ? stack_ids_->find(id) : nullptr;
      if (!st) {
        text = "<unknown stack id " + hex(id) + ">\n";
        break;
      }
      ++stacks;
      if (st->h.kind == STP_USTACK_NO_USER) {
        std::string pp = st->h.probe_id < pps_.size() ? pps_[st->h.probe_id] : "";
        text = "<no user backtrace at " + pp + ">\n";
        break;
      }
      std::vector<Pc> pcs;
      for (size_t i = 0; i < st->pcs.size(); ++i) pcs.push_back({st->pcs[i], i >= st->h.exact});
      WalkEnd end;
      walk((int)st->h.pid, st->h.time_ns, pcs, flags, frames_out, frames_out && !text_too_ ? nullptr : &text, &end);
      add_cut_note(text, flags, st->h.stop, end);
      add_cut_frame(frames_out, st->h.stop, end);
      break;
    }
    case STP_USTACK_SYM: {
      if (n < 8) break;
      uint64_t addr;
      std::memcpy(&addr, p, 8);
      if (flags & (_STP_SYM_FILE | _STP_SYM_LINE)) {
        text = source_text((int)u.pid, addr, u.time_ns, flags);
        break;
      }
      Frame r = resolve((int)u.pid, addr, u.time_ns, false);
      text = format_one(r, flags);
      if ((flags & _STP_SYM_MODULE) && r.module.empty()) error = "module cannot be found";
      break;
    }
    default:
      break;
  }
  if (frames_out && !text_too_) return "";  // a profile sample: the frames are the output
  if (!u.token) return text;
  tokens_[u.token] = text;
  return "";
}

std::string UserStacks::expand(const std::string& s) const {
  return expand_hexid_tokens(expand_tokens(s, 'U', tokens_), hex_stack_ids_);
}

}  // namespace ukstap::loader
