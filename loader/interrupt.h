// SIGINT, SIGTERM, SIGHUP and SIGQUIT: how ukstap ends on them, in every pass.
//
// Never blocked: a handler records the signal (interrupted()), wakes the pass 5 event loop
// through a pipe (wake_fd()) and kills the child a pass is waiting for (the compiler, in its
// own process group). Each pass looks at interrupted() where it can stop cleanly (between
// passes, between probe attachments, in the event loop). Where it cannot for long — inside
// libbpf's load of the programs, which the verifier may spend seconds on — the handler ends the
// process itself (exit_on_interrupt): nothing is attached yet, and the kernel frees what a
// process held. A third signal always ends the process at once, as SystemTap's third one does.
// The -c target's process group is killed on every one of these exits.
#pragma once

#include <sys/types.h>

#include <string>

namespace ukstap::loader {

// Installs the handlers (and one for SIGCHLD that only wakes the event loop). Idempotent.
void install_interrupt_handlers();
// A stop signal arrived; interrupt_signal() says which (the first).
bool interrupted();
int interrupt_signal();
// Readable after any of the handled signals (SIGCHLD included); drain it with drain_wake_fd().
int wake_fd();
void drain_wake_fd();
// SIGUSR2 (staprun(8) "FILE SWITCHING BY SIGNAL"): the handler counts it and wakes the event
// loop, which switches -o output to the next file once per signal. The count since the last call.
int take_switch_requests();

// The child process group a pass is waiting for (0: none). On a stop signal the handler sends
// it SIGTERM (a compiler driver removes its own temporary files then) — see run_command.
void set_waited_child_group(pid_t pgid);
// The -c target's process group: SIGKILLed when a signal ends the process from the handler.
void set_target_group(pid_t pgid);
// While on, a stop signal ends the process from the handler: exit status 1, the target group
// killed. For phases that cannot look at interrupted() (bpf_object__load).
void exit_on_interrupt(bool on);

// Files and directories an exit from the handler removes (a third signal, or a signal while
// exit_on_interrupt is on): pass 4's temporary directory, a private file being written under its
// temporary name. An exit through main removes them itself (their owners' destructors, atexit);
// _exit from the handler runs neither. At most kMaxEmergencyPaths at once (a path past that is
// not removed by such an exit). Removal in the handler uses only async-signal-safe calls.
constexpr int kMaxEmergencyPaths = 16;
void add_emergency_removal(const std::string& path);
void drop_emergency_removal(const std::string& path);

}  // namespace ukstap::loader
