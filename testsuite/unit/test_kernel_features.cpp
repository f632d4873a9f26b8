// Kernel feature detection and the implementations chosen from it (btf/kernel_features.h):
// given a feature set, which loop implementation, which family-exit test, which error line.
// Truths: the kernel versions that added each feature (bpf_loop 5.17, bpf_iter_num 6.4,
// sched_process_exit's group_dead after 6.1), and for the running kernel /proc/kallsyms
// (a kfunc is a kernel function: bpf_iter_num_new, bpf_rdonly_cast) and tracefs's format of
// sched_process_exit.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "btf/kernel_features.h"
#include "driver/profile_mode.h"

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
  CHECK(r.rdonly_cast_kfunc() == kallsyms_cast);
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
  if (r.iter_num_kfuncs()) CHECK(r.rdonly_cast_kfunc());
  CHECK(!r.release().empty());
}
