#include "btf/kernel_features.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <cerrno>
#include <cstring>

#include <cstdlib>

#include "btf/kernel_btf.h"

namespace ukstap::kernel_features {

Running& Running::get() {
  static Running r;
  return r;
}

const std::string& Running::release() {
  if (!release_) {
    struct utsname u {};
    release_ = uname(&u) == 0 ? std::string(u.release) : std::string("unknown");
  }
  return *release_;
}

bool Running::iter_num_kfuncs() {
  if (!iter_num_) {
    std::string why;
    const btf::KernelBtf* k = btf::KernelBtf::get(why);
    bool all = k != nullptr;
    for (const char* f : {"bpf_iter_num_new", "bpf_iter_num_next", "bpf_iter_num_destroy"})
      all = all && btf__find_by_name_kind(k->raw(), f, BTF_KIND_FUNC) > 0;
    iter_num_ = all;
  }
  return *iter_num_;
}

namespace {

// Whether the verifier lets a program of `type` call bpf_rdonly_cast (BTF id `kfunc`) as
// runtime/bpf/stp_bpf_task_uregs.h does: on a scalar address, typed as struct pt_regs (BTF id
// `regs`), one 8-byte load through the result. A kernel can name the kfunc in its BTF and still
// refuse the call (the interpreter, or a JIT without kfunc calls; a caller without CAP_PERFMON;
// a program type the kfunc is not registered for), and the module would then fail at load: the
// verifier's verdict decides.
// `attach_btf_id`: the tracepoint's btf_trace_<event> type for a tp_btf program, else 0.
bool rdonly_cast_loads(enum bpf_prog_type type, int kfunc, int regs, int attach_btf_id) {
  struct bpf_insn insns[6] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r1 = 0 (an address: a scalar, as t->stack + off)
  insns[0].dst_reg = BPF_REG_1;
  insns[1].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r2 = BTF id of struct pt_regs
  insns[1].dst_reg = BPF_REG_2;
  insns[1].imm = regs;
  insns[2].code = BPF_JMP | BPF_CALL;  // r0 = bpf_rdonly_cast(r1, r2): a vmlinux kfunc
  insns[2].src_reg = BPF_PSEUDO_KFUNC_CALL;
  insns[2].imm = kfunc;
  insns[3].code = BPF_LDX | BPF_MEM | BPF_DW;  // r0 = *(u64 *)(r0 + 0): a fault-safe load
  insns[3].dst_reg = BPF_REG_0;
  insns[3].src_reg = BPF_REG_0;
  insns[4].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = 0
  insns[5].code = BPF_JMP | BPF_EXIT;
  LIBBPF_OPTS(bpf_prog_load_opts, opts);
  if (attach_btf_id > 0) {
    opts.expected_attach_type = BPF_TRACE_RAW_TP;
    opts.attach_btf_id = static_cast<__u32>(attach_btf_id);
  }
  int fd = bpf_prog_load(type, "ukstap_rdcast", "GPL", insns, 6, &opts);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

}  // namespace

// bpf_rdonly_cast's BTF id in the kernel's BTF; <= 0 when it is not there (or no BTF).
static int rdonly_cast_btf_id() {
  std::string why;
  const btf::KernelBtf* k = btf::KernelBtf::get(why);
  return k ? btf__find_by_name_kind(k->raw(), "bpf_rdonly_cast", BTF_KIND_FUNC) : -1;
}

bool rdonly_cast_in_btf() { return rdonly_cast_btf_id() > 0; }

bool rdonly_cast_callable() {
  // The BTF first (a name lookup): a kernel without the kfunc loads nothing. Then one program
  // per type a user-stack walk runs in (a uprobe's, a perf event's, a tracepoint's, a raw
  // tracepoint's and a tp_btf/fentry one's): the -D is the whole module's, so all must take
  // it. ~40 us a load on the build machine's 6.18 (0.1 ms the tp_btf one): ~0.3 ms a run.
  std::string why;
  const btf::KernelBtf* k = btf::KernelBtf::get(why);
  if (!k) return false;
  int kfunc = rdonly_cast_btf_id();
  int regs = btf__find_by_name_kind(k->raw(), "pt_regs", BTF_KIND_STRUCT);
  if (kfunc <= 0 || regs <= 0) return false;
  for (auto type : {BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_PERF_EVENT, BPF_PROG_TYPE_TRACEPOINT,
                    BPF_PROG_TYPE_RAW_TRACEPOINT})
    if (!rdonly_cast_loads(type, kfunc, regs, 0)) return false;
  // tp_btf needs a tracepoint to type its context: sched_switch (every kernel with BTF has it).
  int tp = btf__find_by_name_kind(k->raw(), "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
  return tp <= 0 || rdonly_cast_loads(BPF_PROG_TYPE_TRACING, kfunc, regs, tp);
}

bool Running::rdonly_cast_kfunc() {
  if (!rdonly_cast_) rdonly_cast_ = rdonly_cast_callable();
  return *rdonly_cast_;
}

bool Running::bpf_loop_helper() {
  // libbpf loads a one-instruction program calling the helper: 1 when the verifier knows it.
  if (!bpf_loop_) bpf_loop_ = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, nullptr) == 1;
  return *bpf_loop_;
}

const std::string& Running::fentry_failure(const std::string& function) {
  if (fentry_why_) return *fentry_why_;
  fentry_why_ = [&]() -> std::string {
    std::string why;
    const btf::KernelBtf* k = btf::KernelBtf::get(why);
    if (!k) return why;
    // bpf_fentry_test1 exists for BPF's own tests and is never called otherwise: attaching to
    // it briefly disturbs nothing. Else the function the script probes.
    int id = btf__find_by_name_kind(k->raw(), "bpf_fentry_test1", BTF_KIND_FUNC);
    if (id <= 0) id = btf__find_by_name_kind(k->raw(), function.c_str(), BTF_KIND_FUNC);
    if (id <= 0) return "no BTF function to try a trampoline on";
    struct bpf_insn insns[2] = {};
    insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = 0
    insns[1].code = BPF_JMP | BPF_EXIT;
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
                .attach_btf_id = (__u32)id);
    int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "ukstap_fentry", "GPL", insns, 2, &opts);
    if (fd < 0)
      return std::string("the kernel refuses to load an fentry program (") + std::strerror(errno) + ")";
    int link = bpf_link_create(fd, 0, BPF_TRACE_FENTRY, nullptr);
    int err = errno;
    ::close(fd);
    if (link < 0)
      return std::string("the kernel refuses to attach a BPF trampoline (") + std::strerror(err) + ")";
    ::close(link);
    return "";
  }();
  return *fentry_why_;
}

bool Running::exit_group_dead() {
  if (!group_dead_) {
    std::string why;
    bool found = false;
    if (const btf::KernelBtf* k = btf::KernelBtf::get(why))
      for (const auto& a : btf::tracepoint_args(*k, "sched_process_exit"))
        if (a.name == "group_dead") found = true;
    group_dead_ = found;
  }
  return *group_dead_;
}

LoopImpl choose_loop(bool iter_num_kfuncs, bool bpf_loop_helper, const std::string& forced) {
  // A forced choice the kernel lacks is refused (loop_unavailable says so), never swapped for
  // the other: a test that forces one must be testing that one.
  if (forced == "none") return LoopImpl::None;
  if (forced == "bpf_loop") return bpf_loop_helper ? LoopImpl::BpfLoop : LoopImpl::None;
  if (forced == "iter") return iter_num_kfuncs ? LoopImpl::IterNum : LoopImpl::None;
  if (iter_num_kfuncs) return LoopImpl::IterNum;
  if (bpf_loop_helper) return LoopImpl::BpfLoop;
  return LoopImpl::None;
}

std::string loop_unavailable(const std::string& release, const std::string& forced) {
  if (forced == "bpf_loop")
    return "UKSTAP_LOOP_IMPL=bpf_loop: this kernel (" + release +
           ") has no bpf_loop helper (Linux 5.17)";
  if (forced == "iter")
    return "UKSTAP_LOOP_IMPL=iter: this kernel (" + release +
           ") has no bpf_iter_num kfuncs (Linux 6.4)";
  return "a loop in a kernel-context probe needs Linux 5.17 (bpf_loop helper) or 6.4 "
         "(bpf_iter_num kfuncs); this kernel (" + release + ") has neither";
}

std::string forced_loop() {
  const char* f = std::getenv("UKSTAP_LOOP_IMPL");
  return f ? f : "";
}

LoopImpl running_loop() {
  static std::optional<LoopImpl> chosen;
  if (!chosen) {
    Running& r = Running::get();
    std::string forced = forced_loop();
    // The kfuncs are looked up first: when they exist, no program needs loading to probe.
    bool iter = r.iter_num_kfuncs();
    bool loop = (forced == "bpf_loop" || !iter) ? r.bpf_loop_helper() : false;
    chosen = choose_loop(iter, loop, forced);
  }
  return *chosen;
}

GroupExit choose_group_exit(bool exit_group_dead) {
  return exit_group_dead ? GroupExit::GroupDeadArg : GroupExit::SignalLive;
}

}  // namespace ukstap::kernel_features
