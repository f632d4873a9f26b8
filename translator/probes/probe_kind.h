// The built-in probe families as a type: one enumerator per family and ONE table of what every
// pass asks about a family (its name in messages, the side it runs on). A family's typed fields
// are in probes/family_point.h; its parts in each pass are reachable from the kind:
//   resolve   translator/probes/<family>_family.cpp (its patterns, registered in provider.cpp)
//   emit      translator/codegen/emitter.cpp (Emitter::probe_macro: the runtime macro per kind)
//   attach    loader/attach_<family>.cpp (loader/attach.h: the attach table indexed by kind)
#pragma once

#include <cstddef>
#include <cstdint>

namespace ukstap::probes {

// The order is the order of the alternatives of FamilyPoint (family_point.h) and of the rows
// of the table below; add a family at the end of all three.
enum class ProbeKind : uint8_t {
  Begin,       // begin, begin(N): once, before the kernel probes are attached
  End,         // end, end(N): once, after they are detached
  Error,       // error, error(N): once, when the run ends in an error
  Never,       // never: type-checked, never run (not even emitted)
  Timer,       // timer.*: interval timers (user space) or timer.profile (a CPU clock event)
  Tracepoint,  // kernel.trace("SYSTEM:EVENT")
  Process,     // process.begin/end, process.thread.begin/end (sched raw tracepoints)
  Uprobe,      // process("PATH").function("NAME")[.return], process("PATH").mark("NAME")
  Perf,        // perf.type(T).config(C), perf.sw.*, perf.hw.*
  Procfs,      // procfs("PATH").read/.write: a FIFO ukstap serves (loader/procfs_files.h)
  Input,       // __input.char, __input.line: ukstap's standard input (input.stp's aliases)
  Netfilter,   // netfilter.hook("H").pf("PF")[.priority("P")]: a BPF netfilter program
  KernelFunction,  // kernel.function("F")[.call|.return], kprobe.function, module("M").function
};
inline constexpr size_t kProbeKindCount = static_cast<size_t>(ProbeKind::KernelFunction) + 1;

// Where a family's probes run.
enum class Side : uint8_t {
  Native,    // in user space (module.so), called by the loader
  Kernel,    // a BPF program attached in the kernel
  PerPoint,  // depends on the point's fields (timer: interval timers native, profile kernel);
             // FamilyPoint::native() decides
};

struct ProbeKindInfo {
  ProbeKind kind;
  const char* name;  // "begin", "timer", "tracepoint", ... (messages, unit tests)
  Side side;
};

// The row of `k` (every kind has one).
const ProbeKindInfo& kind_info(ProbeKind k);
inline const char* kind_name(ProbeKind k) { return kind_info(k).name; }

}  // namespace ukstap::probes
