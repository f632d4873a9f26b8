// passes/kernel_module_c.h: which embedded C only SystemTap's kernel module can compile. The
// cases are hand-written C: the kernel's `current` task and stap's CONTEXT are found in code,
// not in comments, strings or a local of the same name; headers count only when the
// user-space headers do not have them.
#include <catch2/catch.hpp>
#include <filesystem>

#include "passes/kernel_module_c.h"

using ukstap::passes::kernel_module_only_use;

TEST_CASE("kernel-module C: current and CONTEXT in code", "[kernel_c]") {
  CHECK(kernel_module_only_use("STAP_RETURN(current->pid);") == "current->");
  CHECK(kernel_module_only_use("STAP_RETURN(task_pid_nr(current));") == "current");
  CHECK(kernel_module_only_use("x = f(a, current, b);") == "current");
  CHECK(kernel_module_only_use("struct pt_regs *r = CONTEXT->kregs;") == "CONTEXT->");
  CHECK(kernel_module_only_use("THIS->__retvalue = 1;") == "THIS->");
}

TEST_CASE("kernel-module C: not in comments, strings or own names", "[kernel_c]") {
  CHECK(kernel_module_only_use("/* the current->pid of the task */ STAP_RETURN(1);").empty());
  CHECK(kernel_module_only_use("// CONTEXT->regs\nSTAP_RETURN(1);").empty());
  CHECK(kernel_module_only_use("const char *s = \"current->pid\"; STAP_RETURN(0);").empty());
  CHECK(kernel_module_only_use("long current = 1; STAP_RETURN(current);").empty());
  CHECK(kernel_module_only_use("struct task_struct *current = 0; STAP_RETURN(f(current));")
            .empty());
  CHECK(kernel_module_only_use("STAP_RETURN(s.current + p->current);").empty());
  CHECK(kernel_module_only_use("long recurrent = 2; STAP_RETURN(recurrent);").empty());
  CHECK(kernel_module_only_use("bpf_get_current_task_btf();").empty());
}

TEST_CASE("kernel-module C: kernel-only headers", "[kernel_c]") {
  // linux/fdtable.h is internal to the kernel tree: no uapi copy exists.
  CHECK(kernel_module_only_use("#include <linux/fdtable.h>\n") == "<linux/fdtable.h>");
  CHECK(kernel_module_only_use("#include <stdio.h>\n").empty());
  if (std::filesystem::exists("/usr/include/linux/types.h"))
    CHECK(kernel_module_only_use("#  include <linux/types.h>\n").empty());
}
