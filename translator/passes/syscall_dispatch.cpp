#include "passes/syscall_dispatch.h"

#include <algorithm>

namespace ukstap::passes {

bool dispatchable(const DerivedProbe& p) {
  return p.family == "tracepoint" && p.params.count("syscall_nr");
}

namespace {

bool is_sys_exit(const DerivedProbe& p) {
  auto ev = p.params.find("event");
  return ev != p.params.end() && ev->second.rfind("sys_exit", 0) == 0;
}

}  // namespace

const SyscallDispatch::Slot* SyscallDispatch::of(const DerivedProbe& p) const {
  auto it = probes.find(&p);
  return it == probes.end() ? nullptr : &it->second;
}

SyscallDispatch plan_syscall_dispatch(const Session& s) {
  SyscallDispatch d;
  int count = 0;
  for (auto* p : s.probes)
    if (dispatchable(*p)) ++count;
  std::string mode = s.define("STP_SYSCALL_DISPATCH", "");
  d.enabled = mode.empty() ? count >= 2 : mode != "0";
  if (!d.enabled) return d;
  std::map<std::pair<bool, int>, int> next_slot;  // per (exit, nr)
  for (auto* p : s.probes) {
    if (!dispatchable(*p)) continue;
    SyscallDispatch::Slot slot;
    slot.exit = is_sys_exit(*p);
    slot.nr = std::stoi(p->params.at("syscall_nr"));
    slot.slot = next_slot[{slot.exit, slot.nr}]++;
    d.max_slots[slot.exit] = std::max(d.max_slots[slot.exit], slot.slot + 1);
    d.probes[p] = slot;
  }
  return d;
}

}  // namespace ukstap::passes
