// Syscall numbers by name, for the syscall dispatcher (docs/DESIGN.md "Syscall probes share one
// raw tracepoint"): syscalls:sys_enter_NAME / sys_exit_NAME probes become programs reached from
// raw_syscalls' sys_enter/sys_exit by syscall number.
#pragma once

#include <string>

namespace ukstap::probes {

// The native syscall number of NAME on this machine, or -1 when it is not known (not x86_64,
// no asm/unistd_64.h, a syscall newer than the header): such probes keep their own tracepoint.
int syscall_number(const std::string& name);

}  // namespace ukstap::probes
