// --ctf=DIR's events (ctf_output.h).
#include "loader/ctf_output.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <bpf/libbpf.h>

#include "codegen/module_info.h"
#include "ctf-writer/statedump_out.h"
#include "common/stp_records.h"
#include "driver/session.h"
#include "loader/interrupt.h"

namespace ukstap::loader {

using ctf::FieldSpec;
using ctf::Scope;
using ctf::Type;
using Conv = ast::FormatComponent::Conv;

namespace {

uint64_t clock_ns(clockid_t c) {
  struct timespec ts;
  ::clock_gettime(c, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// CLOCK_REALTIME - CLOCK_MONOTONIC: the realtime reading between two monotonic ones (LTTng's
// clock offset is measured the same way).
uint64_t realtime_offset_ns() {
  uint64_t best = 0, best_gap = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    uint64_t a = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME), b = clock_ns(CLOCK_MONOTONIC);
    if (b - a < best_gap) {
      best_gap = b - a;
      best = r - (a + (b - a) / 2);
    }
  }
  return best;
}

std::string comm_of(const char* c) { return std::string(c, strnlen(c, 16)); }

// "func+0xOFF/0xSIZE [module]", "0xADDR [module]" without a symbol (print_ubacktrace()'s
// frame without its address).
std::string frame_text(const Frame& f) {
  char buf[64];
  std::string t;
  if (!f.name.empty()) {
    std::snprintf(buf, sizeof buf, "+0x%llx/0x%llx", (unsigned long long)f.offset, (unsigned long long)f.size);
    t = f.name + buf;
  } else {
    std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)f.addr);
    t = buf;
  }
  if (!f.module.empty()) t += " [" + f.module + "]";
  return t;
}

// A stack's frames that are addresses: a profile's "[user stack cut short: ...]" note is not.
const std::vector<const Frame*>& real_frames(const std::vector<Frame>& fs, std::vector<const Frame*>& out) {
  out.clear();
  for (const Frame& f : fs)
    if (f.addr) out.push_back(&f);
  return out;
}

}  // namespace

CtfOutput::CtfOutput(Session& s, const codegen::ModuleInfo& m) : s_(s), m_(m) {
  const int n = libbpf_num_possible_cpus();
  ncpus_ = n > 0 ? (uint32_t)n : 1024;  // unknown: a bound all the same
  open_.resize((size_t)ncpus_ * 2);
}

bool CtfOutput::open(const std::string& dir, std::string& why) {
  if (!trace_.is_open() && !trace_.open(dir, why)) return false;  // --lttng started its writer (lttng_output.h)
  trace_.set_stop_check(&interrupted);  // a stuck writer must not keep ^C from ending the run
  with_ustack_ = m_.uses_user_stacks;
  with_kstack_ = m_.uses_kernel_stacks;
  std::vector<FieldSpec> common = {
      {Type::Sint, 32, 10, Scope::Payload, "vpid"},
      {Type::Sint, 32, 10, Scope::Payload, "vtid"},
      {Type::String, 8, 10, Scope::Payload, "procname"},
      {Type::Uint, 64, 16, Scope::Payload, "ip"},
  };
  if (with_ustack_) common.push_back({Type::UintSeq, 64, 16, Scope::Payload, "callstack_user"});
  if (with_kstack_) common.push_back({Type::UintSeq, 64, 16, Scope::Payload, "callstack_kernel"});
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  trace_.init(realtime_offset_ns(), {{"hostname", host}, {"tracer_major", "0"}}, common);
  return true;
}

void CtfOutput::emit_common(ctf::Encoder& e, uint32_t pid, uint32_t tid, const std::string& comm,
                            const std::vector<uint64_t>* ustack, const std::vector<uint64_t>* kstack,
                            const uint64_t* ip) {
  e.u64((uint64_t)(int64_t)(int32_t)pid);
  e.u64((uint64_t)(int64_t)(int32_t)tid);
  e.str(comm);
  e.u64(ip ? *ip : ustack && !ustack->empty() ? (*ustack)[0] : 0);
  auto seq = [&](const std::vector<uint64_t>* v) {
    e.u32(v ? (uint32_t)v->size() : 0);
    if (v)
      for (uint64_t a : *v) e.u64(a);
  };
  if (with_ustack_) seq(ustack);
  if (with_kstack_) seq(kstack);
}

void CtfOutput::enable_statedump(vma::Tracker& tracker) {
  // Statedump and frame events belong to the pending event's process: its comm.
  statedump_out_ = std::make_unique<ctf::TraceStatedumpOut>(
      trace_, [this](ctf::Encoder& e, int pid, int tid, uint64_t ip) {
        emit_common(e, (uint32_t)pid, (uint32_t)tid, *emitting_comm_, nullptr, nullptr, &ip);
      });
  statedump_ = std::make_unique<ctf::Statedump>(*statedump_out_, tracker);
}

CtfOutput::Place CtfOutput::place_of(const stp_rec_ctx& x) {
  return {x.cpu & ~STP_REC_CTX_SLOT1, (x.cpu & STP_REC_CTX_SLOT1) ? 1u : 0u};
}

CtfOutput::Pending*& CtfOutput::open_at(Place at) { return open_[at.cpu * 2 + at.slot]; }

CtfOutput::Pending** CtfOutput::open_event(const stp_rec_ctx& x) {
  const Place at = place_of(x);
  if (at.cpu >= ncpus_) {
    ++bad_cpu_records_;
    return nullptr;
  }
  return &open_at(at);
}

bool CtfOutput::same_hit(const Pending& p, const stp_rec_ctx& x) const {
  return p.time_ns == x.time_ns && p.tid == x.tid && p.probe_id == x.probe_id;
}

CtfOutput::Pending& CtfOutput::start(const stp_rec_ctx& x, Pending*& open) {
  if (open) open->sealed = true;  // this CPU and slot have moved on: nothing more joins it
  Pending& p = queue_.emplace_back();  // a deque: the other open events stay where they are
  p.time_ns = x.time_ns;
  p.at = place_of(x);
  p.probe_id = x.probe_id;
  p.pid = x.pid;
  p.tid = x.tid;
  p.comm = comm_of(x.comm);
  open = &p;
  emit_finished(kSealed);  // the head may have been the event just sealed; p is not
  return p;
}

void CtfOutput::statement(const stp_rec_ctx& x, int fmt_id, std::vector<Value> values) {
  Pending** open = open_event(x);
  if (!open) return;
  Pending* p = *open;
  if (!p || !same_hit(*p, x) || p->kind != kNone) p = &start(x, *open);  // a stack alone so far: this is its statement
  p->kind = fmt_id;
  p->values = std::move(values);
}

void CtfOutput::log(const stp_rec_ctx& x, std::string text) {
  statement(x, kLog, {Value{true, 0, std::move(text)}});
}

void CtfOutput::histogram(const stp_rec_ctx& x, std::string text) {
  statement(x, kHist, {Value{true, 0, std::move(text)}});
}

void CtfOutput::stack(const stp_rec_ctx& x, bool kernel, std::vector<Frame> frames) {
  Pending** open = open_event(x);
  if (!open) return;
  Pending* p = *open;
  if (!p || !same_hit(*p, x) || (kernel ? p->has_k : p->has_u)) p = &start(x, *open);
  (kernel ? p->has_k : p->has_u) = true;
  (kernel ? p->kstack : p->ustack) = std::move(frames);
}

const CtfOutput::Class& CtfOutput::class_for(const Pending& p) {
  auto key = std::make_tuple(p.probe_id, p.kind, p.has_u, p.has_k);
  if (auto it = classes_.find(key); it != classes_.end()) return it->second;
  std::string name;
  for (const auto& pi : m_.probes)
    if ((uint32_t)pi.id == p.probe_id) name = pi.pn.empty() ? pi.pp : pi.pn;  // as the script names it
  if (name.empty()) name = "probe_" + std::to_string(p.probe_id);
  std::vector<FieldSpec> fields;
  if (p.kind == kLog) {
    fields.push_back({Type::String, 8, 10, Scope::Payload, "msg"});
  } else if (p.kind == kHist) {
    fields.push_back({Type::String, 8, 10, Scope::Payload, "histogram"});
  } else if (p.kind >= 0 && (size_t)p.kind < m_.formats.size()) {
    const codegen::FormatInfo& f = m_.formats[p.kind];
    size_t ai = 0;
    for (const auto& c : f.components) {
      if (c.conv == Conv::Literal) continue;
      if (c.width == -2) ++ai;
      if (c.precision == -2) ++ai;
      FieldSpec fs;
      fs.name = ai < f.arg_names.size() ? f.arg_names[ai] : "arg" + std::to_string(ai);
      switch (c.conv) {
        case Conv::SignedDec: fs.type = Type::Sint; break;
        case Conv::UnsignedDec:
        case Conv::Char: fs.type = Type::Uint; break;
        case Conv::Octal: fs.type = Type::Uint, fs.base = 8; break;
        case Conv::Binary: fs.type = Type::Uint, fs.base = 2; break;
        case Conv::HexLower:
        case Conv::HexUpper:
        case Conv::Pointer: fs.type = Type::Uint, fs.base = 16; break;
        case Conv::String:
        case Conv::Memory:
        case Conv::MemoryHex: fs.type = Type::String; break;
        default: fs.type = Type::Sint; break;
      }
      fields.push_back(fs);
      ++ai;
    }
  }
  if (p.has_u) fields.push_back({Type::SymbolSeq, 8, 10, Scope::Payload, "callstack_user_symbols"});
  if (p.has_k) fields.push_back({Type::SymbolSeq, 8, 10, Scope::Payload, "callstack_kernel_symbols"});
  Class c;
  for (const FieldSpec& f : fields)
    if (f.type != Type::SymbolSeq) c.is_string.push_back(f.type == Type::String);
  c.id = trace_.define_class(name, fields);
  return classes_.emplace(key, std::move(c)).first->second;
}

size_t CtfOutput::FrameKeyHash::operator()(const FrameKey& k) const {
  size_t h = std::hash<std::string_view>()(k.name);
  h = h * 31 + std::hash<std::string_view>()(k.module);
  return h ^ (k.addr * 0x9e3779b97f4a7c15ull) ^ (k.offset << 20) ^ k.size;
}

uint32_t CtfOutput::symbol_of(const Frame& f) {
  FrameKey k{f.addr, f.offset, f.size, f.name, f.module, nullptr};
  if (!f.name.empty()) k.addr = 0;  // the text does not show it
  if (auto it = symbols_.find(k); it != symbols_.end()) return it->second;
  auto owned = std::make_shared<std::string>(f.name + f.module);
  k.name = std::string_view(*owned).substr(0, f.name.size());
  k.module = std::string_view(*owned).substr(f.name.size());
  k.owned = std::move(owned);
  uint32_t id = trace_.define_symbol(frame_text(f));
  symbols_.emplace(std::move(k), id);
  return id;
}

void CtfOutput::report_drops() {
  if (!drops_) return;
  const uint64_t now = *drops_;
  if (now <= drops_reported_) return;
  // At the last event's time, in its stream: the range goes from that stream's last packet end
  // to there (the range CTF can express; a later time could make the stream's next events look
  // earlier than it). Before any event: now.
  trace_.discarded(last_cpu_, last_ts_ ? last_ts_ : clock_ns(CLOCK_MONOTONIC), now - drops_reported_);
  drops_reported_ = now;
}

void CtfOutput::emit_pending(Pending& p) {
  emitting_comm_ = &p.comm;
  const Class& cls = class_for(p);
  const auto& uf = real_frames(p.ustack, uf_);
  const auto& kf = real_frames(p.kstack, kf_);
  ua_.clear();
  ka_.clear();
  for (auto* f : uf) ua_.push_back(f->addr);
  for (auto* f : kf) ka_.push_back(f->addr);
  // The frames' texts by id, new ones sent first (a message of their own, before the event's)
  sym_scratch_.clear();
  for (auto* f : uf) sym_scratch_.push_back(symbol_of(*f));
  for (auto* f : kf) sym_scratch_.push_back(symbol_of(*f));
  const ctf::StackEvent sev{(int)p.pid, (int)p.tid, p.at.cpu, p.time_ns};
  if (statedump_ && p.has_u) statedump_->before(sev, p.ustack);  // the files its frames need
  last_ts_ = p.time_ns;
  last_cpu_ = p.at.cpu;
  ctf::Encoder& e = trace_.begin_event(cls.id, p.time_ns, p.at.cpu);
  emit_common(e, p.pid, p.tid, p.comm, p.has_u ? &ua_ : nullptr, p.has_k ? &ka_ : nullptr);
  // The statement's values in order (a record cut short leaves the rest zero/empty).
  for (size_t i = 0; i < cls.is_string.size(); ++i) {
    const Value* v = i < p.values.size() ? &p.values[i] : nullptr;
    if (cls.is_string[i]) e.str(v ? v->str : std::string());
    else e.u64(v ? (uint64_t)v->num : 0);
  }
  size_t si = 0;
  auto syms = [&](size_t n) {
    e.u32((uint32_t)n);
    for (size_t i = 0; i < n; ++i) e.u32(sym_scratch_[si++]);
  };
  if (p.has_u) syms(uf.size());
  if (p.has_k) syms(kf.size());
  trace_.end_event();
  if (statedump_ && p.has_u) statedump_->after(sev, p.ustack);  // one event per user frame
  emitting_comm_ = &no_comm_;
}

void CtfOutput::emit_finished(Finished which) {
  // From the head only: an event waits for every older one (ring order), a sealed one goes at
  // once, an open one after a drain of the ring once its hit is kHoldNs old (its records are
  // read by then: the last drain emptied the ring) or at close. Not by age between two records
  // of a drain: a backlog of old records may still hold the rest of that hit.
  uint64_t now = 0;
  while (!queue_.empty()) {
    Pending& p = queue_.front();
    if (which != kAll && !p.sealed) {
      if (which == kSealed) break;
      if (!now) now = clock_ns(CLOCK_MONOTONIC);  // the clock of the hits' times
      if (now - p.time_ns < kHoldNs && p.time_ns <= now) break;
    }
    Pending*& open = open_at(p.at);
    if (open == &p) open = nullptr;
    emit_pending(p);
    queue_.pop_front();
  }
}

void CtfOutput::flush() {
  emit_finished(kSealedOrOld);
  // Output flushes after each drain of the ring. The losses counted since the last flush are
  // reported at the last event written, in its stream: the count is exact, the place is not
  // (an event still held above may be older than some of them, a lost record may be older than
  // events written already; CTF cannot place them before an event its stream already has).
  report_drops();
  trace_.flush();
}

bool CtfOutput::close(std::string& why) {
  emit_finished(kAll);  // the ring is drained for the last time: every hit is over
  flush();
  if (bad_cpu_records_)
    s_.diag.warning("--ctf: " + std::to_string(bad_cpu_records_) + " record(s) named a CPU beyond the " +
                    std::to_string(ncpus_) + " possible ones: left out of the trace");
  drops_ = nullptr;  // the session's mapping goes away with the run; the trace is finished
  return trace_.close(why);
}

}  // namespace ukstap::loader
