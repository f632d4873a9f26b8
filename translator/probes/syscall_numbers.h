// Syscall numbers by name, for the syscall dispatcher (docs/DESIGN.md "Syscall probes share one
// raw tracepoint"): syscalls:sys_enter_NAME / sys_exit_NAME probes become programs reached from
// raw_syscalls' sys_enter/sys_exit by syscall number.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ukstap::probes {

// The native syscall number of NAME (a syscalls:sys_enter_NAME tracepoint's NAME) on this
// machine, or -1 when it is not known (not x86_64, no table): such probes keep their own
// tracepoint. The table is read once, from the first of TAPSET_DIRS that has
// syscalls/syscall_num.stp, else from asm/unistd_64.h.
int syscall_number(const std::string& name, const std::vector<std::string>& tapset_dirs = {});

// The tables themselves, uncached (unit tests): name -> number from the first of TAPSET_DIRS
// that has syscalls/syscall_num.stp, and from asm/unistd_64.h; empty when absent.
std::map<std::string, int> syscall_table_from_tapsets(const std::vector<std::string>& tapset_dirs);
std::map<std::string, int> syscall_table_from_headers();

}  // namespace ukstap::probes
