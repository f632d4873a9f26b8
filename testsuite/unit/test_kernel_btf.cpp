// Kernel types from BTF (translator/btf/): type lookup, tracepoint arguments, and the access
// walk's types, C and errors. Truths: the kernel's own tracepoint prototypes
// (include/trace/events/sched.h TP_PROTO(bool preempt, struct task_struct *prev,
// struct task_struct *next, unsigned int prev_state); block.h's block_rq class: (struct
// request *rq)) and C's rules for the members used.
#include <catch2/catch.hpp>

#include "btf/kernel_access.h"
#include "btf/kernel_btf.h"
#include "driver/diagnostics.h"
#include "test_util.h"

using namespace ukstap;

namespace {

const btf::KernelBtf* kernel_or_skip() {
  std::string why;
  const btf::KernelBtf* k = btf::KernelBtf::get(why);
  if (!k) test::skip_outside_ci(why);
  return k;
}

ast::TargetComponent member(const std::string& m) {
  ast::TargetComponent c;
  c.kind = ast::TargetComponent::Kind::StructMember;
  c.member = m;
  return c;
}
ast::TargetComponent index(int64_t i) {
  ast::TargetComponent c;
  c.kind = ast::TargetComponent::Kind::LiteralIndex;
  c.num_index = i;
  return c;
}

struct Lines : btf::CodeSink {
  std::vector<std::string> lines;
  int temps = 0;
  void line(const std::string& t) override { lines.push_back(t); }
  std::string tmp_long() override { return "t" + std::to_string(temps++); }
  std::string tmp_str() override { return "s" + std::to_string(temps++); }
  std::string eval_long(ast::Expression*) override { return "idx"; }
};

btf::AccessStart task_arg(const btf::KernelBtf& k) {
  btf::AccessStart st;
  st.what = "$next";
  st.points_to = k.find_type("task_struct");
  st.value = "v";
  return st;
}

std::string error_of(const btf::KernelBtf& k, const std::vector<ast::TargetComponent>& comps) {
  try {
    btf::walk_access(k, task_arg(k), comps, false, nullptr, nullptr);
  } catch (const SemanticError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("kernel BTF: types by name, tracepoint arguments", "[btf]") {
  const btf::KernelBtf* k = kernel_or_skip();
  if (!k) return;
  uint32_t task = k->find_type("task_struct");
  CHECK(task != 0);
  CHECK(k->find_type("struct task_struct") == task);
  CHECK(k->find_type("no_such_type_anywhere") == 0);
  CHECK(k->c_name(task) == "struct task_struct");

  auto args = btf::tracepoint_args(*k, "sched_switch");
  REQUIRE(args.size() == 4);
  CHECK(args[0].name == "preempt");
  CHECK(args[1].name == "prev");
  CHECK(args[2].name == "next");
  CHECK(args[3].name == "prev_state");
  CHECK(args[2].index == 2);
  CHECK(k->describe(args[1].type_id) == "struct task_struct*");
  // An event of a class (block_rq): its own prototype, not the class glue's name.
  auto rq = btf::tracepoint_args(*k, "block_rq_issue");
  REQUIRE(rq.size() == 1);
  CHECK(rq[0].name == "rq");
  CHECK(k->describe(rq[0].type_id) == "struct request*");
  CHECK(btf::tracepoint_args(*k, "no_such_event").empty());
}

TEST_CASE("kernel BTF: access types, C and errors", "[btf]") {
  const btf::KernelBtf* k = kernel_or_skip();
  if (!k) return;
  // pid_t pid: a number; char comm[16]: a char array (address, or string when wanted)
  CHECK(btf::walk_access(*k, task_arg(*k), {member("pid")}, false, nullptr, nullptr).type ==
        ast::Type::Long);
  auto comm = btf::walk_access(*k, task_arg(*k), {member("comm")}, false, nullptr, nullptr);
  CHECK(comm.char_array);
  CHECK(comm.type == ast::Type::Long);
  CHECK(btf::walk_access(*k, task_arg(*k), {member("comm")}, false, nullptr, nullptr, true).type ==
        ast::Type::String);
  CHECK(btf::walk_access(*k, task_arg(*k), {member("comm"), index(0)}, false, nullptr, nullptr)
            .type == ast::Type::Long);

  // ->mm->start_code: the pointer mm read first, start_code read through it (CO-RE paths
  // on block locals, never on the context's temps).
  Lines out;
  auto r = btf::walk_access(*k, task_arg(*k), {member("mm"), member("start_code")}, false,
                            nullptr, &out);
  REQUIRE(out.lines.size() == 2);
  CHECK(out.lines[0] ==
        "{ struct task_struct *b__ = (struct task_struct *)(unsigned long)(v); t0 = "
        "STP_KREAD_INT(b__->mm, 0); }");
  CHECK(out.lines[1] ==
        "{ struct mm_struct *b__ = (struct mm_struct *)(unsigned long)(t0); t1 = "
        "STP_KREAD_INT(b__->start_code, 0); }");
  CHECK(r.value == "t1");

  CHECK(error_of(*k, {member("pidd")}).rfind("struct task_struct has no member 'pidd' (similar: ", 0) == 0);
  CHECK(error_of(*k, {member("pid"), member("x")}) ==
        "'->x' on '$next->pid', which is pid_t, not a struct, union or pointer");
  CHECK(error_of(*k, {member("comm"), index(16)}) ==
        "index 16 is out of range for '$next->comm' (char[16])");
  CHECK(error_of(*k, {member("se")}).find("is struct sched_entity") != std::string::npos);
}
