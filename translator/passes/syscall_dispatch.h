// Pass 2: the syscall-dispatch policy (docs/DESIGN.md "Syscall probes share one raw
// tracepoint"). Syscall tracepoint probes can run behind one dispatcher program per direction
// and slot on the raw sys_enter/sys_exit tracepoints, tail-calling the probe at (syscall
// number, slot). It saves ~70 ms of exit per tracepoint but costs every unprobed syscall
// ~18 ns while attached, so by default only a script with two or more such probes uses it, or
// one whose handlers walk the kernel stack (backtrace(), print_backtrace(), kstack ids, addr()):
// a syscalls:* perf-event tracepoint program gets the task's user registers on older kernels
// (Debian 12's 6.1), where bpf_get_stack then finds no kernel frame and backtrace() was empty
// (6.18 gives the stack, perf_syscall_enter on top); behind the dispatcher the stack starts at
// syscall_trace_enter (or the exit path) on both. -D STP_SYSCALL_DISPATCH=0 or =1 decides instead.
#pragma once

#include <map>

#include "driver/session.h"

namespace ukstap::passes {

// A syscalls:sys_enter_*/sys_exit_* probe whose number and record layout the dispatcher
// knows (probes/tracepoint_family.cpp).
bool dispatchable(const DerivedProbe& p);

struct SyscallDispatch {
  struct Slot {
    bool exit = false;  // sys_exit_* (else sys_enter_*)
    int nr = -1;        // the syscall number
    int slot = 0;       // its index among the probes of the same number and direction
  };
  bool enabled = false;
  // The probes reached through the dispatcher (none unless enabled), in s.probes order.
  std::map<const DerivedProbe*, Slot> probes;
  // Dispatcher programs per direction ([0] enter, [1] exit): the most slots one syscall needs.
  int max_slots[2] = {0, 0};

  const Slot* of(const DerivedProbe& p) const;
};

SyscallDispatch plan_syscall_dispatch(const Session& s, bool walks_kernel_stack = false);

}  // namespace ukstap::passes
