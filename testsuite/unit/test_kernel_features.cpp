// Kernel feature detection and the implementations chosen from it (btf/kernel_features.h):
// given a feature set, which loop implementation, which family-exit test, which error line.
// Truths: the kernel versions that added each feature (bpf_loop 5.17, bpf_iter_num 6.4,
// sched_process_exit's group_dead after 6.1), and for the running kernel /proc/kallsyms
// (a kfunc is a kernel function: bpf_iter_num_new, bpf_rdonly_cast), tracefs's format of
// sched_process_exit, and the verifier's verdict on a program clang compiled that calls
// bpf_rdonly_cast (loaded by libbpf, which resolves the kfunc and the type from the BTF itself).
#include <bpf/libbpf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "btf/kernel_features.h"
#include "driver/profile_mode.h"
#include "test_util.h"

#ifndef UKSTAP_BPF_CLANG
#define UKSTAP_BPF_CLANG "clang-14"
#endif

using namespace ukstap;
using kernel_features::GroupExit;
using kernel_features::LoopImpl;

TEST_CASE("loop implementation from a feature set", "[kernel_features]") {
  using kernel_features::choose_loop;
  // 6.4+: the iterator; 5.17-6.3 (Debian 12's 6.1): bpf_loop; before 5.17: none.
  CHECK(choose_loop(true, true) == LoopImpl::IterNum);
  CHECK(choose_loop(false, true) == LoopImpl::BpfLoop);
  CHECK(choose_loop(false, false) == LoopImpl::None);
  CHECK(choose_loop(true, false) == LoopImpl::IterNum);
  // $UKSTAP_LOOP_IMPL: that one if the kernel has it, else none (an error), never the other.
  CHECK(choose_loop(true, true, "bpf_loop") == LoopImpl::BpfLoop);
  CHECK(choose_loop(true, false, "bpf_loop") == LoopImpl::None);
  CHECK(choose_loop(false, true, "iter") == LoopImpl::None);
  CHECK(choose_loop(true, true, "iter") == LoopImpl::IterNum);
  CHECK(choose_loop(true, true, "none") == LoopImpl::None);
}

TEST_CASE("a kernel without either loop says what it needs in one line", "[kernel_features]") {
  std::string e = kernel_features::loop_unavailable("5.15.0-91-generic");
  CHECK(e ==
        "a loop in a kernel-context probe needs Linux 5.17 (bpf_loop helper) or 6.4 "
        "(bpf_iter_num kfuncs); this kernel (5.15.0-91-generic) has neither");
  CHECK(e.find('\n') == std::string::npos);
  CHECK(kernel_features::loop_unavailable("6.1.0-56-amd64", "iter") ==
        "UKSTAP_LOOP_IMPL=iter: this kernel (6.1.0-56-amd64) has no bpf_iter_num kfuncs (Linux 6.4)");
}

TEST_CASE("--profile -c family exit from the tracepoint's arguments", "[kernel_features]") {
  CHECK(kernel_features::choose_group_exit(true) == GroupExit::GroupDeadArg);
  CHECK(kernel_features::choose_group_exit(false) == GroupExit::SignalLive);
  Options o;
  o.profile_hz = 99;
  o.target_cmd = "ls";
  std::string now = profile_mode::script(o, GroupExit::GroupDeadArg);
  std::string old = profile_mode::script(o, GroupExit::SignalLive);
  CHECK(now.find("if ($group_dead) delete __ukstap_family[pid()]") != std::string::npos);
  CHECK(old.find("$group_dead") == std::string::npos);
  CHECK(old.find("->signal->live->counter == 0) delete __ukstap_family[pid()]") !=
        std::string::npos);
}

TEST_CASE("the running kernel's features agree with kallsyms and tracefs", "[kernel_features]") {
  auto& r = kernel_features::Running::get();
  std::ifstream ks("/proc/kallsyms");
  std::string line;
  bool kallsyms_iter = false, kallsyms_cast = false;
  auto ends = [&](const std::string& s) {
    return line.size() > s.size() && line.compare(line.size() - s.size(), s.size(), s) == 0;
  };
  while (std::getline(ks, line)) {
    if (ends(" bpf_iter_num_new")) kallsyms_iter = true;
    if (ends(" bpf_rdonly_cast")) kallsyms_cast = true;
  }
  CHECK(r.iter_num_kfuncs() == kallsyms_iter);
  CHECK(kernel_features::rdonly_cast_in_btf() == kallsyms_cast);
  // Used only where the kernel has it (the verifier's side: the test below).
  if (r.rdonly_cast_kfunc()) CHECK(kallsyms_cast);
  for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::ifstream f(std::string(root) + "/events/sched/sched_process_exit/format");
    if (!f) continue;
    std::stringstream ss;
    ss << f.rdbuf();
    CHECK(r.exit_group_dead() == (ss.str().find(" group_dead;") != std::string::npos));
    break;
  }
  // bpf_loop (5.17) is older than the iterator (6.4): a kernel with one has the other.
  if (r.iter_num_kfuncs()) CHECK(r.bpf_loop_helper());
  // bpf_rdonly_cast (6.2) too.
  if (r.iter_num_kfuncs()) CHECK(kernel_features::rdonly_cast_in_btf());
  CHECK(!r.release().empty());
}

namespace {

// A program of each type a user-stack walk runs in that calls bpf_rdonly_cast as the runtime
// does (runtime/bpf/stp_bpf_task_uregs.h), written here and compiled by clang: its kfunc and
// pt_regs' type id are resolved by libbpf from the kernel's BTF, not by the code under test.
const char kRdonlyCastC[] = R"(
#define SEC(n) __attribute__((section(n), used))
struct pt_regs { unsigned long first; };
extern void *bpf_rdonly_cast(const void *obj, unsigned int btf_id) __attribute__((section(".ksyms")));
static __attribute__((always_inline)) int walk(unsigned long addr) {
  /* 1: BPF_TYPE_ID_TARGET, bpf_core_type_id_kernel() */
  struct pt_regs *r = bpf_rdonly_cast((void *)addr, __builtin_btf_type_id(*(struct pt_regs *)0, 1));
  return *(volatile unsigned long *)r != 0;
}
SEC("uprobe") int p_uprobe(void *ctx) { return walk(0); }
SEC("perf_event") int p_perf(void *ctx) { return walk(0); }
SEC("tracepoint/sched/sched_switch") int p_tp(void *ctx) { return walk(0); }
SEC("raw_tp/sched_switch") int p_raw(void *ctx) { return walk(0); }
SEC("tp_btf/sched_switch") int p_btf(void *ctx) { return walk(0); }
char LICENSE[] SEC("license") = "GPL";
)";

// The compiled object (once; "" when clang fails).
const std::string& rdonly_cast_object() {
  static test::TempDir dir("rdcast");
  static std::string obj = [] {
    std::string src = dir.write("rdcast.bpf.c", kRdonlyCastC), o = dir / "rdcast.bpf.o";
    return test::sh(std::string(UKSTAP_BPF_CLANG) + " -target bpf -O2 -g -c '" + src + "' -o '" + o + "'")
               ? o
               : std::string();
  }();
  return obj;
}

// The verifier's verdict: every program of the object loads.
bool verifier_takes(const std::string& obj) {
  struct bpf_object* o = bpf_object__open_file(obj.c_str(), nullptr);
  if (!o) return false;
  bool ok = bpf_object__load(o) == 0;
  bpf_object__close(o);
  return ok;
}

}  // namespace

TEST_CASE("bpf_rdonly_cast is used where the verifier takes a program that calls it", "[kernel_features]") {
  if (geteuid() != 0) return test::skip_outside_ci("loading BPF programs needs root");
  const std::string& obj = rdonly_cast_object();
  REQUIRE(!obj.empty());
  bool in_btf = kernel_features::rdonly_cast_in_btf();
  bool takes = in_btf && verifier_takes(obj);
  CHECK(kernel_features::Running::get().rdonly_cast_kfunc() == takes);

  // A kernel that names the kfunc but refuses the program (as one without a JIT would): here,
  // the same kernel refusing an unprivileged caller (nobody) every BPF program type a walk runs
  // in; bpf() refuses nobody before the verifier runs, so this covers "load refused, helper
  // path", not a verifier refusing the call itself. The BTF still names it; the choice must
  // follow the load's verdict, to the helper path.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    char got[3] = {'?', '?', '?'};
    if (::setresgid(65534, 65534, 65534) == 0 && ::setresuid(65534, 65534, 65534) == 0) {
      libbpf_set_print(nullptr);  // the refusals are expected
      got[0] = kernel_features::rdonly_cast_in_btf() ? '1' : '0';
      got[1] = kernel_features::rdonly_cast_callable() ? '1' : '0';
      got[2] = verifier_takes(obj) ? '1' : '0';
    }
    (void)!::write(fds[1], got, sizeof got);
    ::_exit(0);
  }
  ::close(fds[1]);
  char got[4] = {};
  REQUIRE(::read(fds[0], got, 3) == 3);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO("as nobody: in BTF, chosen, verifier took the program = " << got);
  CHECK(got[0] == (in_btf ? '1' : '0'));
  CHECK(got[2] == '0');
  CHECK(got[1] == got[2]);
}
