// translator/probes/: built-in probe families, checked against independent truth (tracefs
// directory listings, binutils readelf on binaries compiled here, hand-written formats).
#include "probe_points.h"
#include "test_util.h"
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ast/ast.h"
#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/elf_symbols.h"
#include "probes/provider.h"
#include "probes/syscall_numbers.h"
#include "probes/tracefs.h"

using namespace ukstap;
using probes::ResolvedPoint;
using test::C;
using test::as;
using test::point;
using test::resolve;

namespace {


std::string error_of(Session& s, std::vector<C> comps) {
  try {
    resolve(s, std::move(comps));
  } catch (const SemanticError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string vars_text(const ResolvedPoint& rp) {
  std::string out;
  for (auto& [n, t] : rp.target_vars) out += (out.empty() ? "" : " ") + n + ":" + t;
  return out;
}

using ukstap::test::run;
using ukstap::test::TempDir;

// Root is needed for tracefs; CI=true means the test must run (and fail) anyway.
bool can_use_tracefs() {
  const char* ci = std::getenv("CI");
  if (geteuid() == 0 || (ci && std::string(ci) == "true")) return true;
  WARN("skipping: tracefs tests need root (set CI=true to force them)");
  return false;
}

// FUNC/IFUNC symbols (defined, non-zero value) of `file` per binutils readelf: .symtab if
// present, else .dynsym -- the same rule, from an independent reader.
std::set<std::string> readelf_functions(const std::string& file) {
  std::string text = run("readelf -sW '" + file + "' 2>/dev/null");
  bool has_symtab = text.find("Symbol table '.symtab'") != std::string::npos;
  std::set<std::string> out;
  std::istringstream in(text);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.rfind("Symbol table '", 0) == 0) {
      section = line.substr(14, line.find('\'', 14) - 14);
      continue;
    }
    if (section != (has_symtab ? ".symtab" : ".dynsym")) continue;
    std::istringstream ls(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(ls >> num >> value >> size >> type >> bind >> vis >> ndx >> name)) continue;
    if ((type != "FUNC" && type != "IFUNC") || ndx == "UND" || std::stoull(value, nullptr, 16) == 0)
      continue;
    if (auto at = name.find('@'); at != std::string::npos) name = name.substr(0, at);
    out.insert(name);
  }
  return out;
}

const char* kHelloC = R"(#include <stdio.h>
struct S { int a; };
static int helper(int x) { return x * 2; }
int foo(int n, const char *s, struct S *sp)
{
  int loc = n + helper(n);
  if (sp) loc += sp->a;
  printf("%s %d\n", s, loc);
  return loc;
}
void bar_one(void) { puts("1"); }
void bar_two(void) { puts("2"); }
int main(void) { struct S v = {1}; bar_one(); bar_two(); return foo(3, "x", &v) > 100; }
)";

}  // namespace

// ---------------------------------------------------------------------------------------- globs

TEST_CASE("glob_match: fnmatch plus {a,b}", "[probes][glob]") {
  using probes::glob_match;
  CHECK(glob_match("sys_enter_open*", "sys_enter_openat"));
  CHECK(glob_match("sys_enter_open*", "sys_enter_open"));
  CHECK_FALSE(glob_match("sys_enter_open*", "sys_exit_openat"));
  CHECK(glob_match("sys_{enter,exit}_read", "sys_exit_read"));
  CHECK(glob_match("sys_{enter,exit}_read", "sys_enter_read"));
  CHECK_FALSE(glob_match("sys_{enter,exit}_read", "sys_leave_read"));
  CHECK(glob_match("{a,b{c,d}}x", "bdx"));
  CHECK(glob_match("f?o", "foo"));
  CHECK_FALSE(glob_match("f?o", "fo"));
  CHECK(glob_match("[a-c]at", "bat"));
  CHECK_FALSE(glob_match("[!a-c]at", "bat"));
  CHECK(glob_match("[!a-c]at", "rat"));
  CHECK(glob_match("a\\*b", "a*b"));
  CHECK_FALSE(glob_match("a\\*b", "axb"));
  CHECK(glob_match("*", ""));
  CHECK(glob_match("foo.*", "foo.bar"));  // a string argument: '*' crosses '.'
  CHECK(glob_match("x{y", "x{y"));        // unbalanced brace is literal
  CHECK(glob_match("main", "main"));
  CHECK_FALSE(glob_match("main", "mains"));
  CHECK(probes::has_glob("a*"));
  CHECK(probes::has_glob("{a,b}"));
  CHECK_FALSE(probes::has_glob("sys_enter_openat"));
}

TEST_CASE("dotted and component globs: '*' stays in a component, '**' crosses", "[probes][glob]") {
  using probes::glob_match_dotted;
  CHECK(glob_match_dotted("syscall.*", "syscall.open"));
  CHECK_FALSE(glob_match_dotted("syscall.*", "syscall.open.return"));
  CHECK(glob_match_dotted("syscall.**", "syscall.open.return"));
  CHECK(glob_match_dotted("syscall.*.return", "syscall.open.return"));
  CHECK_FALSE(glob_match_dotted("sys?all.open", "sys.all.open"));
  CHECK(glob_match_dotted("syscall.{open,close}", "syscall.close"));
  using probes::glob_match_components;
  CHECK(glob_match_components({"syscall", "**"}, {"syscall", "open", "return"}));
  CHECK(glob_match_components({"syscall", "**"}, {"syscall"}));
  CHECK(glob_match_components({"**", "return"}, {"syscall", "open", "return"}));
  CHECK_FALSE(glob_match_components({"syscall", "*"}, {"syscall", "open", "return"}));
  CHECK(glob_match_components({"sys*", "op*"}, {"syscall", "open"}));
}

TEST_CASE("suggest_similar: closest names, alphabetical", "[probes][glob]") {
  std::vector<std::string> names = {"begin", "end", "error", "never", "timer", "process", "perf"};
  CHECK(probes::suggest_similar("begn", names).find("begin") == 0);
  CHECK(probes::suggest_similar("xxxxxxxxxxxxxxxxxxxxxxxx", names) == "");
  std::string s = probes::suggest_similar("prcess", names);
  CHECK(s.find("process") != std::string::npos);
}

// ------------------------------------------------------------------------ dump / family lookup

TEST_CASE("dump_probe_types and is_builtin_family", "[probes]") {
  std::ostringstream out;
  probes::dump_probe_types(out);
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  CHECK(std::is_sorted(lines.begin(), lines.end()));
  std::set<std::string> set(lines.begin(), lines.end());
  CHECK(set.size() == lines.size());
  for (const char* want :
       {"begin", "begin(number)", "end", "end(number)", "error", "error(number)", "never",
        "kernel.trace(string)", "process(string).function(string).return",
        "process(string).function(string)", "process(number).begin", "process.begin",
        "process.thread.end", "process(string).mark(string)", "timer.ms(number)",
        "timer.ms(number).randomize(number)", "timer.hz(number)", "timer.profile",
        "timer.profile.tick", "timer.jiffies(number)", "perf.sw.cpu_clock.sample(number)",
        "perf.type(number).config(number).hz(number)", "perf.hw.cpu_cycles"})
    CHECK(set.count(want) == 1);
  CHECK(probes::is_builtin_family("begin"));
  CHECK(probes::is_builtin_family("kernel"));
  CHECK(probes::is_builtin_family("process"));
  CHECK(probes::is_builtin_family("kprobe"));  // kprobe.function (kernel_function_family.cpp)
  CHECK_FALSE(probes::is_builtin_family("syscall"));
  CHECK_FALSE(probes::is_builtin_family("nosuch"));
  auto timer_names = probes::builtin_names_after({"timer"});
  CHECK(std::find(timer_names.begin(), timer_names.end(), "ms") != timer_names.end());
}

// ---------------------------------------------------------------------- begin / end / timers

TEST_CASE("begin, end, error, never", "[probes]") {
  std::ostringstream err;
  Session s(err);
  auto r = resolve(s, {{"begin"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].family.kind() == probes::ProbeKind::Begin);
  CHECK(as<probes::BeginPoint>(r[0]).priority == 0);
  CHECK(r[0].point->str() == "begin");
  r = resolve(s, {{"end", -5}});
  REQUIRE(r.size() == 1);
  CHECK(as<probes::EndPoint>(r[0]).priority == -5);
  CHECK(r[0].point->str() == "end(-5)");
  CHECK(as<probes::ErrorPoint>(resolve(s, {{"error", 3}})[0]).priority == 3);
  CHECK(resolve(s, {{"never"}})[0].family.kind() == probes::ProbeKind::Never);
  CHECK(error_of(s, {{"begin", "x"}}).find("probe point mismatch") == 0);
}

TEST_CASE("timers: conversions and stap's range checks", "[probes][timer]") {
  std::ostringstream err;
  Session s(err);
  auto r = resolve(s, {{"timer"}, {"ms", 250}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].family.kind() == probes::ProbeKind::Timer);
  CHECK(as<probes::TimerPoint>(r[0]).kind == probes::TimerPoint::Kind::Hrtimer);
  CHECK(as<probes::TimerPoint>(r[0]).period_ns == 250000000);
  CHECK(r[0].family.native());
  CHECK(r[0].point->str() == "timer.ms(250)");
  r = resolve(s, {{"timer"}, {"s", 2}, {"randomize", 1}});
  CHECK(as<probes::TimerPoint>(r[0]).period_ns == 2000000000);
  CHECK(as<probes::TimerPoint>(r[0]).randomize_ns == 1000000000);
  CHECK(as<probes::TimerPoint>(resolve(s, {{"timer"}, {"hz", 1000}})[0]).period_ns == 1000000);
  CHECK(as<probes::TimerPoint>(resolve(s, {{"timer"}, {"hz", 1000}})[0]).hz == 1000);
  CHECK(as<probes::TimerPoint>(resolve(s, {{"timer"}, {"us", 100}})[0]).period_ns == 100000);
  r = resolve(s, {{"timer"}, {"jiffies", 10}, {"randomize", 2}});
  CHECK(as<probes::TimerPoint>(r[0]).kind == probes::TimerPoint::Kind::Jiffies);
  CHECK(as<probes::TimerPoint>(r[0]).jiffies == 10);
  CHECK(as<probes::TimerPoint>(r[0]).randomize_jiffies == 2);
  CHECK(r[0].family.native());
  r = resolve(s, {{"timer"}, {"profile"}});
  CHECK(as<probes::TimerPoint>(r[0]).kind == probes::TimerPoint::Kind::Profile);
  CHECK_FALSE(r[0].family.native());  // a kernel perf event
  CHECK(as<probes::TimerPoint>(resolve(s, {{"timer"}, {"profile"}, {"tick"}})[0]).kind ==
        probes::TimerPoint::Kind::Profile);

  CHECK(error_of(s, {{"timer"}, {"us", 1}}) == "interval value out of range (100, 86400000000)");
  CHECK(error_of(s, {{"timer"}, {"ms", 0}}) == "interval value out of range (1, 86400000)");
  CHECK(error_of(s, {{"timer"}, {"ns", 5}}) == "interval value out of range (100000, 86400000000000)");
  CHECK(error_of(s, {{"timer"}, {"s", 100000}}) == "interval value out of range (1, 86400)");
  CHECK(error_of(s, {{"timer"}, {"ms", 10}, {"randomize", 11}}) == "randomization value out of range");
  CHECK(error_of(s, {{"timer"}, {"ms", 10}, {"randomize", -1}}) == "randomization value out of range");
  CHECK(error_of(s, {{"timer"}, {"hz", 0}}) == "frequency must be greater than 0");
  CHECK(error_of(s, {{"timer"}, {"hz", 100000}}) == "interval value out of range (100000, 86400000000000)");
  CHECK(error_of(s, {{"timer"}, {"jiffies", 0}}) == "invalid interval for jiffies timer");
  CHECK(error_of(s, {{"timer"}, {"jiffies", 5}, {"randomize", 6}}) == "invalid randomize for jiffies timer");
  CHECK(error_of(s, {{"timer"}, {"msx", 5}}) == "probe point mismatch (similar: ms, msec, ns, s, us)");
  CHECK(error_of(s, {{"timer"}, {"ms"}}).find("'ms' does not take no argument") != std::string::npos);
  CHECK(error_of(s, {{"timer"}}).find("probe point is incomplete") == 0);
}

// -------------------------------------------------------------------------------------- errors

TEST_CASE("families this kernel cannot serve say why and what to use", "[probes]") {
  std::ostringstream err;
  Session s(err);
  // (kernel.function, kprobe.function and module(M).function are served: BTF-typed, see
  // kernel_function_family.cpp; their statement probes need line tables.)
  for (auto comps : std::vector<std::vector<C>>{{{"module", "ext4"}, {"statement", "*"}},
                                                {{"kernel"}, {"statement", "*@fs/read_write.c:1"}}}) {
    std::string e = error_of(s, comps);
    INFO(e);
    CHECK(e.find("kprobes") != std::string::npos);
    CHECK(e.find("kernel.trace(") != std::string::npos);
    CHECK(e.find("syscall.*") != std::string::npos);
  }
  // The reason must follow the machine: kprobe_events or a kprobe PMU would mean we have them.
  struct stat st;
  bool have = stat("/sys/bus/event_source/devices/kprobe", &st) == 0 ||
              stat("/sys/kernel/tracing/kprobe_events", &st) == 0 ||
              stat("/sys/kernel/debug/tracing/kprobe_events", &st) == 0;
  std::string e = error_of(s, {{"kernel"}, {"statement", "vfs_read"}});
  CHECK((e.find("not available on this kernel") != std::string::npos) == !have);
  CHECK(error_of(s, {{"procfs", "a/b"}, {"write"}}).find("must be a plain file name") != std::string::npos);
  CHECK(error_of(s, {{"nosuch"}}).find("probe point mismatch") == 0);
  CHECK(error_of(s, {{"tmer"}, {"ms", 5}}).find("probe point mismatch (similar: ") == 0);
  CHECK(error_of(s, {{"tmer"}, {"ms", 5}}).find("timer") != std::string::npos);
}

// ---------------------------------------------------------------------------------- tracepoints

TEST_CASE("tracefs format parsing and -L type text", "[probes][tracepoint]") {
  const char* fmt =
      "name: sys_enter_openat\nID: 782\nformat:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
      "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
      "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
      "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
      "\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"
      "\tfield:char prev_comm[16];\toffset:48;\tsize:16;\tsigned:0;\n"
      "\tfield:__data_loc char[] name;\toffset:64;\tsize:4;\tsigned:0;\n"
      "\tfield:struct task_struct * p;\toffset:72;\tsize:8;\tsigned:0;\n"
      "\nprint fmt: \"dfd: 0x%08lx\", REC->dfd\n";
  probes::TraceEvent ev;
  REQUIRE(probes::parse_trace_format(fmt, ev));
  CHECK(ev.id == 782);
  CHECK(ev.event == "sys_enter_openat");
  std::string text;
  for (auto& f : ev.fields)
    if (probes::trace_field_visible(f))
      text += "$" + f.name + ":" + probes::trace_field_type_text(f) + "@" + std::to_string(f.offset) + " ";
  CHECK(text == "$dfd:long@16 $filename:char const*@24 $mode:long@40 $prev_comm:char[16]@48 "
                "$name:string@64 $p:struct task_struct*@72 ");
  // The value a script reads is the declared C type, not the 8-byte slot the format calls
  // unsigned: int dfd is 4 signed bytes (AT_FDCWD reads -100), umode_t 2 unsigned bytes
  // (include/linux/types.h: unsigned short), a pointer the whole slot.
  std::string widths;
  for (auto& f : ev.fields)
    if (probes::trace_field_visible(f) && f.type.find('[') == std::string::npos)
      widths += f.name + ":" + std::to_string(f.value_size) + (f.value_signed ? "s " : "u ");
  CHECK(widths == "dfd:4s filename:8u mode:2u p:8u ");
  int bytes = 0;
  bool sign = false;
  CHECK((probes::kernel_c_integer("const pid_t", bytes, sign) && bytes == 4 && sign));
  CHECK((probes::kernel_c_integer("unsigned int", bytes, sign) && bytes == 4 && !sign));
  CHECK((probes::kernel_c_integer("size_t", bytes, sign) && bytes == 8 && !sign));
  CHECK(!probes::kernel_c_integer("struct file *", bytes, sign));
}

TEST_CASE("kernel.trace against the live tracefs", "[probes][tracepoint][root]") {
  if (!can_use_tracefs()) return;
  std::ostringstream err;
  Session s(err);
  std::string why;
  std::string root = probes::find_tracefs(why);
  INFO(why);
  REQUIRE(!root.empty());

  // Truth: the event directories (with a format file) under events/syscalls.
  std::set<std::string> truth;
  if (DIR* d = opendir((root + "/events/syscalls").c_str())) {
    while (dirent* e = readdir(d)) {
      struct stat st;
      if (e->d_name[0] != '.' &&
          stat((root + "/events/syscalls/" + e->d_name + "/format").c_str(), &st) == 0)
        truth.insert(e->d_name);
    }
    closedir(d);
  }
  REQUIRE(truth.size() > 100);
  auto r = resolve(s, {{"kernel"}, {"trace", "syscalls:*"}});
  std::set<std::string> got;
  for (auto& rp : r) {
    CHECK(rp.family.kind() == probes::ProbeKind::Tracepoint);
    CHECK(as<probes::TracepointPoint>(rp).system == "syscalls");
    got.insert(as<probes::TracepointPoint>(rp).event);
    CHECK(rp.point->str() == "kernel.trace(\"syscalls:" + as<probes::TracepointPoint>(rp).event + "\")");
  }
  CHECK(got == truth);

  // Globs in the event; the id matches the format file.
  r = resolve(s, {{"kernel"}, {"trace", "syscalls:sys_enter_open*"}});
  std::set<std::string> open_events;
  for (auto& rp : r) open_events.insert(as<probes::TracepointPoint>(rp).event);
  std::set<std::string> open_truth;
  for (auto& t : truth)
    if (t.rfind("sys_enter_open", 0) == 0) open_truth.insert(t);
  CHECK(open_events == open_truth);

  r = resolve(s, {{"kernel"}, {"trace", "syscalls:sys_enter_openat"}});
  REQUIRE(r.size() == 1);
  CHECK(vars_text(r[0]) == "$dfd:long $filename:char const* $flags:long $mode:long");
  std::ifstream f(root + "/events/syscalls/sys_enter_openat/format");
  std::string line, id;
  while (std::getline(f, line))
    if (line.rfind("ID: ", 0) == 0) id = line.substr(4);
  CHECK(std::to_string(as<probes::TracepointPoint>(r[0]).id) == id);
  bool have_filename = false;
  for (auto& fl : as<probes::TracepointPoint>(r[0]).fields)
    if (fl.name == "filename")
      have_filename = fl.offset == 24 && fl.size == 8 && !fl.is_signed && fl.type == "const char *";
  CHECK(have_filename);

  r = resolve(s, {{"kernel"}, {"trace", "syscalls:sys_exit_openat"}});
  REQUIRE(r.size() == 1);
  CHECK(vars_text(r[0]) == "$ret:long");

  // "EVENT" alone: any system.
  r = resolve(s, {{"kernel"}, {"trace", "sched_switch"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].point->str() == "kernel.trace(\"sched:sched_switch\")");
  CHECK(vars_text(r[0]).find("$prev_comm:char[16] $prev_pid:long") == 0);

  // A valid pattern that matches nothing: no points, no error.
  CHECK(resolve(s, {{"kernel"}, {"trace", "nosuchsys:nosuch*"}}).empty());
  CHECK(error_of(s, {{"kernel"}, {"trace", ":x"}}).find("invalid tracepoint name") == 0);
}

// ------------------------------------------------------------------------------ process probes

TEST_CASE("process function probes against readelf of a binary built here", "[probes][process]") {
  if (system("gcc --version >/dev/null 2>&1") != 0) {
    WARN("skipping: no gcc");
    return;
  }
  TempDir tmp;
  std::string src = tmp.write("hello.c", kHelloC);
  std::string exe = tmp.path + "/hello";
  REQUIRE(system(("gcc -g -O0 -o '" + exe + "' '" + src + "'").c_str()) == 0);
  std::ostringstream err;
  Session s(err);

  // Every function symbol, per readelf.
  auto r = resolve(s, {{"process", exe}, {"function", "*"}});
  std::set<std::string> got;
  for (auto& rp : r) got.insert(as<probes::UprobePoint>(rp).symbol);
  CHECK(got == readelf_functions(exe));
  CHECK(got.count("foo") == 1);
  CHECK(got.count("helper") == 1);

  // DWARF: decl file:line in the point, parameters and locals with stap's type text.
  r = resolve(s, {{"process", exe}, {"function", "foo"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].family.kind() == probes::ProbeKind::Uprobe);
  CHECK(r[0].point->str() == "process(\"" + exe + "\").function(\"foo@" + src + ":4\")");
  CHECK(vars_text(r[0]) == "$n:int $s:char const* $sp:struct S* $loc:int");
  CHECK_FALSE(as<probes::UprobePoint>(r[0]).is_return);
  CHECK(as<probes::UprobePoint>(r[0]).path == exe);

  // The file offset agrees with readelf's symbol value mapped through the LOAD segments.
  {
    std::string syms = run("readelf -sW '" + exe + "' | awk '$8==\"foo\" {print $2}'");
    unsigned long long addr = std::stoull(syms, nullptr, 16);
    std::string loads = run("readelf -lW '" + exe + "' | awk '$1==\"LOAD\" {print $2, $3, $5}'");
    std::istringstream ls(loads);
    std::string off_s, va_s, memsz_s;
    unsigned long long want = 0;
    while (ls >> off_s >> va_s >> memsz_s) {
      unsigned long long off = std::stoull(off_s, nullptr, 16), va = std::stoull(va_s, nullptr, 16),
                         msz = std::stoull(memsz_s, nullptr, 16);
      if (addr >= va && addr < va + msz) want = addr - va + off;
    }
    CHECK(as<probes::UprobePoint>(r[0]).offset == want);
    CHECK(as<probes::UprobePoint>(r[0]).address == addr);
  }

  r = resolve(s, {{"process", exe}, {"function", "foo"}, {"return"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].point->str() == "process(\"" + exe + "\").function(\"foo@" + src + ":4\").return");
  CHECK(vars_text(r[0]) == "$return:int $n:int $s:char const* $sp:struct S* $loc:int");
  CHECK(as<probes::UprobePoint>(r[0]).is_return);

  // void function: no $return.
  r = resolve(s, {{"process", exe}, {"function", "bar_one"}, {"return"}});
  REQUIRE(r.size() == 1);
  CHECK(vars_text(r[0]) == "");

  // Globs and @file filters.
  r = resolve(s, {{"process", exe}, {"function", "bar_*"}});
  CHECK(r.size() == 2);
  CHECK(resolve(s, {{"process", exe}, {"function", "{foo,helper}"}}).size() == 2);
  CHECK(resolve(s, {{"process", exe}, {"function", "foo@hello.c"}}).size() == 1);
  // Nothing matches: one error naming the pattern and the file.
  CHECK(error_of(s, {{"process", exe}, {"function", "foo@other.c"}}) ==
        "no function matches 'foo@other.c' in " + exe);
  CHECK(resolve(s, {{"process", exe}, {"function", "*@hello.c:11"}}).size() == 1);
  CHECK(error_of(s, {{"process", exe}, {"function", "nosuch"}}) ==
        "no function matches 'nosuch' in " + exe);

  // Symbols without DWARF print bare (_start comes from crt1.o, no debuginfo).
  r = resolve(s, {{"process", exe}, {"function", "_start"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].point->str() == "process(\"" + exe + "\").function(\"_start\")");

  // Stripped: symbols from .dynsym only, no variables.
  std::string stripped = tmp.path + "/hello-stripped";
  REQUIRE(system(("strip -o '" + stripped + "' '" + exe + "'").c_str()) == 0);
  std::set<std::string> want_stripped = readelf_functions(stripped);
  if (want_stripped.empty()) {  // nothing exported: the error names the file
    CHECK(error_of(s, {{"process", stripped}, {"function", "*"}}) ==
          "no function matches '*' in " + stripped);
  }
  r = want_stripped.empty() ? std::vector<probes::ResolvedPoint>{}
                            : resolve(s, {{"process", stripped}, {"function", "*"}});
  got.clear();
  for (auto& rp : r) {
    got.insert(as<probes::UprobePoint>(rp).symbol);
    CHECK(rp.target_vars.empty());
  }
  CHECK(got == readelf_functions(stripped));

  // The relative path is made absolute/canonical.
  r = resolve(s, {{"process", exe}, {"function", "main"}, {"call"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].point->str() == "process(\"" + exe + "\").function(\"main@" + src + ":13\").call");

  // .statement("foo@hello.c:7"): the address gdb's `info line` gives for line 7 (`if (sp)`),
  // a line of no function: an error naming the pattern.
  r = resolve(s, {{"process", exe}, {"statement", "foo@hello.c:7"}});
  REQUIRE(r.size() == 1);
  std::string gdb = run("gdb -batch -ex 'info line hello.c:7' '" + exe + "' 2>/dev/null");
  auto at = gdb.find("starts at address 0x");
  REQUIRE(at != std::string::npos);
  CHECK(as<probes::UprobePoint>(r[0]).address ==
        std::stoull(gdb.substr(at + 18), nullptr, 16));
  CHECK(r[0].point->str() == "process(\"" + exe + "\").statement(\"foo@" + src + ":7\")");
  CHECK(error_of(s, {{"process", exe}, {"statement", "foo@hello.c:2"}}) ==
        "no statement matches 'foo@hello.c:2' in " + exe);
  CHECK(error_of(s, {{"process", exe}, {"function", "foo@hello.c:1-5"}}).find("not supported yet") !=
        std::string::npos);
}

TEST_CASE("process paths: $PATH search, symlinks, missing binaries, shared libraries",
          "[probes][process]") {
  std::ostringstream err;
  Session s(err);
  char buf[4096];
  std::string ls_real = realpath(run("command -v ls").substr(0, run("command -v ls").find('\n')).c_str(), buf);
  auto r = resolve(s, {{"process", "ls"}, {"begin"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].family.kind() == probes::ProbeKind::Process);
  CHECK(as<probes::ProcessPoint>(r[0]).path == ls_real);
  CHECK(as<probes::ProcessPoint>(r[0]).event == probes::ProcessPoint::Event::Begin);
  CHECK(r[0].point->str() == "process(\"" + ls_real + "\").begin");

  std::string e = error_of(s, {{"process", "no-such-program-xyz"}, {"function", "main"}});
  CHECK(e.find("cannot find executable 'no-such-program-xyz'") != std::string::npos);
  e = error_of(s, {{"process", "/nonexistent/prog"}, {"end"}});
  CHECK(e.find("/nonexistent/prog") != std::string::npos);

  r = resolve(s, {{"process"}, {"thread"}, {"end"}});
  REQUIRE(r.size() == 1);
  CHECK(as<probes::ProcessPoint>(r[0]).event == probes::ProcessPoint::Event::ThreadEnd);
  CHECK(r[0].point->str() == "process.thread.end");
  r = resolve(s, {{"process", 1}, {"end"}});
  REQUIRE(r.size() == 1);
  CHECK(as<probes::ProcessPoint>(r[0]).pid == 1);
  CHECK(r[0].point->str() == "process(1).end");
  CHECK(resolve(s, {{"process"}, {"*"}}).size() == 3);  // begin, end, syscall (plt: no -c)

  // process.function without a path needs -c/-x.
  CHECK(error_of(s, {{"process"}, {"function", "main"}}).find("-c COMMAND") != std::string::npos);

  // libc: .dynsym (or .symtab) function symbols, canonical path.
  const char* libc = "/lib/x86_64-linux-gnu/libc.so.6";
  struct stat st;
  if (stat(libc, &st) == 0) {
    std::string libc_real = realpath(libc, buf);
    r = resolve(s, {{"process", libc}, {"function", "malloc"}});
    REQUIRE(!r.empty());
    CHECK(as<probes::UprobePoint>(r[0]).path == libc_real);
    // "malloc", or "malloc@FILE:LINE" when libc's separate debuginfo is installed.
    CHECK(r[0].point->str().rfind("process(\"" + libc_real + "\").function(\"malloc", 0) == 0);
    CHECK(as<probes::UprobePoint>(r[0]).symbol == "malloc");
    auto all = resolve(s, {{"process", libc}, {"function", "*"}});
    std::set<std::string> got;
    for (auto& rp : all) got.insert(as<probes::UprobePoint>(rp).symbol);
    CHECK(got == readelf_functions(libc_real));
  }
}

TEST_CASE("process mark probes from .note.stapsdt", "[probes][process][sdt]") {
  if (system("echo '#include <sys/sdt.h>' | gcc -E -x c - >/dev/null 2>&1") != 0) {
    WARN("skipping: <sys/sdt.h> not installed (apt-get install systemtap-sdt-dev)");
    return;
  }
  TempDir tmp;
  std::string src = tmp.write("sdt.c",
                              "#include <sys/sdt.h>\n"
                              "int main(int argc, char **argv) {\n"
                              "  DTRACE_PROBE2(myprov, mark_two, argc, argv);\n"
                              "  DTRACE_PROBE(myprov, mark_zero);\n"
                              "  DTRACE_PROBE1(other, mark_one, argc);\n"
                              "  return 0;\n}\n");
  std::string exe = tmp.path + "/sdt";
  REQUIRE(system(("gcc -O1 -o '" + exe + "' '" + src + "'").c_str()) == 0);
  // Truth: readelf -n lists each note's provider and name.
  std::string notes = run("readelf -n '" + exe + "'");
  CHECK(notes.find("Name: mark_two") != std::string::npos);

  std::ostringstream err;
  Session s(err);
  auto r = resolve(s, {{"process", exe}, {"mark", "*"}});
  std::set<std::string> names;
  for (auto& rp : r) {
    REQUIRE(as<probes::UprobePoint>(rp).sdt);
    names.insert(as<probes::UprobePoint>(rp).sdt->provider + ":" + as<probes::UprobePoint>(rp).sdt->name);
  }
  CHECK(names == std::set<std::string>{"myprov:mark_two", "myprov:mark_zero", "other:mark_one"});

  r = resolve(s, {{"process", exe}, {"mark", "mark_two"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].point->str() == "process(\"" + exe + "\").mark(\"mark_two\")");
  CHECK(vars_text(r[0]) == "$arg1:long $arg2:long $$name:string $$provider:string");
  CHECK(as<probes::UprobePoint>(r[0]).sdt->nargs == 2);
  // The note's pc as readelf prints it ("Location: 0x...").
  size_t at = notes.find("Name: mark_two");
  size_t loc = notes.find("Location: ", at);
  REQUIRE(loc != std::string::npos);
  unsigned long long pc = std::stoull(notes.substr(loc + 10, 20), nullptr, 16);
  CHECK(as<probes::UprobePoint>(r[0]).address == pc);

  r = resolve(s, {{"process", exe}, {"provider", "other"}, {"mark", "*"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].point->str() == "process(\"" + exe + "\").provider(\"other\").mark(\"mark_one\")");
  CHECK(vars_text(r[0]) == "$arg1:long $$name:string $$provider:string");
}

// ------------------------------------------------------------------------------------------ perf

TEST_CASE("perf events", "[probes][perf]") {
  std::ostringstream err;
  Session s(err);
  auto r = resolve(s, {{"perf"}, {"sw"}, {"cpu_clock"}, {"sample", 1000}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].family.kind() == probes::ProbeKind::Perf);
  CHECK(as<probes::PerfPoint>(r[0]).type == 1);
  CHECK(as<probes::PerfPoint>(r[0]).config == 0);
  CHECK(as<probes::PerfPoint>(r[0]).sample_period == 1000);
  CHECK(r[0].point->str() == "perf.sw.cpu_clock.sample(1000)");
  r = resolve(s, {{"perf"}, {"hw"}, {"instructions"}});
  CHECK(as<probes::PerfPoint>(r[0]).type == 0);
  CHECK(as<probes::PerfPoint>(r[0]).config == 1);
  CHECK(as<probes::PerfPoint>(r[0]).sample_period == 1000000);
  r = resolve(s, {{"perf"}, {"type", 1}, {"config", 3}, {"hz", 99}, {"process", "ls"}, {"counter", "cs"}});
  CHECK(as<probes::PerfPoint>(r[0]).freq == 99);
  CHECK(as<probes::PerfPoint>(r[0]).sample_period == 0);
  CHECK(as<probes::PerfPoint>(r[0]).per_process);
  CHECK(as<probes::PerfPoint>(r[0]).process_path == "ls");
  CHECK(as<probes::PerfPoint>(r[0]).counter == "cs");
  CHECK(resolve(s, {{"perf"}, {"sw"}, {"*"}}).size() == 9);
  CHECK(error_of(s, {{"perf"}, {"sw"}, {"cpu_clock"}, {"sample", 0}}) == "invalid perf sample period 0");
  CHECK(error_of(s, {{"perf"}, {"type", 1}, {"config", 0}, {"hz", -1}}) == "invalid perf sample frequency -1");
  CHECK(error_of(s, {{"perf"}, {"sw"}, {"cpu_clok"}}).find("(similar: cpu_clock") != std::string::npos);
}

// The syscall dispatcher's numbers (probes/syscall_numbers) against the C library's own
// constants (SYS_* from <sys/syscall.h>, compiled into this test), and the names tracefs
// lists: every syscalls:sys_enter_NAME that has a number must have the C library's number.
#include <sys/syscall.h>
TEST_CASE("syscall_number: the C library's SYS_ constants", "[probes][syscalls]") {
  CHECK(probes::syscall_number("read") == SYS_read);
  CHECK(probes::syscall_number("openat") == SYS_openat);
  CHECK(probes::syscall_number("getdents64") == SYS_getdents64);
  CHECK(probes::syscall_number("getppid") == SYS_getppid);
  CHECK(probes::syscall_number("exit_group") == SYS_exit_group);
  CHECK(probes::syscall_number("clone3") == SYS_clone3);
  // tracepoint names that are the kernel's SYSCALL_DEFINE names, not __NR_ names
  CHECK(probes::syscall_number("newfstat") == SYS_fstat);
  CHECK(probes::syscall_number("newuname") == SYS_uname);
  CHECK(probes::syscall_number("umount") == SYS_umount2);
  CHECK(probes::syscall_number("sendfile64") == SYS_sendfile);
  CHECK(probes::syscall_number("no_such_syscall") == -1);
  CHECK(probes::syscall_number("") == -1);
}

// The tapsets' generated table (the dispatcher's first source) against the kernel headers'
// asm/unistd_64.h, which it was generated from: every number the header defines, the same.
TEST_CASE("syscall numbers: the tapsets' table = asm/unistd_64.h", "[probes][syscalls]") {
  auto hdr = probes::syscall_table_from_headers();
  auto tap = probes::syscall_table_from_tapsets({std::string(UKSTAP_SRCDIR) + "/tapsets"});
  REQUIRE(hdr.size() > 300);
  REQUIRE(tap.size() >= hdr.size());
  for (auto& [name, nr] : hdr) {
    INFO(name);
    CHECK(tap.count(name) == 1);
    if (tap.count(name)) CHECK(tap.at(name) == nr);
  }
}
