// The interactive mode's parts that need no terminal (driver/interactive_*.h): -i on the
// command line, the script buffer's line numbers, when an `add` entry wants more lines, and
// the probe point completion against the built-in point types (--dump-probe-types).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "driver/interactive_completion.h"
#include "driver/interactive_script.h"
#include "driver/options.h"
#include "parse_args.h"

using namespace ukstap;
using namespace ukstap::interactive;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("-i and --interactive: the script is optional", "[interactive]") {
  auto p = test::parse_args({"-i"});
  CHECK(p.cl.action == CommandLine::Action::Interactive);
  CHECK(p.err.empty());
  p = test::parse_args({"--interactive", "-c", "ls", "x.stp", "a1"});
  CHECK(p.cl.action == CommandLine::Action::Interactive);
  CHECK(p.opts.script_file == "x.stp");
  CHECK(p.opts.args == std::vector<std::string>{"a1"});
  CHECK(p.opts.target_cmd == "ls");
  p = test::parse_args({"-i", "-e", "probe begin {}"});
  CHECK(p.cl.action == CommandLine::Action::Interactive);
  CHECK(p.opts.have_script_text);
  p = test::parse_args({"-i", "-l", "syscall.*"});
  CHECK(p.cl.action == CommandLine::Action::Error);
  CHECK(p.err.find("-i cannot be combined") != std::string::npos);
}

TEST_CASE("script buffer: numbered lines, delete N and N-M inclusive", "[interactive]") {
  ScriptBuffer b;
  b.append("global a");
  b.append("probe begin {\n  a = 1\n}");
  b.append("probe end { exit() }");
  REQUIRE(b.size() == 5);
  std::ostringstream out;
  b.list(out);
  CHECK(out.str() == "1: global a\n2: probe begin {\n3:   a = 1\n4: }\n5: probe end { exit() }\n");
  CHECK(b.text() == "global a\nprobe begin {\n  a = 1\n}\nprobe end { exit() }\n");
  CHECK(b.erase("2-4").empty());
  CHECK(b.lines() == std::vector<std::string>{"global a", "probe end { exit() }"});
  CHECK(b.erase("2").empty());
  CHECK(b.lines() == std::vector<std::string>{"global a"});
  CHECK(b.erase("3").find("no line 3") != std::string::npos);
  CHECK(b.erase("0").find("invalid") != std::string::npos);
  CHECK(b.erase("x-1").find("invalid") != std::string::npos);
  CHECK(b.size() == 1);
  // Ten lines and more: the numbers are right-aligned.
  for (int i = 0; i < 10; ++i) b.append("global g" + std::to_string(i));
  std::ostringstream wide;
  b.list(wide);
  CHECK(wide.str().rfind(" 1: global a\n", 0) == 0);
  CHECK(wide.str().find("\n11: global g9\n") != std::string::npos);
}

TEST_CASE("script buffer: save and load round-trip", "[interactive]") {
  ScriptBuffer b;
  b.append("probe begin { printf(\"%d\\n\", 1) }\nprobe end {}");
  char path[] = "/tmp/ukstap-unit-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  CHECK(b.save(path).empty());
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "probe begin { printf(\"%d\\n\", 1) }\nprobe end {}\n");
  ScriptBuffer c;
  c.append("global old");
  CHECK(c.load(path).empty());
  CHECK(c.lines() == b.lines());
  std::remove(path);
  CHECK(c.load(path).find("cannot open") != std::string::npos);
  CHECK(c.lines() == b.lines());  // a failed load keeps the script
}

TEST_CASE("add: complete, wants more lines, or a parse error", "[interactive]") {
  Options opts;
  std::string diag;
  CHECK(check_entry(opts, "probe begin { exit() }", diag) == Completeness::Complete);
  CHECK(check_entry(opts, "global a, b", diag) == Completeness::Complete);
  CHECK(check_entry(opts, "function f(x) { return x + 1 }", diag) == Completeness::Complete);
  // Unfinished: an open brace, a probe without its body, an open call, an embedded block.
  CHECK(check_entry(opts, "probe begin {", diag) == Completeness::Incomplete);
  CHECK(check_entry(opts, "probe begin", diag) == Completeness::Incomplete);
  CHECK(check_entry(opts, "probe begin { printf(\"%d\\n\",", diag) == Completeness::Incomplete);
  CHECK(check_entry(opts, "function f() %{ /* C */", diag) == Completeness::Incomplete);
  CHECK(check_entry(opts, "probe begin { /* a comment", diag) == Completeness::Incomplete);
  // An error before the end is an error however much follows.
  CHECK(check_entry(opts, "probe begin { x = }", diag) == Completeness::Invalid);
  CHECK(diag.find("parse error") != std::string::npos);
  CHECK(diag.find("<input>:1:19") != std::string::npos);
  CHECK(check_entry(opts, "probe begin { x = } {", diag) == Completeness::Invalid);
}

TEST_CASE("probe point completion, a component at a time", "[interactive]") {
  Options opts;
  // Built-in points (--dump-probe-types: begin, end, timer.s(number), process(string)...).
  auto be = complete_probe_point(opts, "be");
  CHECK(has(be, "begin"));
  CHECK(has(be, "begin("));
  CHECK(std::all_of(be.begin(), be.end(), [](const std::string& s) { return s.rfind("be", 0) == 0; }));
  auto timer = complete_probe_point(opts, "timer.");
  CHECK(has(timer, "timer.s("));
  CHECK(has(timer, "timer.ms("));
  // A parameter as the user writes it: process("...") stands for process(string).
  auto proc = complete_probe_point(opts, "process(\"/bin/ls\").fu");
  CHECK(has(proc, "process(\"/bin/ls\").function(\""));
  auto written = complete_probe_point(opts, "process(\"/bin/ls\")");
  CHECK(has(written, "process(\"/bin/ls\")."));
  CHECK(complete_probe_point(opts, "zzz_no_such").empty());
}

TEST_CASE("probe point completion inside a string parameter", "[interactive]") {
  Options opts;
  // process("PATH: the files there (made here: the truth).
  char dir[] = "/tmp/ukstap-unit-XXXXXX";
  REQUIRE(::mkdtemp(dir));
  std::string d = dir;
  std::ofstream(d + "/abc_tool") << "x";
  REQUIRE(::mkdir((d + "/abd").c_str(), 0700) == 0);
  std::ofstream(d + "/other") << "x";
  auto files = complete_probe_point(opts, "process(\"" + d + "/ab");
  CHECK(files == std::vector<std::string>{"process(\"" + d + "/abc_tool\")", "process(\"" + d + "/abd/"});
  std::remove((d + "/abc_tool").c_str());
  std::remove((d + "/other").c_str());
  ::rmdir((d + "/abd").c_str());
  ::rmdir(dir);
  // function("NAME: the listing's names for that binary; this test program has main().
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  self[n] = '\0';
  std::string typed = "process(\"" + std::string(self) + "\").function(\"mai";
  auto fns = complete_probe_point(opts, typed);
  CHECK(has(fns, typed + "n\")"));
}
