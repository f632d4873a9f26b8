// What the running kernel offers that ukstap's generated BPF depends on, detected once per run,
// and the implementation chosen from it: ukstap runs on distribution kernels (Debian 12: 6.1)
// that lack what it prefers on a new one, and says in one line what an old one lacks.
//
// Detection is lazy (each answer is computed the first time a script needs it) and cheap: a
// kfunc is a name looked up in the vmlinux BTF already loaded for typing (btf/kernel_btf.h)
// (for bpf_rdonly_cast, which a user-stack walk calls in any program type, also a tiny program
// load per type), a helper is libbpf's probe (one tiny program load), a tracepoint argument is
// BTF again, BPF trampolines one program load and link. Only passes 3-5 ask what needs a
// program load.
// Decisions are plain functions of a feature set, so unit tests give them a fake one.
#pragma once

#include <optional>
#include <string>

namespace ukstap::kernel_features {

// The running kernel's, detected on first use of each field and cached for the run.
class Running {
 public:
  static Running& get();
  const std::string& release();
  bool iter_num_kfuncs();
  bool bpf_loop_helper();
  bool exit_group_dead();
  // The bpf_rdonly_cast kfunc (Linux 6.2) in the BTF and callable: the walk then reads the
  // task's saved user registers at a fixed offset from its stack page instead of calling
  // bpf_task_pt_regs (runtime/bpf/stp_bpf_task_uregs.h). Callable: the verifier accepts a
  // tiny program of each type a walk runs in that calls it as the runtime does (a few program
  // loads, once a run: rdonly_cast_callable below); else the helper path, which every kernel
  // with BTF has.
  bool rdonly_cast_kfunc();
  // BPF trampolines (fentry/fexit): an fentry program loaded on a kernel function and attached
  // (a BPF link, closed at once): the verifier and ftrace decide, not a config guess. "" when
  // they work, else what failed. `function`: tried when bpf_fentry_test1 is not in the BTF.
  const std::string& fentry_failure(const std::string& function);

 private:
  std::optional<std::string> release_, fentry_why_;
  std::optional<bool> iter_num_, bpf_loop_, group_dead_, rdonly_cast_;
};

// ---- the walk's user registers (runtime/bpf/stp_bpf_task_uregs.h) ----------------------------
// The kernel's BTF names the bpf_rdonly_cast kfunc.
bool rdonly_cast_in_btf();
// ... and the verifier accepts a call of it as the runtime makes it (on a scalar address, typed
// struct pt_regs, one load through the result) in a program of each type a user-stack walk
// runs in. Uncached: Running::rdonly_cast_kfunc() asks once a run. Not probed: netfilter
// (SEC("netfilter")): its program type only exists from Linux 6.4, so a failed load there would
// take the cast from every 6.2-6.3 module; bpf_rdonly_cast is one of the kfuncs the kernel
// registers for every program type, so where the others take it a netfilter walk is expected
// to as well (not checked on a kernel where they differ).
bool rdonly_cast_callable();

// ---- loops in kernel-context probes (for, while) --------------------------------------------
enum class LoopImpl {
  IterNum,  // open-coded iterator: STP_LOOP (bpf_iter_num), verified once per loop
  BpfLoop,  // the body in a callback run by bpf_loop()
  None,     // neither: a loop cannot be compiled for this kernel
};
// `forced` is $UKSTAP_LOOP_IMPL ("iter", "bpf_loop", "none" or empty): tests run both
// implementations on one kernel, and see the error of a kernel with neither ("none"). A
// forced implementation the kernel lacks is not chosen.
LoopImpl choose_loop(bool iter_num_kfuncs, bool bpf_loop_helper, const std::string& forced = "");
// The error line when the choice is None ("" otherwise).
std::string loop_unavailable(const std::string& release, const std::string& forced = "");
// $UKSTAP_LOOP_IMPL ("" when unset).
std::string forced_loop();
// The choice for the running kernel, made once (reads $UKSTAP_LOOP_IMPL).
LoopImpl running_loop();

// ---- the end of a whole process at sched_process_exit ----------------------------------------
enum class GroupExit {
  GroupDeadArg,   // the tracepoint's own `group_dead` argument
  SignalLive,     // task->signal->live is 0: do_exit decremented it before the tracepoint
};
GroupExit choose_group_exit(bool exit_group_dead);

}  // namespace ukstap::kernel_features
