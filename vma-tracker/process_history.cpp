// The per-process mapping timeline (see process_history.h).
#include "vma-tracker/process_history.h"

#include <algorithm>

namespace ukstap::vma {

namespace {
uint64_t g_next_serial = 0;  // the Tracker is single-threaded
}

Mapping* ProcessHistory::add_live(Mapping m) {
  m.serial = ++g_next_serial;
  all_.push_back(std::move(m));
  Mapping* p = &all_.back();
  live_[p->start] = p;
  return p;
}

void ProcessHistory::retire(Mapping* m, uint64_t t) {
  m->until_ns = t;
  dead_.emplace(m->start, m);
  dead_max_len_ = std::max(dead_max_len_, m->end - m->start);
}

const Mapping& ProcessHistory::map(Mapping m, uint64_t t) {
  const uint64_t s = m.start, e = m.end;
  auto it = live_.upper_bound(s);
  if (it != live_.begin()) --it;  // the mapping starting before s may reach into [s, e)
  while (it != live_.end() && it->first < e) {
    Mapping* old = it->second;
    if (old->end <= s) {
      ++it;
      continue;
    }
    it = live_.erase(it);
    retire(old, t);
    if (old->start < s) {  // the part below survives
      Mapping left = *old;
      left.end = s;
      left.since_ns = t;
      left.until_ns = UINT64_MAX;
      add_live(std::move(left));
    }
    if (old->end > e) {  // the part above survives, at a later file offset
      Mapping right = *old;
      right.start = e;
      // Anonymous and pseudo mappings show offset 0 in /proc/PID/maps and keep it.
      if (is_file_mapping(right)) right.pgoff = old->pgoff + (e - old->start);
      right.since_ns = t;
      right.until_ns = UINT64_MAX;
      it = live_.emplace(e, nullptr).first;  // keeps `it` at or past e: the loop ends
      right.serial = ++g_next_serial;
      all_.push_back(std::move(right));
      it->second = &all_.back();
    }
  }
  m.since_ns = t;
  m.until_ns = UINT64_MAX;
  return *add_live(std::move(m));
}

void ProcessHistory::end_all(uint64_t t) {
  for (auto& [start, m] : live_) retire(m, t);
  live_.clear();
}

bool ProcessHistory::add_if_free(const Mapping& m) {
  auto it = live_.upper_bound(m.start);
  if (it != live_.begin()) {
    auto prev = std::prev(it);
    if (prev->second->end > m.start) return false;
  }
  if (it != live_.end() && it->first < m.end) return false;
  add_live(m);
  return true;
}

const Mapping* ProcessHistory::find(uint64_t addr, uint64_t t) const {
  auto it = live_.upper_bound(addr);
  if (it != live_.begin()) {
    const Mapping* m = std::prev(it)->second;
    if (addr < m->end && m->since_ns <= t) return m;
  }
  // Dead mappings starting at most dead_max_len_ below addr are the only candidates; at any
  // one time a process's mappings do not overlap, so the first that matches is the answer.
  auto d = dead_.upper_bound(addr);
  while (d != dead_.begin()) {
    --d;
    if (d->first + dead_max_len_ <= addr) break;
    const Mapping* m = d->second;
    if (addr < m->end && m->since_ns <= t && t < m->until_ns) return m;
  }
  return nullptr;
}

std::vector<const Mapping*> ProcessHistory::live() const {
  std::vector<const Mapping*> out;
  out.reserve(live_.size());
  for (const auto& [start, m] : live_) out.push_back(m);
  return out;
}

}  // namespace ukstap::vma
