// What a resolved probe point tells the later passes, typed by family: one struct per family
// (probe_kind.h), held in FamilyPoint from resolution (probes/provider.h ResolvedPoint) through
// pass 2 (DerivedProbe) and pass 3 (codegen ProbeInfo) to the attach in pass 5. Numbers are
// numbers here: nothing is written to text for a later pass to parse back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "probes/probe_kind.h"
#include "probes/tracefs.h"

namespace ukstap::probes {

// begin(N), end(N), error(N): run once, in increasing priority (N, 0 when absent).
template <ProbeKind K>
struct RunOncePoint {
  int64_t priority = 0;
};
using BeginPoint = RunOncePoint<ProbeKind::Begin>;
using EndPoint = RunOncePoint<ProbeKind::End>;
using ErrorPoint = RunOncePoint<ProbeKind::Error>;

struct NeverPoint {};

// timer.{s,ms,us,ns,hz,jiffies}(N)[.randomize(M)] and timer.profile(.tick) (tapset-timers.cxx).
struct TimerPoint {
  enum class Kind : uint8_t {
    Hrtimer,  // timer.s/ms/us/ns/hz: an interval timer of the loader's event loop
    Jiffies,  // timer.jiffies(N): the same, N ticks of CONFIG_HZ
    Profile,  // timer.profile: a CPU clock perf event on every CPU at CONFIG_HZ, in the kernel
  };
  Kind kind = Kind::Hrtimer;
  int64_t period_ns = 0, randomize_ns = 0;        // Hrtimer
  int64_t hz = 0;                                 // Hrtimer from timer.hz(N): N; else 0
  int64_t jiffies = 0, randomize_jiffies = 0;     // Jiffies
};

// A tracepoint's C argument from kernel BTF (btf/kernel_btf.h): $name is ctx[index] of a
// tp_btf program, of BTF type type_id.
struct TraceBtfArg {
  std::string name;  // without '$'
  int index = 0;
  uint32_t type_id = 0;
};

// kernel.trace("SYSTEM:EVENT").
struct TracepointPoint {
  std::string system, event;
  long id = -1;  // events/SYSTEM/EVENT/id when resolved
  // syscalls:sys_enter_NAME / sys_exit_NAME whose number is known and whose record the syscall
  // dispatcher rebuilds from the registers (tracepoint_family.cpp): NAME's number; else -1.
  int syscall_nr = -1;
  std::vector<TraceField> fields;  // the format file's fields but common_*, in record order
  std::vector<TraceBtfArg> btf_args;  // the C prototype's arguments, from kernel BTF
  // Set by pass 2 (passes/tracepoint_context.cpp) when the probe reads a BTF argument: the
  // probe is then a tp_btf program, whose context is the arguments, not the event's record.
  bool use_btf_args = false;
  bool is_sys_exit() const { return event.rfind("sys_exit", 0) == 0; }
};

// Which processes a process-family probe is about, checked in the kernel when it fires:
// process(PID), process("PATH") (the file the process runs, by device and inode), and the
// -c/-x target's process tree (the runtime's config, not here).
struct ExeFilter {
  int64_t pid = 0;       // process(PID): that process (tgid); 0: any
  uint64_t kdev = 0;     // the kernel's dev_t (MKDEV: major << 20 | minor) of the file; with
  uint64_t ino = 0;      // ino != 0: only processes whose mm->exe_file is that file
};

// process[("PATH"|PID)].begin/end/thread.begin/thread.end/syscall/syscall.return
// (stapprobes "USER-SPACE": SystemTap's task-finder events).
struct ProcessPoint {
  enum class Event : uint8_t { Begin, End, ThreadBegin, ThreadEnd, Syscall, SyscallReturn };
  Event event = Event::Begin;
  std::string path;  // process("PATH"): canonical; "" when not given
  int64_t pid = 0;   // process(PID); 0 when not given
  ExeFilter filter;  // from path/pid
};

// A function parameter the backend reads from the ABI's argument registers (in order).
struct UprobeParam {
  std::string name;  // "$n"
  std::string type;  // DWARF's type text: "int", "char const*"
};

// An SDT marker's note (.note.stapsdt) fields a uprobe on it needs.
struct SdtMark {
  std::string provider, name;
  std::string args;  // the note's argument text: "8@%rdi -4@%esi" (may be empty)
  int nargs = 0;
  uint64_t semaphore_offset = 0;  // file offset of the semaphore; 0 when none
};

// process("PATH").function("NAME")[.call|.return] and process("PATH").mark("NAME").
struct UprobePoint {
  std::string path;         // the ELF file (canonical)
  uint64_t offset = 0;      // file offset of the probed instruction (what the kernel takes)
  uint64_t address = 0;     // its link-time address (st_value, or the note's pc)
  bool is_return = false;   // .return: a uretprobe
  int64_t pid = 0;          // process(PID): only that process; 0 every process
  // function(...):
  std::string symbol;       // the function's name (probefunc())
  uint64_t size = 0;        // st_size
  std::string debuginfo;    // the file the DWARF came from; "" without DWARF
  std::vector<UprobeParam> params;  // from DWARF, declaration order
  // mark(...):
  std::optional<SdtMark> sdt;
  // plt(...): a PLT stub; `symbol` is the imported name ($$name)
  bool plt = false;
  // process("EXE").library("LIB"): `path` is LIB, the probe fires only in processes running
  // EXE (filter.kdev/ino); pid as above
  ExeFilter filter;
};

// perf.type(T).config(C), perf.sw.NAME, perf.hw.NAME with .sample(N)/.hz(N), .process,
// .counter("NAME").
struct PerfPoint {
  uint32_t type = 1;           // perf_event_attr.type (PERF_TYPE_*)
  uint64_t config = 0;         // perf_event_attr.config
  uint64_t sample_period = 0;  // .sample(N) or the default; 0 when freq is given
  uint64_t freq = 0;           // .hz(N); 0 when sampling by period
  bool per_process = false;    // .process[("PATH")]: the -c/-x target, not every CPU
  std::string process_path;    // .process("PATH") as written; "" for .process
  std::string counter;         // .counter("NAME"); "" when not given
  // Non-empty: this machine cannot serve it (hardware events without a PMU); pass 5 says so.
  std::string unavailable_reason;
};

// procfs("PATH").read[.maxsize(N)] / .write [.umask(U)]: a FIFO in ukstap's procfs directory
// (loader/procfs_files.h), served natively.
struct ProcfsPoint {
  std::string path = "command";  // the file's name in the directory
  bool is_write = false;         // .write: $value is what a writer wrote; else .read
  int64_t maxsize = 0;           // .maxsize(N): $value's limit; 0: the default
  int umask = -1;                // .umask(U); -1 when not given
};

// __input.char, __input.line (tapsets/input.stp's input.char and input.line): the loader reads
// ukstap's standard input and runs the probe per character, or per line (the newline included,
// cut at MAXSTRINGLEN-1 bytes), with the text the tapset's __input_text() returns.
struct InputPoint {
  enum class Unit : uint8_t { Char, Line };
  Unit unit = Unit::Char;
};

// netfilter.hook("HOOK").pf("PF")[.priority("PRIO")] and netfilter.pf(...).hook(...)[...]
// (stapprobes "NETFILTER HOOKS"): a BPF_PROG_TYPE_NETFILTER program linked at (pf, hooknum,
// priority); its return value is the packet's verdict ($verdict). Numbers are the kernel's
// (uapi linux/netfilter.h NFPROTO_*, NF_INET_*/NF_ARP_*/NF_BR_*).
struct NetfilterPoint {
  std::string pf_name;    // "NFPROTO_IPV4", as written
  std::string hook_name;  // "NF_INET_LOCAL_IN", as written
  uint32_t pf = 0;        // NFPROTO_*
  uint32_t hooknum = 0;   // the hook's number within its family
  int32_t priority = 0;   // .priority("P"): a number or NF_IP_PRI_* / NF_IP6_PRI_*; default 0
  // Non-empty: the kernel cannot serve this point (BPF netfilter links take NFPROTO_IPV4 and
  // NFPROTO_IPV6 only): under a wildcard the point is left out, else pass 2 says this.
  std::string unservable;
};

// A parameter of a kernel function, from BTF (its FUNC_PROTO): $name reads it.
struct KernelFunctionParam {
  std::string name;      // without '$'
  uint32_t type_id = 0;  // in the kernel's (vmlinux) BTF
};

// kernel.function("F")[.call|.return], kprobe.function("F")[.return],
// module("M").function("F")[.call|.return] (probes/kernel_function_family.cpp): a function the
// kernel's BTF declares, typed by its prototype. The program is a BPF trampoline (fentry/fexit:
// the arguments are the context) where the kernel has them, else a kprobe/kretprobe (pt_regs,
// arguments in the x86-64 argument registers); `mechanism` says which.
struct KernelFunctionPoint {
  enum class Mechanism : uint8_t { Fentry, Kprobe };
  std::string function;  // the kernel's name of it (probefunc())
  std::string module;    // module("M"): M; "" for vmlinux
  bool is_return = false;
  Mechanism mechanism = Mechanism::Fentry;
  // Set by -D KERNEL_FUNCTION_MECHANISM at resolution, else by pass 3
  // (choose_kernel_function_mechanisms): finding out what the kernel offers loads a program,
  // and passes 1-2 make no bpf() call.
  bool mechanism_chosen = false;
  std::vector<KernelFunctionParam> params;  // declaration order
  uint32_t return_type = 0;                 // 0: void
  // Non-empty: this kernel can attach neither a trampoline nor a kprobe; pass 5 says this.
  std::string unavailable_reason;
};

// One of the structs above; the alternative's index is its ProbeKind.
class FamilyPoint {
 public:
  using Variant = std::variant<BeginPoint, EndPoint, ErrorPoint, NeverPoint, TimerPoint,
                               TracepointPoint, ProcessPoint, UprobePoint, PerfPoint,
                               ProcfsPoint, InputPoint, NetfilterPoint,
                               KernelFunctionPoint>;

  FamilyPoint() = default;  // Begin, priority 0: callers always assign a real one
  template <class T>
  FamilyPoint(T point) : v_(std::move(point)) {}

  ProbeKind kind() const { return static_cast<ProbeKind>(v_.index()); }
  const char* name() const { return kind_name(kind()); }
  bool is(ProbeKind k) const { return kind() == k; }
  // The family's fields, or null when the point is of another family.
  template <class T>
  const T* get() const { return std::get_if<T>(&v_); }
  template <class T>
  T* get() { return std::get_if<T>(&v_); }
  const Variant& variant() const { return v_; }

  // Runs in user space (module.so) rather than as a BPF program: the kind table's side, and
  // for a timer its kind (interval timers are native, timer.profile is a kernel perf event).
  bool native() const;
  // begin(N)/end(N)/error(N): N; 0 for the other families.
  int64_t priority() const;
  // The ELF file a process/uprobe point is about (what the loader follows and builds unwind
  // tables for); "" for other families or when no path was given.
  const std::string& binary_path() const;
  // probefunc() of the point: the function a uprobe or kernel.function is on, else "".
  const std::string& function() const;
  // Non-empty when this machine cannot run the point (pass 5 fails with it before attaching).
  const std::string& unavailable_reason() const;

 private:
  Variant v_;
};

static_assert(std::variant_size_v<FamilyPoint::Variant> == kProbeKindCount);
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ProbeKind::Perf),
                                                       FamilyPoint::Variant>,
                             PerfPoint>);
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ProbeKind::Input),
                                                       FamilyPoint::Variant>,
                             InputPoint>);
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ProbeKind::Netfilter),
                                                       FamilyPoint::Variant>,
                             NetfilterPoint>);
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ProbeKind::Timer),
                                                       FamilyPoint::Variant>,
                             TimerPoint>);

}  // namespace ukstap::probes
