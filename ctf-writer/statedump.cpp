#include "ctf-writer/statedump.h"

#include <algorithm>

#include "vma-tracker/process_history.h"
#include "vma-tracker/tracker.h"

namespace ukstap::ctf {
namespace {

std::string file_key(const vma::Mapping& m) {
  return m.path + '\0' + std::to_string(m.dev) + ':' + std::to_string(m.ino);
}

}  // namespace

uint64_t Statedump::frame_ip(const loader::Frame& f, size_t depth) {
  if (depth == 0 || f.addr == 0) return f.addr;
  // ukstap's resolver (loader/ustack_output.cpp) keeps the return address when a symbol starts
  // exactly there (__restore_rt), else looks up the call before it.
  if (!f.name.empty() && f.offset == 0) return f.addr;
  return f.addr - 1;
}

uint32_t Statedump::cls(uint32_t& id, const char* name, const std::vector<FieldDef>& fields) {
  if (id == kNone) id = out_.define(name, fields);
  return id;
}

bool Statedump::needed(int pid, uint64_t addr, uint64_t t_ns, Pending& p, Checked& c, bool& mapped) {
  const vma::Mapping* m = tracker_.lookup(pid, addr, t_ns);
  mapped = m != nullptr;
  if (m) c.since = m->since_ns, c.until = m->until_ns;
  if (!m || !vma::is_file_mapping(*m)) return false;  // anonymous (JIT), [vdso], unknown
  const ElfFacts& f = facts_.get(m->path, m->dev, m->ino);
  if (!f.ok) return false;  // vanished or not ELF: nothing a reader could resolve with
  p.baddr = f.baddr_for(m->start, m->pgoff);
  p.file = file_key(*m);
  p.path = m->path;
  p.facts = &f;
  return true;
}

void Statedump::emit_bin(const StackEvent& e, const Pending& p) {
  const ElfFacts& f = *p.facts;
  uint32_t bin = cls(c_bin_, "lttng_ust_statedump:bin_info",
                     {{"baddr", FieldKind::U64Hex}, {"memsz", FieldKind::U64},
                      {"path", FieldKind::String}, {"is_pic", FieldKind::U8},
                      {"has_build_id", FieldKind::U8}, {"has_debug_link", FieldKind::U8}});
  std::vector<FieldValue> v(6);
  v[0].u = p.baddr;
  v[1].u = f.memsz;
  v[2].s = p.path;
  v[3].u = f.is_pic;
  v[4].u = !f.build_id.empty();
  v[5].u = !f.debug_link.empty();
  out_.emit(bin, e.ts_ns, e.cpu, e.pid, e.tid, 0, v);
  ++stats_.bin_infos;
  if (!f.build_id.empty()) {
    uint32_t c = cls(c_build_id_, "lttng_ust_statedump:build_id",
                     {{"baddr", FieldKind::U64Hex}, {"build_id", FieldKind::U8SeqHex}});
    std::vector<FieldValue> b(2);
    b[0].u = p.baddr;
    b[1].bytes = f.build_id;
    out_.emit(c, e.ts_ns, e.cpu, e.pid, e.tid, 0, b);
    ++stats_.build_ids;
  }
  if (!f.debug_link.empty()) {
    uint32_t c = cls(c_debug_link_, "lttng_ust_statedump:debug_link",
                     {{"baddr", FieldKind::U64Hex}, {"crc", FieldKind::U32},
                      {"filename", FieldKind::String}});
    std::vector<FieldValue> d(3);
    d[0].u = p.baddr;
    d[1].u = f.debug_link_crc;
    d[2].s = f.debug_link;
    out_.emit(c, e.ts_ns, e.cpu, e.pid, e.tid, 0, d);
    ++stats_.debug_links;
  }
}

Statedump::Proc& Statedump::proc(int pid, uint64_t t_ns) {
  if (procs_.size() >= prune_at_) prune();
  Proc& pr = procs_[pid];
  // The process at the event's time, not now: a held event (loader/ctf_output.h) of a process
  // whose pid was reused since must not start the dump over as the new one.
  const uint64_t life = tracker_.life(pid, t_ns);
  if (life && pr.life && life != pr.life) {  // a new process under a reused pid
    pr = Proc{};
    ++stats_.processes_freed;
  }
  if (life) pr.life = life;
  return pr;
}

void Statedump::prune() {
  for (auto it = procs_.begin(); it != procs_.end();) {
    if (tracker_.life(it->first) == 0) {
      it = procs_.erase(it);
      ++stats_.processes_freed;
    } else {
      ++it;
    }
  }
  prune_at_ = std::max(kPruneMin, 2 * procs_.size());
}

void Statedump::before(const StackEvent& e, const std::vector<loader::Frame>& frames,
                       uint64_t extra_ip) {
  if (e.pid <= 0) return;
  Proc& pr = proc(e.pid, e.ts_ns);
  // The same addresses as before, in the same mappings: nothing to tell (the common case: a
  // stack printed event after event).
  const uint64_t gen = tracker_.generation();
  auto known = [&](uint64_t ip) {
    auto it = pr.checked.find(ip);
    return it != pr.checked.end() && it->second.gen == gen && e.ts_ns >= it->second.since &&
           e.ts_ns < it->second.until;
  };
  bool all_known = !extra_ip || known(extra_ip);
  size_t depth = 0;
  for (const loader::Frame& f : frames)
    if (all_known && !f.kernel && f.addr) all_known = known(frame_ip(f, depth++));
  if (all_known) return;

  // Every bin this stack needs (by baddr, each once), and whether one is new to the readers or
  // contradicts what they were told.
  std::map<uint64_t, Pending> need;
  std::vector<std::pair<uint64_t, Checked>> looked;  // kept for known() once the readers know
  auto add = [&](uint64_t addr) {
    Pending p;
    Checked c{};
    bool mapped = false;
    if (!addr) return;
    if (needed(e.pid, addr, e.ts_ns, p, c, mapped)) need.emplace(p.baddr, std::move(p));
    if (mapped) looked.push_back({addr, c});
  };
  depth = 0;
  for (const loader::Frame& f : frames)
    if (!f.kernel && f.addr) add(frame_ip(f, depth++));
  add(extra_ip);
  // A lookup that changed the tracker (a /proc snapshot on first sight) may have answered from
  // the state before: such answers are not kept.
  auto remember = [&] {
    const uint64_t now_gen = tracker_.generation();
    if (now_gen != gen) return;
    for (auto& [ip, c] : looked) pr.checked[ip] = Checked{c.since, c.until, now_gen};
  };
  if (need.empty()) return remember();

  bool restart = false;
  std::vector<const Pending*> fresh;
  for (const auto& [baddr, p] : need) {
    auto it = pr.bins.find(baddr);
    if (it != pr.bins.end() && it->second.file == p.file) continue;  // known
    uint64_t end = baddr + p.facts->memsz;
    for (const auto& [b, bin] : pr.bins)
      if (b < end && baddr < bin.end) restart = true;  // overlaps another file, or this one elsewhere
    fresh.push_back(&p);
  }
  if (fresh.empty()) return remember();

  if (!pr.started || restart) {
    if (restart) {
      ++stats_.restarts;
      pr.bins.clear();
      pr.checked.clear();
      pr.frames_sent.clear();  // the readers forget the old files: the frames are sent again
      fresh.clear();
      for (const auto& [baddr, p] : need) fresh.push_back(&p);
    }
    out_.emit(cls(c_start_, "lttng_ust_statedump:start", {}), e.ts_ns, e.cpu, e.pid, e.tid, 0, {});
    ++stats_.starts;
  }
  for (const Pending* p : fresh) {
    emit_bin(e, *p);
    pr.bins[p->baddr] = Bin{p->baddr + p->facts->memsz, p->file};
  }
  if (!pr.started || restart) {
    out_.emit(cls(c_end_, "lttng_ust_statedump:end", {}), e.ts_ns, e.cpu, e.pid, e.tid, 0, {});
    pr.started = true;
  }
  remember();
}

void Statedump::after(const StackEvent& e, const std::vector<loader::Frame>& frames) {
  if (e.pid <= 0) return;
  Proc& pr = procs_[e.pid];
  size_t depth = 0;
  std::vector<FieldValue> v;  // made for the first new frame only: most stacks have none
  for (const loader::Frame& f : frames) {
    if (f.kernel || !f.addr) continue;  // kernel frames; a profile's "[user stack cut short]" note
    const uint64_t ip = frame_ip(f, depth);
    if (pr.frames_sent.insert(ip).second) {
      v.resize(2);
      uint32_t c = cls(c_frame_, "ukstap:callstack_user_frame",
                       {{"depth", FieldKind::U32}, {"address", FieldKind::U64Hex}});
      v[0].u = depth;
      v[1].u = f.addr;
      out_.emit(c, e.ts_ns, e.cpu, e.pid, e.tid, ip, v);
      ++stats_.frame_events;
    }
    ++depth;
  }
}

}  // namespace ukstap::ctf
