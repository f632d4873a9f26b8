// Who may run what. Like stap, the passes that only read and translate (-p1 to -p4, -l/-L,
// --dump-*) run unprivileged as far as they can; loading and attaching BPF programs (pass 5)
// needs root or the CAP_BPF and CAP_PERFMON capabilities (CAP_SYS_ADMIN also does). The check
// runs before pass 1, so an unprivileged run fails at once instead of after compiling.
#pragma once

#include <string>

namespace ukstap {

// Effective capabilities allow loading BPF programs and opening perf events/uprobes.
bool can_load_bpf();

// "" when a run that goes through pass `last_pass` may proceed, else the one-line reason.
std::string privilege_problem(int last_pass);

}  // namespace ukstap
