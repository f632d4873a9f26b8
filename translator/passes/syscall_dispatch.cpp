#include "passes/syscall_dispatch.h"

#include <algorithm>

#include "probes/family_point.h"

namespace ukstap::passes {

bool dispatchable(const DerivedProbe& p) {
  auto* tp = p.family.get<probes::TracepointPoint>();
  return tp && tp->syscall_nr >= 0;
}

const SyscallDispatch::Slot* SyscallDispatch::of(const DerivedProbe& p) const {
  auto it = probes.find(&p);
  return it == probes.end() ? nullptr : &it->second;
}

SyscallDispatch plan_syscall_dispatch(const Session& s, bool walks_kernel_stack) {
  SyscallDispatch d;
  int count = 0;
  for (auto* p : s.probes)
    if (dispatchable(*p)) ++count;
  std::string mode = s.define("STP_SYSCALL_DISPATCH", "");
  d.enabled = mode.empty() ? count >= 2 || (count >= 1 && walks_kernel_stack) : mode != "0";
  if (!d.enabled) return d;
  std::map<std::pair<bool, int>, int> next_slot;  // per (exit, nr)
  for (auto* p : s.probes) {
    if (!dispatchable(*p)) continue;
    SyscallDispatch::Slot slot;
    auto* tp = p->family.get<probes::TracepointPoint>();
    slot.exit = tp->is_sys_exit();
    slot.nr = tp->syscall_nr;
    slot.slot = next_slot[{slot.exit, slot.nr}]++;
    d.max_slots[slot.exit] = std::max(d.max_slots[slot.exit], slot.slot + 1);
    d.probes[p] = slot;
  }
  return d;
}

}  // namespace ukstap::passes
