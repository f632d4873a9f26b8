// Probe families as types (translator/probes/probe_kind.h, family_point.h): the kind table, and
// the typed fields each family's resolution fills, checked against independent truth: tracefs's
// format and id files parsed here, nm and readelf on binaries compiled here, <linux/
// perf_event.h>'s constants and <sys/syscall.h>'s numbers. And the loader's attach table
// (loader/attach.h) for what needs no BPF: the kinds that have nothing to attach.
#include <linux/netfilter.h>
#include <linux/netfilter_ipv6.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ast/ast.h"
#include "codegen/module_info.h"
#include "driver/diagnostics.h"
#include "driver/passes.h"
#include "driver/session.h"
#include "parse/parser.h"
#include "loader/attach.h"
#include "probes/family_point.h"
#include "probes/probe_kind.h"
#include "probes/provider.h"
#include "probes/tracefs.h"
#include "probe_points.h"
#include "test_util.h"

using namespace ukstap;
using probes::ProbeKind;
using probes::ResolvedPoint;
using Comp = test::C;
using test::as;
using test::resolve;
using ukstap::test::run;
using ukstap::test::TempDir;

namespace {


std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

unsigned long long hex(const std::string& s) { return std::stoull(s, nullptr, 16); }

// Passes 1-3 on `script` (no tapsets): the module pass 3 made, or null with the diagnostics.
struct Translated {
  std::ostringstream err;
  Session s{err};
  parse::MacroLibrary lib;
  const codegen::ModuleInfo* module = nullptr;
  explicit Translated(const std::string& script) {
    s.opts.last_pass = 3;
    s.user_file = parse::parse_file(s, s.add_source("<input>", script, false), lib);
    REQUIRE(s.user_file != nullptr);
    std::ostringstream sink;
    print_pass1(s, sink);
    INFO(err.str());
    REQUIRE(pass2_elaborate(s) == 0);
    print_pass2(s, sink);
    REQUIRE(pass3_translate(s) == 0);
    module = s.module.get();
  }
  const codegen::ProbeInfo& probe(size_t i) const {
    REQUIRE(i < module->probes.size());
    return module->probes[i];
  }
  bool has(const std::string& text) const { return module->source.find(text) != std::string::npos; }
};

}  // namespace

TEST_CASE("probe kinds: one table row per kind, in order, with the side each runs on",
          "[probes][kinds]") {
  std::set<std::string> names;
  for (size_t i = 0; i < probes::kProbeKindCount; ++i) {
    auto k = static_cast<ProbeKind>(i);
    CHECK(probes::kind_info(k).kind == k);
    names.insert(probes::kind_name(k));
  }
  // The names messages have always used for the families.
  CHECK(names == std::set<std::string>{"begin", "end", "error", "never", "timer", "tracepoint",
                                       "process", "uprobe", "perf", "procfs", "input",
                                       "netfilter", "kernel.function"});
  // A point's kind is the alternative it holds.
  CHECK(probes::FamilyPoint(probes::EndPoint{}).kind() == ProbeKind::End);
  CHECK(probes::FamilyPoint(probes::PerfPoint{}).kind() == ProbeKind::Perf);
  CHECK(probes::FamilyPoint(probes::UprobePoint{}).name() == std::string("uprobe"));
  CHECK(probes::FamilyPoint(probes::EndPoint{-4}).priority() == -4);
  CHECK(probes::FamilyPoint(probes::NeverPoint{}).priority() == 0);
  // Native: begin/end/error and the interval timers; timer.profile and the rest are BPF.
  CHECK(probes::FamilyPoint(probes::BeginPoint{}).native());
  CHECK(probes::FamilyPoint(probes::ErrorPoint{}).native());
  probes::TimerPoint t;
  t.kind = probes::TimerPoint::Kind::Jiffies;
  CHECK(probes::FamilyPoint(t).native());
  t.kind = probes::TimerPoint::Kind::Profile;
  CHECK_FALSE(probes::FamilyPoint(t).native());
  CHECK_FALSE(probes::FamilyPoint(probes::TracepointPoint{}).native());
  CHECK_FALSE(probes::FamilyPoint(probes::ProcessPoint{}).native());
  CHECK_FALSE(probes::FamilyPoint(probes::UprobePoint{}).native());
  CHECK_FALSE(probes::FamilyPoint(probes::PerfPoint{}).native());
  CHECK(probes::FamilyPoint(probes::ProcfsPoint{}).native());  // a FIFO served in user space
  CHECK(probes::FamilyPoint(probes::InputPoint{}).native());  // the loader reads stdin
  CHECK_FALSE(probes::FamilyPoint(probes::NetfilterPoint{}).native());  // a BPF netfilter program
}

TEST_CASE("tracepoint fields and id: tracefs's own files", "[probes][kinds][tracepoint]") {
  if (geteuid() != 0) {
    ukstap::test::skip_outside_ci("tracefs needs root");
    return;
  }
  std::ostringstream err;
  Session s(err);
  std::string why, root = probes::find_tracefs(why);
  INFO(why);
  REQUIRE(!root.empty());
  for (const char* ev : {"sched:sched_switch", "syscalls:sys_enter_openat", "syscalls:sys_exit_read"}) {
    INFO(ev);
    std::string sys(ev, std::strchr(ev, ':')), name(std::strchr(ev, ':') + 1);
    auto r = resolve(s, {{"kernel"}, {"trace", ev}});
    REQUIRE(r.size() == 1);
    const auto& tp = as<probes::TracepointPoint>(r[0]);
    CHECK(tp.system == sys);
    CHECK(tp.event == name);
    CHECK(tp.id == std::stol(slurp(root + "/events/" + sys + "/" + name + "/id")));
    // The format file's field lines, but common_*, in order.
    std::regex line_re(R"(^\s*field:(.*[^\w\[\]])(\w+)(\[[^\]]*\])?;\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d);)");
    std::istringstream format(slurp(root + "/events/" + sys + "/" + name + "/format"));
    std::string line;
    size_t k = 0;
    while (std::getline(format, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, line_re) || m[2].str().rfind("common_", 0) == 0) continue;
      INFO(line);
      REQUIRE(k < tp.fields.size());
      CHECK(tp.fields[k].name == m[2].str());
      CHECK(tp.fields[k].offset == std::stoi(m[4].str()));
      CHECK(tp.fields[k].size == std::stoi(m[5].str()));
      CHECK(tp.fields[k].is_signed == (m[6].str() == "1"));
      ++k;
    }
    CHECK(k == tp.fields.size());
    CHECK(tp.is_sys_exit() == (name.rfind("sys_exit", 0) == 0));
  }
  // The dispatcher's number is the C library's.
  auto r = resolve(s, {{"kernel"}, {"trace", "syscalls:sys_enter_openat"}});
  CHECK(as<probes::TracepointPoint>(r[0]).syscall_nr == SYS_openat);
  r = resolve(s, {{"kernel"}, {"trace", "sched:sched_switch"}});
  CHECK(as<probes::TracepointPoint>(r[0]).syscall_nr == -1);
}

TEST_CASE("uprobe fields: nm and readelf on a binary built here", "[probes][kinds][uprobe]") {
  if (!ukstap::test::sh("gcc --version >/dev/null 2>&1")) {
    ukstap::test::skip_outside_ci("no gcc");
    return;
  }
  TempDir tmp("kinds");
  std::string src = tmp.write("add.c",
                              "long add(int a, long b, char *c) { long t = a + b; return t + *c; }\n"
                              "int main(void) { char c = 1; return (int)add(1, 2, &c); }\n");
  std::string exe = tmp / "add";
  REQUIRE(ukstap::test::sh("gcc -g -O0 -o '" + exe + "' '" + src + "'"));
  std::ostringstream err;
  Session s(err);
  auto r = resolve(s, {{"process", exe}, {"function", "add"}});
  REQUIRE(r.size() == 1);
  const auto& u = as<probes::UprobePoint>(r[0]);
  CHECK(u.path == exe);
  CHECK(u.symbol == "add");
  CHECK(r[0].family.function() == "add");
  CHECK_FALSE(u.is_return);
  CHECK(u.pid == 0);
  CHECK_FALSE(u.sdt);
  CHECK(u.debuginfo == exe);
  // nm -S: "ADDRESS SIZE T add".
  std::istringstream nm(run("nm -S '" + exe + "' | awk '$4==\"add\" {print $1, $2}'"));
  std::string addr_s, size_s;
  REQUIRE(nm >> addr_s >> size_s);
  CHECK(u.address == hex(addr_s));
  CHECK(u.size == hex(size_s));
  // The file offset through the LOAD segment holding it (readelf -l).
  std::istringstream loads(run("readelf -lW '" + exe + "' | awk '$1==\"LOAD\" {print $2, $3, $5}'"));
  std::string off_s, va_s, memsz_s;
  unsigned long long want = 0;
  while (loads >> off_s >> va_s >> memsz_s)
    if (u.address >= hex(va_s) && u.address < hex(va_s) + hex(memsz_s))
      want = u.address - hex(va_s) + hex(off_s);
  CHECK(u.offset == want);
  // Parameters in declaration order, with the DWARF type text -L shows.
  REQUIRE(u.params.size() == 3);
  CHECK(u.params[0].name == "$a");
  CHECK(u.params[0].type == "int");
  CHECK(u.params[1].name == "$b");
  CHECK(u.params[1].type == "long int");
  CHECK(u.params[2].name == "$c");
  CHECK(u.params[2].type == "char*");

  r = resolve(s, {{"process", exe}, {"function", "add"}, {"return"}});
  REQUIRE(r.size() == 1);
  CHECK(as<probes::UprobePoint>(r[0]).is_return);
}

TEST_CASE("SDT marks: semaphore and arguments as readelf -n prints them", "[probes][kinds][sdt]") {
  if (!ukstap::test::sh("echo '#include <sys/sdt.h>' | gcc -E -x c - >/dev/null 2>&1")) {
    ukstap::test::skip_outside_ci("<sys/sdt.h> not installed");
    return;
  }
  TempDir tmp("kinds");
  std::string src = tmp.write("sem.c",
                              "#define _SDT_HAS_SEMAPHORES 1\n"
                              "#include <sys/sdt.h>\n"
                              "__extension__ unsigned short prov_hit_semaphore "
                              "__attribute__((unused)) __attribute__((section(\".probes\")));\n"
                              "int main(int argc, char **argv) {\n"
                              "  DTRACE_PROBE2(prov, hit, argc, argv);\n"
                              "  return 0;\n}\n");
  std::string exe = tmp / "sem";
  REQUIRE(ukstap::test::sh("gcc -O1 -o '" + exe + "' '" + src + "'"));
  std::string notes = run("readelf -n '" + exe + "'");
  size_t at = notes.find("Name: hit");
  REQUIRE(at != std::string::npos);
  auto field = [&](const char* label) {
    size_t p = notes.find(label, at);
    REQUIRE(p != std::string::npos);
    p += std::strlen(label);
    return notes.substr(p, notes.find_first_of(",\n", p) - p);
  };
  unsigned long long pc = hex(field("Location: ")), sem = hex(field("Semaphore: "));
  std::string args = field("Arguments: ");
  REQUIRE(sem != 0);
  // The semaphore's file offset: its address in .probes, per readelf -S.
  std::istringstream sec(run("readelf -SW '" + exe + "' | sed 's/^ *\\[ *[0-9]*\\]//' | awk '$1==\".probes\" {print $3, $4}'"));
  std::string sec_addr, sec_off;
  REQUIRE(sec >> sec_addr >> sec_off);

  std::ostringstream err;
  Session s(err);
  auto r = resolve(s, {{"process", exe}, {"mark", "hit"}});
  REQUIRE(r.size() == 1);
  const auto& u = as<probes::UprobePoint>(r[0]);
  REQUIRE(u.sdt);
  CHECK(u.sdt->provider == "prov");
  CHECK(u.sdt->name == "hit");
  CHECK(u.sdt->nargs == 2);
  CHECK(u.sdt->args == args);
  CHECK(u.address == pc);
  CHECK(u.sdt->semaphore_offset == sem - hex(sec_addr) + hex(sec_off));
  CHECK_FALSE(u.is_return);
  CHECK(u.symbol.empty());
}

TEST_CASE("perf fields: <linux/perf_event.h>'s constants", "[probes][kinds][perf]") {
  std::ostringstream err;
  Session s(err);
  struct Want {
    const char* group;
    const char* name;
    uint32_t type;
    uint64_t config;
  };
  const Want wants[] = {
      {"sw", "cpu_clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
      {"sw", "task_clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
      {"sw", "page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
      {"sw", "context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
      {"sw", "cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
      {"sw", "page_faults_min", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
      {"sw", "page_faults_maj", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
      {"sw", "alignment_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
      {"sw", "emulation_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
      {"hw", "cpu_cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
      {"hw", "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
      {"hw", "cache_references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
      {"hw", "cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
      {"hw", "branch_instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
      {"hw", "branch_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
      {"hw", "bus_cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
      {"hw", "stalled_cycles_frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
      {"hw", "stalled_cycles_backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
      {"hw", "ref_cpu_cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
  };
  for (auto& w : wants) {
    INFO(w.group << "." << w.name);
    auto r = resolve(s, {{"perf"}, {w.group}, {w.name}});
    REQUIRE(r.size() == 1);
    const auto& p = as<probes::PerfPoint>(r[0]);
    CHECK(p.type == w.type);
    CHECK(p.config == w.config);
    CHECK(p.sample_period == 1000000);  // stap's default period
    CHECK(p.freq == 0);
    CHECK_FALSE(p.per_process);
    // Hardware events on a machine without a CPU PMU say why; software events always run.
    if (w.type == PERF_TYPE_SOFTWARE) CHECK(p.unavailable_reason.empty());
  }
  auto r = resolve(s, {{"perf"}, {"type", PERF_TYPE_SOFTWARE}, {"config", PERF_COUNT_SW_DUMMY},
                       {"sample", 7}, {"process"}});
  REQUIRE(r.size() == 1);
  const auto& p = as<probes::PerfPoint>(r[0]);
  CHECK(p.type == PERF_TYPE_SOFTWARE);
  CHECK(p.config == PERF_COUNT_SW_DUMMY);
  CHECK(p.sample_period == 7);
  CHECK(p.per_process);
  CHECK(p.process_path.empty());  // the -c/-x target
}

TEST_CASE("attach table: kinds without a kernel program are refused", "[loader][attach]") {
  loader::AttachContext cx;
  codegen::ProbeInfo p;
  for (probes::FamilyPoint f : {probes::FamilyPoint(probes::BeginPoint{}),
                                probes::FamilyPoint(probes::EndPoint{}),
                                probes::FamilyPoint(probes::ErrorPoint{}),
                                probes::FamilyPoint(probes::NeverPoint{}),
                                probes::FamilyPoint(probes::InputPoint{})}) {
    p.family = f;
    errno = 0;
    CHECK_FALSE(loader::attach_probe(cx, p, nullptr));
    CHECK(errno == EINVAL);
  }
  // An interval timer runs in the loader's event loop: nothing to attach.
  probes::TimerPoint t;
  t.kind = probes::TimerPoint::Kind::Hrtimer;
  p.family = t;
  p.native = true;
  errno = 0;
  CHECK_FALSE(loader::attach_probe(cx, p, nullptr));
  CHECK(errno == EINVAL);
}

// Pass 3 per kind: the program each probe gets (the runtime macro that gives it its section, so
// the loader's attach for the kind finds it) and the typed fields ProbeInfo carries to pass 5.
TEST_CASE("codegen per kind: runtime macro, side, typed fields to pass 5", "[codegen][kinds]") {
  {
    Translated t("global n probe begin(5) { n = 1 } probe end { n = 2 } probe error(-1) { n = 3 } "
                 "probe never { n = 4 } probe timer.ms(100) { n++ } probe timer.profile { n++ } "
                 "probe perf.sw.cpu_clock.sample(1000) { n++ }");
    // never is type-checked, not emitted: six probes, and the end probe that displays the
    // global n (never printed by the script) at exit.
    REQUIRE(t.module->probes.size() == 7);
    CHECK(t.probe(6).family.kind() == ProbeKind::End);
    CHECK(t.probe(6).native);
    CHECK(t.probe(0).family.kind() == ProbeKind::Begin);
    CHECK(t.probe(0).native);
    CHECK(t.probe(0).priority == 5);
    CHECK(t.probe(2).priority == -1);
    CHECK(t.has("STP_PROBE_NATIVE(0)"));
    CHECK(t.has("STP_PROBE_NATIVE(1)"));
    CHECK(t.has("STP_PROBE_NATIVE(2)"));
    CHECK(t.probe(3).native);  // timer.ms: the loader's event loop
    CHECK(t.has("STP_PROBE_NATIVE(3)"));
    CHECK(t.probe(3).family.get<probes::TimerPoint>()->period_ns == 100000000);
    CHECK_FALSE(t.probe(4).native);  // timer.profile: a CPU clock perf event
    CHECK(t.has("STP_PROBE_PERF(4)"));
    CHECK_FALSE(t.probe(5).native);
    CHECK(t.has("STP_PROBE_PERF(5)"));
    CHECK(t.probe(5).family.get<probes::PerfPoint>()->config == PERF_COUNT_SW_CPU_CLOCK);
    CHECK(t.module->has_native_probes);
    CHECK(t.module->has_kernel_probes);
  }
  {
    // netfilter: a BPF netfilter program (runtime/bpf/stp_bpf_netfilter.h) with its point's
    // numbers for the loader's link; $hooknum is the point's hook.
    Translated t("global n probe netfilter.pf(\"NFPROTO_IPV6\").hook(\"NF_IP6_LOCAL_OUT\") "
                 "{ n += $hooknum }");
    CHECK(t.has("STP_PROBE_NETFILTER(0)"));
    CHECK_FALSE(t.probe(0).native);
    CHECK(t.has("((int64_t)" + std::to_string(NF_IP6_LOCAL_OUT) + ")"));
    REQUIRE(t.probe(0).family.get<probes::NetfilterPoint>());
    CHECK(t.probe(0).family.get<probes::NetfilterPoint>()->pf == NFPROTO_IPV6);
    CHECK(t.probe(0).family.get<probes::NetfilterPoint>()->hooknum == NF_IP6_LOCAL_OUT);
  }
  if (geteuid() != 0) {
    ukstap::test::skip_outside_ci("the tracepoint half: tracefs needs root");
    return;
  }
  std::string why, root = probes::find_tracefs(why);
  REQUIRE(!root.empty());
  {
    // One syscall probe: its own tracepoint; two or more: the dispatcher, a slot each.
    Translated one("global n probe kernel.trace(\"syscalls:sys_enter_read\") { n++ } "
                   "probe kernel.trace(\"sched:sched_switch\") { n++ }");
    CHECK(one.probe(0).syscall_slot == -1);
    CHECK(one.has("STP_PROBE_TRACEPOINT(0, \"syscalls\", \"sys_enter_read\")"));
    CHECK(one.has("STP_PROBE_TRACEPOINT(1, \"sched\", \"sched_switch\")"));
    Translated two("global n probe kernel.trace(\"syscalls:sys_enter_read\") { n++ } "
                   "probe kernel.trace(\"syscalls:sys_enter_read\") { n-- } "
                   "probe kernel.trace(\"syscalls:sys_exit_read\") { n-- }");
    CHECK(two.has("STP_PROBE_SYSCALL(0, 0)"));
    CHECK(two.has("STP_PROBE_SYSCALL(1, 0)"));
    CHECK(two.has("STP_PROBE_SYSCALL(2, 1)"));
    CHECK(two.probe(0).syscall_slot == 0);
    CHECK(two.probe(1).syscall_slot == 1);
    CHECK(two.probe(2).syscall_slot == 0);  // sys_exit: slots of its own direction
    CHECK(two.probe(2).family.get<probes::TracepointPoint>()->syscall_nr == SYS_read);
  }
  {
    // process.*: the task-finder events of runtime/bpf/stp_bpf_process.h, no filter here;
    // the BTF tracepoints they use exist (tracefs lists them under events/sched/).
    Translated t("global n probe process.begin { n++ } probe process.thread.begin { n++ } "
                 "probe process.end { n++ } probe process.thread.end { n++ } "
                 "probe process.syscall { n++ } probe process.syscall.return { n++ }");
    CHECK(t.has("STP_PROBE_PROC_BEGIN(0, 0LL, 0ULL, 0ULL)"));
    CHECK(t.has("STP_PROBE_PROC_THREAD_BEGIN(1, 0LL, 0ULL, 0ULL)"));
    CHECK(t.has("STP_PROBE_PROC_END(2, 0, 0LL, 0ULL, 0ULL)"));
    CHECK(t.has("STP_PROBE_PROC_END(3, 1, 0LL, 0ULL, 0ULL)"));
    CHECK(t.has("STP_PROBE_PROC_SYSCALL(4, 0LL, 0ULL, 0ULL)"));
    CHECK(t.has("STP_PROBE_PROC_SYSCALL_RETURN(5, 0LL, 0ULL, 0ULL)"));
    for (const char* name : {"sched_process_exec", "sched_switch", "sched_process_exit"}) {
      INFO(name);
      CHECK(access((root + "/events/sched/" + name).c_str(), F_OK) == 0);
    }
  }
}

TEST_CASE("codegen per kind: uprobes", "[codegen][kinds][uprobe]") {
  if (!ukstap::test::sh("gcc --version >/dev/null 2>&1")) {
    ukstap::test::skip_outside_ci("no gcc");
    return;
  }
  TempDir tmp("kinds");
  std::string src = tmp.write("f.c", "int f(int a) { return a + 1; }\nint main(void) { return f(1); }\n");
  std::string exe = tmp / "f";
  REQUIRE(ukstap::test::sh("gcc -g -O0 -o '" + exe + "' '" + src + "'"));
  Translated t("global n probe process(\"" + exe + "\").function(\"f\") { n = $a } "
               "probe process(\"" + exe + "\").function(\"f\").return { n = $return }");
  CHECK(t.has("STP_PROBE_UPROBE_IN(0, 0LL, 0ULL, 0ULL)"));
  CHECK(t.has("STP_PROBE_URETPROBE_IN(1, 0LL, 0ULL, 0ULL)"));
  CHECK(t.has("STP_UARG(c, 1)"));  // $a: the first argument register
  CHECK(t.probe(0).family.binary_path() == exe);
  CHECK(t.probe(0).family.function() == "f");
  CHECK_FALSE(t.probe(0).native);
}
