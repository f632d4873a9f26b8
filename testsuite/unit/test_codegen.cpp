// Pass 2's deciding analyses (passes/analyses.h) and pass 3's code for each probe family.
// Each script runs passes 1-3 in-process against the tree's tapsets, then pass 4 compiles the
// generated C with clang and cc as `ukstap -p4` does. The truth is the compiled objects read
// with libelf (which BPF programs exist, in which ELF sections; which probe handlers the native
// module exports), the kernel's own tracefs format files, <sys/syscall.h> and readelf -n --
// never the generated C text or the tables pass 3 writes about itself.
#include "test_util.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "driver/passes.h"
#include "codegen/module_info.h"
#include "driver/session.h"
#include "loader/passes.h"
#include "passes/analyses.h"

using namespace ukstap;
using passes::ProbeSide;

namespace {

// Passes 1-3 (and 4 on request) on one script; records the pass that failed.
struct Script {
  std::ostringstream err;
  Session s{err};
  int failed_pass = 0;

  explicit Script(const std::string& text,
                  std::vector<std::pair<std::string, std::string>> defines = {}) {
    s.opts.script_text = text;
    s.opts.have_script_text = true;
    s.opts.last_pass = 4;
    s.opts.defines = std::move(defines);
    if (pass1_parse(s) != 0 || s.diag.parse_errors() > 0) {
      failed_pass = 1;
    } else if (pass2_elaborate(s) != 0) {
      failed_pass = 2;
    } else if (pass3_translate(s) != 0) {
      failed_pass = 3;
    }
  }
  const passes::Analyses& a() const {
    REQUIRE(s.analyses);
    return *s.analyses;
  }
  // The derived probes in script order (a tapset alias can add none: these scripts name
  // built-in points only).
  const DerivedProbe& probe(size_t i) const {
    REQUIRE(i < s.probes.size());
    return *s.probes[i];
  }
  const ast::Function* function(const std::string& name) const {
    for (auto* f : s.functions)
      if (f->name == name) return f;
    FAIL("no function " << name);
    return nullptr;
  }
  // Pass 4: clang for the BPF object, cc for the native module.
  bool compile() {
    if (failed_pass) return false;
    if (pass4_compile(s) != 0) {
      failed_pass = 4;
      return false;
    }
    return true;
  }
};

// Function symbols of an ELF file by name -> the name of the section holding them: from
// .symtab (a BPF object: its programs, global functions in executable sections) or .dynsym
// (the native module: what it exports).
std::map<std::string, std::string> elf_functions(const std::string& path, bool dynamic) {
  std::map<std::string, std::string> out;
  elf_version(EV_CURRENT);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  REQUIRE(elf);
  size_t shstrndx = 0;
  REQUIRE(elf_getshdrstrndx(elf, &shstrndx) == 0);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    if (sh.sh_type != (dynamic ? SHT_DYNSYM : SHT_SYMTAB)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(data, static_cast<int>(i), &sym);
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || GELF_ST_BIND(sym.st_info) != STB_GLOBAL ||
          sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
        continue;
      GElf_Shdr target;
      gelf_getshdr(elf_getscn(elf, sym.st_shndx), &target);
      if (!(target.sh_flags & SHF_EXECINSTR)) continue;
      out[elf_strptr(elf, sh.sh_link, sym.st_name)] = elf_strptr(elf, shstrndx, target.sh_name);
    }
  }
  elf_end(elf);
  ::close(fd);
  return out;
}

// Only the handlers the script's probes made (stp_probe_N) and the syscall dispatchers
// (stp_sys_*): the runtime's own programs are not what these tests are about.
std::map<std::string, std::string> probe_programs(const std::string& bpf_object) {
  std::map<std::string, std::string> out;
  if (bpf_object.empty()) return out;
  for (auto& [name, section] : elf_functions(bpf_object, false))
    if (name.rfind("stp_probe_", 0) == 0 || name.rfind("stp_sys_", 0) == 0) out[name] = section;
  return out;
}
std::vector<std::string> native_handlers(const std::string& native_module) {
  std::vector<std::string> out;
  if (native_module.empty()) return out;
  for (auto& [name, section] : elf_functions(native_module, true))
    if (name.rfind("stp_probe_", 0) == 0) out.push_back(name);
  return out;
}

using Programs = std::map<std::string, std::string>;
using Names = std::vector<std::string>;

// The offset tracefs gives for one field of an event ("field:pid_t prev_pid;\toffset:24;...").
int tracefs_offset(const std::string& system, const std::string& event, const std::string& field) {
  for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::ifstream in(std::string(root) + "/events/" + system + "/" + event + "/format");
    if (!in) continue;
    std::string line;
    std::regex re("field:[^;]*[ *]" + field + "(\\[[0-9]*\\])?;\\s*offset:([0-9]+);");
    std::smatch m;
    while (std::getline(in, line))
      if (std::regex_search(line, m, re)) return std::stoi(m[2]);
  }
  return -1;
}

}  // namespace

// ------------------------------------------------------------------------- begin / end / never

TEST_CASE("codegen: a begin/end script is all native: no BPF object, two exported handlers",
          "[codegen]") {
  Script t("probe begin { println(\"a\") }\nprobe end { println(\"b\") }");
  REQUIRE(t.failed_pass == 0);
  CHECK(t.a().placement.of(t.probe(0)) == ProbeSide::Native);
  CHECK(t.a().placement.of(t.probe(1)) == ProbeSide::Native);
  CHECK_FALSE(t.a().dispatch.enabled);
  REQUIRE(t.compile());
  CHECK(t.s.bpf_object_path.empty());  // nothing runs in the kernel, no map to share
  CHECK(native_handlers(t.s.native_object_path) == Names{"stp_probe_0", "stp_probe_1"});
}

TEST_CASE("codegen: a never probe is placed nowhere and what it calls is compiled for no side",
          "[codegen]") {
  Script t("function f() { return 1 }\nprobe never { f() }\nprobe begin { println(2) }");
  REQUIRE(t.failed_pass == 0);
  CHECK(t.a().placement.of(t.probe(0)) == ProbeSide::None);
  CHECK(t.a().placement.of(t.probe(1)) == ProbeSide::Native);
  const ast::Function* f = t.function("f");
  CHECK_FALSE(t.a().reach.reaches(f, ProbeSide::Kernel));
  CHECK_FALSE(t.a().reach.reaches(f, ProbeSide::Native));
  REQUIRE(t.compile());
  CHECK(native_handlers(t.s.native_object_path) == Names{"stp_probe_0"});  // begin only
}

// ---------------------------------------------------------------------------------- timers

TEST_CASE("codegen: interval timers run natively, timer.profile is a perf_event program",
          "[codegen]") {
  Script t("global n\nprobe timer.s(1) { n++ }\nprobe timer.profile { n++ }\n"
           "probe timer.ms(100) { n++ }\nprobe end { println(n) }");
  REQUIRE(t.failed_pass == 0);
  CHECK(t.a().placement.of(t.probe(0)) == ProbeSide::Native);
  CHECK(t.a().placement.of(t.probe(1)) == ProbeSide::Kernel);
  CHECK(t.a().placement.of(t.probe(2)) == ProbeSide::Native);
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) == Programs{{"stp_probe_1", "perf_event"}});
  CHECK(native_handlers(t.s.native_object_path) == Names{"stp_probe_0", "stp_probe_2", "stp_probe_3"});
}

// ----------------------------------------------------------------------------- tracepoints

TEST_CASE("codegen: a tracepoint probe is a program in tracepoint/SYSTEM/EVENT; its format is "
          "read at resolution",
          "[codegen]") {
  int offset = tracefs_offset("sched", "sched_switch", "prev_pid");
  if (offset < 0) {
    ukstap::test::skip_outside_ci("no readable tracefs sched:sched_switch format");
    return;
  }
  Script t("global n\nprobe kernel.trace(\"sched:sched_switch\") { n += $prev_pid }");
  REQUIRE(t.failed_pass == 0);
  CHECK(t.a().placement.of(t.probe(0)) == ProbeSide::Kernel);
  const probes::TracepointPoint* ev = t.probe(0).family.get<probes::TracepointPoint>();
  REQUIRE(ev);
  int found = -1;
  for (auto& f : ev->fields)
    if (f.name == "prev_pid") found = f.offset;
  CHECK(found == offset);
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) ==
        Programs{{"stp_probe_0", "tracepoint/sched/sched_switch"}});
  CHECK(native_handlers(t.s.native_object_path).empty());
}

// A fixed-size char array field ($prev_comm is char[16]) is read through STP_TP_STR(c, dst,
// offset, size): at most size characters.
TEST_CASE("codegen: a char[] tracepoint field compiles", "[codegen]") {
  if (tracefs_offset("sched", "sched_switch", "prev_comm") < 0) {
    FAIL("no readable tracefs sched:sched_switch format");
  }
  Script t("probe kernel.trace(\"sched:sched_switch\") { println($prev_comm) }");
  REQUIRE(t.failed_pass == 0);
  REQUIRE(t.compile());
}

// ------------------------------------------------------------------------ syscall dispatch

namespace {
const char* kOpenatClose =
    "global n\nprobe kernel.trace(\"syscalls:sys_enter_openat\") { n++ }\n"
    "probe kernel.trace(\"syscalls:sys_enter_close\") { n++ }";
bool have_syscall_events() {
  return tracefs_offset("syscalls", "sys_enter_openat", "dfd") >= 0 &&
         tracefs_offset("syscalls", "sys_enter_close", "fd") >= 0;
}
}  // namespace

TEST_CASE("codegen: two syscall probes go through the dispatcher: raw_tp programs, slots by "
          "syscall number",
          "[codegen]") {
  if (!have_syscall_events()) {
    ukstap::test::skip_outside_ci("no syscalls:sys_enter_openat/close tracepoints");
    return;
  }
  Script t(kOpenatClose);
  REQUIRE(t.failed_pass == 0);
  const auto& d = t.a().dispatch;
  CHECK(d.enabled);
  REQUIRE(d.of(t.probe(0)));
  REQUIRE(d.of(t.probe(1)));
  CHECK(d.of(t.probe(0))->nr == SYS_openat);
  CHECK(d.of(t.probe(1))->nr == SYS_close);
  CHECK_FALSE(d.of(t.probe(0))->exit);
  CHECK(d.of(t.probe(0))->slot == 0);
  CHECK(d.of(t.probe(1))->slot == 0);
  CHECK(d.max_slots[0] == 1);
  CHECK(d.max_slots[1] == 0);
  REQUIRE(t.compile());
  // Both bodies are `n++`: one program, at both numbers (codegen/shared_programs.h).
  CHECK(probe_programs(t.s.bpf_object_path) == Programs{{"stp_probe_0", "raw_tp"},
                                                        {"stp_sys_enter_0", "raw_tp/sys_enter"}});
  REQUIRE(t.s.module->probes.size() >= 2);  // and the display of n at the end
  CHECK(t.s.module->probes[0].program == -1);
  CHECK(t.s.module->probes[1].program == 0);
  CHECK(t.s.module->source.find("[" + std::to_string(SYS_openat) + "] = 1, [" +
                                std::to_string(SYS_close) + "] = 2,") != std::string::npos);
}

TEST_CASE("codegen: syscall probes share a program only with the same code, direction and slot",
          "[codegen]") {
  if (!have_syscall_events()) {
    ukstap::test::skip_outside_ci("no syscalls:sys_enter_openat/close tracepoints");
    return;
  }
  // 0 and 2 are the same code; 1 reads another variable; 3 is a return probe; 4 is close's
  // second probe (slot 1), the same code as 0 but not at the same place in the prog array.
  Script t("global n, m\n"
           "probe kernel.trace(\"syscalls:sys_enter_openat\") { n++ }\n"
           "probe kernel.trace(\"syscalls:sys_enter_read\") { m++ }\n"
           "probe kernel.trace(\"syscalls:sys_enter_close\") { n++ }\n"
           "probe kernel.trace(\"syscalls:sys_exit_close\") { n++ }\n"
           "probe kernel.trace(\"syscalls:sys_enter_close\") { n++ }\n");
  REQUIRE(t.failed_pass == 0);
  std::vector<int> program;
  for (auto& p : t.s.module->probes)
    if (p.syscall_slot >= 0) program.push_back(p.program);  // not the display of n and m
  CHECK(program == std::vector<int>{-1, -1, 0, -1, -1});
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) == Programs{{"stp_probe_0", "raw_tp"},
                                                        {"stp_probe_1", "raw_tp"},
                                                        {"stp_probe_3", "raw_tp"},
                                                        {"stp_probe_4", "raw_tp"},
                                                        {"stp_sys_enter_0", "raw_tp/sys_enter"},
                                                        {"stp_sys_enter_1", "raw_tp/sys_enter"},
                                                        {"stp_sys_exit_0", "raw_tp/sys_exit"}});
}

TEST_CASE("codegen: -D STP_SYSCALL_DISPATCH=0 keeps one tracepoint program per syscall event",
          "[codegen]") {
  if (!have_syscall_events()) {
    ukstap::test::skip_outside_ci("no syscalls:sys_enter_openat/close tracepoints");
    return;
  }
  Script t(kOpenatClose, {{"STP_SYSCALL_DISPATCH", "0"}});
  REQUIRE(t.failed_pass == 0);
  CHECK_FALSE(t.a().dispatch.enabled);
  CHECK(t.a().dispatch.probes.empty());
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) ==
        Programs{{"stp_probe_0", "tracepoint/syscalls/sys_enter_openat"},
                 {"stp_probe_1", "tracepoint/syscalls/sys_enter_close"}});
}

TEST_CASE("codegen: dispatch policy: one syscall probe alone is not dispatched unless asked",
          "[codegen]") {
  if (!have_syscall_events()) {
    ukstap::test::skip_outside_ci("no syscalls:sys_enter_openat/close tracepoints");
    return;
  }
  const char* one = "global n\nprobe kernel.trace(\"syscalls:sys_enter_openat\") { n++ }";
  Script dflt(one);
  REQUIRE(dflt.failed_pass == 0);
  CHECK_FALSE(dflt.a().dispatch.enabled);
  Script forced(one, {{"STP_SYSCALL_DISPATCH", "1"}});
  REQUIRE(forced.failed_pass == 0);
  CHECK(forced.a().dispatch.enabled);
  REQUIRE(forced.a().dispatch.of(forced.probe(0)));
  // A tracepoint that is not a syscall event never is.
  Script other("global n\nprobe kernel.trace(\"sched:sched_switch\") { n++ }\n"
               "probe kernel.trace(\"sched:sched_wakeup\") { n++ }");
  REQUIRE(other.failed_pass == 0);
  CHECK_FALSE(other.a().dispatch.enabled);
}

// 6.1's syscalls:* perf-event tracepoint gives BPF the user registers: backtrace() there was
// empty (e2e run_kstack_whole_addresses in the 6.1 guest). A probe that walks the kernel stack
// goes behind the dispatcher (a raw tracepoint: the kernel's own stack) even alone.
TEST_CASE("codegen: dispatch policy: one syscall probe that walks the kernel stack is dispatched",
          "[codegen]") {
  if (!have_syscall_events()) {
    ukstap::test::skip_outside_ci("no syscalls:sys_enter_openat/close tracepoints");
    return;
  }
  for (const char* body : {"print_backtrace()", "println(backtrace())", "println(callers(2))",
                           "println(kstack_id())", "println(addr())"}) {
    INFO(body);
    Script t(std::string("probe kernel.trace(\"syscalls:sys_enter_openat\") { ") + body + " }");
    REQUIRE(t.failed_pass == 0);
    CHECK(t.a().dispatch.enabled);
    Script off(std::string("probe kernel.trace(\"syscalls:sys_enter_openat\") { ") + body + " }",
               {{"STP_SYSCALL_DISPATCH", "0"}});
    REQUIRE(off.failed_pass == 0);
    CHECK_FALSE(off.a().dispatch.enabled);
  }
  // A kernel symbol alone (symname) needs no stack.
  Script sym("probe kernel.trace(\"syscalls:sys_enter_openat\") { println(symname(0x1234)) }");
  REQUIRE(sym.failed_pass == 0);
  CHECK_FALSE(sym.a().dispatch.enabled);
}

TEST_CASE("codegen: probes of one syscall take one slot each; a dispatcher program per slot",
          "[codegen]") {
  if (!have_syscall_events() || tracefs_offset("syscalls", "sys_exit_openat", "ret") < 0) {
    ukstap::test::skip_outside_ci("no syscalls:sys_enter/exit_openat tracepoints");
    return;
  }
  Script t("global n\nprobe kernel.trace(\"syscalls:sys_enter_openat\") { n++ }\n"
           "probe kernel.trace(\"syscalls:sys_enter_openat\") { n-- }\n"
           "probe kernel.trace(\"syscalls:sys_exit_openat\") { n += $ret }");
  REQUIRE(t.failed_pass == 0);
  const auto& d = t.a().dispatch;
  REQUIRE(d.probes.size() == 3);
  CHECK(d.of(t.probe(0))->slot == 0);
  CHECK(d.of(t.probe(1))->slot == 1);
  CHECK(d.of(t.probe(2))->exit);
  CHECK(d.of(t.probe(2))->slot == 0);
  CHECK(d.max_slots[0] == 2);
  CHECK(d.max_slots[1] == 1);
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) == Programs{{"stp_probe_0", "raw_tp"},
                                                        {"stp_probe_1", "raw_tp"},
                                                        {"stp_probe_2", "raw_tp"},
                                                        {"stp_sys_enter_0", "raw_tp/sys_enter"},
                                                        {"stp_sys_enter_1", "raw_tp/sys_enter"},
                                                        {"stp_sys_exit_0", "raw_tp/sys_exit"}});
}

// ---------------------------------------------------------------------- uprobes, SDT marks

TEST_CASE("codegen: process.function and .return are uprobe and uretprobe programs",
          "[codegen]") {
  test::TempDir dir("codegen");
  std::string src = dir.write("prog.c",
                              "int work(int n) { return n + 1; }\n"
                              "int main(int argc, char **argv) { (void)argv; return work(argc); }\n");
  REQUIRE(test::sh("gcc -g -O0 -o '" + (dir / "prog") + "' '" + src + "'"));
  Script t("global n\nprobe process(\"" + (dir / "prog") + "\").function(\"work\") { n += $n }\n" +
           "probe process(\"" + (dir / "prog") + "\").function(\"work\").return { n += $return }");
  INFO(t.err.str());
  REQUIRE(t.failed_pass == 0);
  CHECK(t.a().placement.of(t.probe(0)) == ProbeSide::Kernel);
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) ==
        Programs{{"stp_probe_0", "uprobe"}, {"stp_probe_1", "uretprobe"}});
}

TEST_CASE("codegen: an SDT mark is a uprobe program", "[codegen]") {
  // A binary of this machine with SystemTap SDT notes, and its first mark, as readelf shows.
  std::string binary, mark;
  for (const char* cand : {"/usr/bin/python3", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                           "/usr/lib/aarch64-linux-gnu/libstdc++.so.6"}) {
    std::string notes = test::run(std::string("readelf -n '") + cand + "' 2>/dev/null");
    std::smatch m;
    std::regex name_re("NT_STAPSDT[^\\n]*\\n\\s*Provider: \\S+\\n\\s*Name: (\\S+)");
    if (std::regex_search(notes, m, name_re)) {
      binary = cand;
      mark = m[1];
      break;
    }
  }
  if (binary.empty()) {
    ukstap::test::skip_outside_ci("no binary with SDT notes here");
    return;
  }
  Script t("global n\nprobe process(\"" + binary + "\").mark(\"" + mark + "\") { n++ }");
  INFO(binary << " mark " << mark << "\n" << t.err.str());
  REQUIRE(t.failed_pass == 0);
  CHECK(t.a().placement.of(t.probe(0)) == ProbeSide::Kernel);
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) == Programs{{"stp_probe_0", "uprobe"}});
}

// --------------------------------------------------------------------------- perf, process

TEST_CASE("codegen: a perf probe is a perf_event program", "[codegen]") {
  Script t("global n\nprobe perf.sw.cpu_clock.hz(99) { n++ }");
  REQUIRE(t.failed_pass == 0);
  CHECK(t.a().placement.of(t.probe(0)) == ProbeSide::Kernel);
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) == Programs{{"stp_probe_0", "perf_event"}});
}

// process.begin: exec, a new process's return from fork (raw sys_exit), and the first
// switch-out of a process that existed before (runtime/bpf/stp_bpf_process.h); end: exit.
TEST_CASE("codegen: process.begin/end are BTF and raw tracepoint programs on exec, fork return, "
          "switch and exit",
          "[codegen]") {
  Script t("global n\nprobe process.begin { n++ }\nprobe process.end { n-- }");
  REQUIRE(t.failed_pass == 0);
  CHECK(t.a().placement.of(t.probe(0)) == ProbeSide::Kernel);
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) == Programs{{"stp_probe_0", "tp_btf/sched_process_exec"},
                        {"stp_probe_0_fork", "raw_tp/sys_exit"},
                        {"stp_probe_0_seen", "tp_btf/sched_switch"},
                        {"stp_probe_1", "tp_btf/sched_process_exit"}});
}

// --------------------------------------------------------------- call graph, reachability

// SystemTap accepts recursion (bounded by MAXNESTING at run time): pass 2 succeeds and finds
// the cycle; pass 3, which lays out one frame per function, refuses it.
TEST_CASE("call graph: pass 2 finds recursion, pass 3 refuses it at the function it re-enters",
          "[codegen]") {
  SECTION("through another function") {
    Script t("function f(n) { return g(n) }\n"
             "function g(n) { if (n > 0) return f(n - 1); return 0 }\n"
             "probe begin { println(f(3)) }");
    CHECK(t.failed_pass == 3);
    REQUIRE(t.s.analyses);
    REQUIRE(t.a().calls.recursive);
    CHECK(t.err.str().find("semantic error: recursive function calls are not supported yet "
                           "(function 'f'): identifier 'f' at <input>:1:10\n") == 0);
    passes::CallGraph g = passes::build_call_graph(t.s);
    REQUIRE(g.recursive);
    CHECK(g.recursive->name == "f");
  }
  SECTION("itself") {
    Script t("function fact(n) { return n <= 1 ? 1 : n * fact(n - 1) }\n"
             "probe begin { println(fact(3)) }");
    CHECK(t.failed_pass == 3);
    CHECK(t.err.str().find("(function 'fact'): identifier 'fact' at <input>:1:10\n") !=
          std::string::npos);
  }
  SECTION("a diamond is not a cycle") {
    Script t("function d() { return 1 }\nfunction b() { return d() }\n"
             "function c() { return d() }\nfunction a() { return b() + c() }\n"
             "probe begin { println(a()) }");
    REQUIRE(t.failed_pass == 0);
    CHECK_FALSE(t.a().calls.recursive);
    CHECK(t.a().calls.of(t.function("a")).size() == 2);
  }
}

TEST_CASE("reachability: functions per side, through calls", "[codegen]") {
  Script t("global shared, knl, nat\n"
           "function sq(x) { return x * x }\n"
           "function twice(x) { return sq(x) + sq(x) }\n"
           "function bang(s) { return s . \"!\" }\n"
           "probe begin { shared = twice(2); nat = 1; println(bang(\"a\")) }\n"
           "probe timer.profile { shared += twice(3); knl++ }\n"
           "probe end { println(shared + knl + nat) }");
  REQUIRE(t.failed_pass == 0);
  const auto& r = t.a().reach;
  for (const char* f : {"sq", "twice"}) {
    CHECK(r.reaches(t.function(f), ProbeSide::Kernel));
    CHECK(r.reaches(t.function(f), ProbeSide::Native));
  }
  CHECK(r.reaches(t.function("bang"), ProbeSide::Native));
  CHECK_FALSE(r.reaches(t.function("bang"), ProbeSide::Kernel));
  CHECK_FALSE(r.uses_user_stacks);
  CHECK_FALSE(r.uses_kernel_stacks);
  REQUIRE(t.compile());
  CHECK(probe_programs(t.s.bpf_object_path) == Programs{{"stp_probe_1", "perf_event"}});
  CHECK(native_handlers(t.s.native_object_path) == Names{"stp_probe_0", "stp_probe_2"});
}

TEST_CASE("reachability: stack printing functions in use turn on the stack machinery",
          "[codegen]") {
  Script user("probe timer.profile { print_ubacktrace() }");
  REQUIRE(user.failed_pass == 0);
  CHECK(user.a().reach.uses_user_stacks);
  CHECK_FALSE(user.a().reach.uses_kernel_stacks);
  Script kernel("probe timer.profile { print_backtrace() }");
  REQUIRE(kernel.failed_pass == 0);
  CHECK(kernel.a().reach.uses_kernel_stacks);
  CHECK_FALSE(kernel.a().reach.uses_user_stacks);
  // Called only from a probe that never runs: nothing to start.
  Script never("probe never { print_ubacktrace() }\nprobe begin { println(1) }");
  REQUIRE(never.failed_pass == 0);
  CHECK_FALSE(never.a().reach.uses_user_stacks);
}
