// Command-line parsing (driver/options.cpp) and the Session helpers (driver/session.cpp).
#include <climits>
#include <cstdlib>
#include <catch2/catch.hpp>

#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "driver/options.h"
#include "driver/session.h"
#include "parse_args.h"

using namespace ukstap;

namespace {

using Parsed = test::ParsedArgs;
constexpr auto& parse = test::parse_args;

const std::string hint = std::string(kHelpHint) + "\n";

}  // namespace

TEST_CASE("script text, file and arguments", "[driver]") {
  auto p = parse({"-e", "probe begin { exit() }", "a1", "a2"});
  CHECK(p.cl.action == CommandLine::Action::Run);
  CHECK(p.opts.have_script_text);
  CHECK(p.opts.script_text == "probe begin { exit() }");
  CHECK(p.opts.args == std::vector<std::string>{"a1", "a2"});

  p = parse({"x.stp", "1", "two"});
  CHECK(p.opts.script_file == "x.stp");
  CHECK(p.opts.args == std::vector<std::string>{"1", "two"});

  p = parse({"-"});
  CHECK(p.opts.script_file == "-");

  // Options after the script are still options; "--" ends them.
  p = parse({"x.stp", "-p1", "--", "-5"});
  CHECK(p.opts.last_pass == 1);
  CHECK(p.opts.args == std::vector<std::string>{"-5"});
}

TEST_CASE("options with SystemTap meanings", "[driver]") {
  auto p = parse({"-vv", "-v", "-p", "2", "-c", "ls -l", "-o", "out.txt", "-d", "/bin/ls", "-d",
                  "/bin/true", "--ldd", "-k", "-m", "mymod", "-DMAXSTRINGLEN=1024", "-D",
                  "FOO", "-G", "g=5", "-I", "/tmp", "-T", "2.5", "-g", "-w", "-u", "-e", "x"});
  INFO(p.err);
  REQUIRE(p.cl.action == CommandLine::Action::Run);
  CHECK(p.err.empty());
  CHECK(p.opts.verbose == 3);
  CHECK(p.opts.last_pass == 2);
  CHECK(p.cl.last_pass_given);
  CHECK(p.opts.target_cmd == "ls -l");
  CHECK(p.opts.output_file == "out.txt");
  // -d paths are kept resolved (/bin is a symlink to usr/bin on a merged-/usr system).
  char ls[PATH_MAX], tr[PATH_MAX];
  REQUIRE(::realpath("/bin/ls", ls));
  REQUIRE(::realpath("/bin/true", tr));
  CHECK(p.opts.d_objects == std::vector<std::string>{ls, tr});
  CHECK(p.opts.ldd);
  CHECK(p.opts.keep_tmpdir);
  CHECK(p.opts.module_name == "mymod");
  REQUIRE(p.opts.defines.size() == 2);
  CHECK(p.opts.defines[0] == std::pair<std::string, std::string>{"MAXSTRINGLEN", "1024"});
  CHECK(p.opts.defines[1] == std::pair<std::string, std::string>{"FOO", ""});
  REQUIRE(p.opts.globals_init.size() == 1);
  CHECK(p.opts.globals_init[0] == std::pair<std::string, std::string>{"g", "5"});
  CHECK(p.opts.include_dirs == std::vector<std::string>{"/tmp"});
  CHECK(p.opts.timeout_s == Approx(2.5));
  CHECK(p.opts.guru_mode);
  CHECK(p.opts.suppress_warnings);
  CHECK(p.opts.unoptimized);

  p = parse({"-x", "1234", "-e", "x"});
  CHECK(p.opts.target_pid == 1234);
}

TEST_CASE("listing and dump modes", "[driver]") {
  auto p = parse({"-l", "syscall.*"});
  CHECK(p.cl.action == CommandLine::Action::ListProbes);
  CHECK(p.opts.list_pattern == "syscall.*");
  CHECK_FALSE(p.opts.list_with_vars);

  p = parse({"-L", "syscall.read"});
  CHECK(p.cl.action == CommandLine::Action::ListProbes);
  CHECK(p.opts.list_with_vars);

  CHECK(parse({"--dump-functions"}).cl.action == CommandLine::Action::DumpFunctions);
  CHECK(parse({"--dump-probe-types"}).cl.action == CommandLine::Action::DumpProbeTypes);
  CHECK(parse({"--help"}).cl.action == CommandLine::Action::Help);
  CHECK(parse({"-h"}).cl.action == CommandLine::Action::Help);
  CHECK(parse({"-V"}).cl.action == CommandLine::Action::Version);
  CHECK(parse({"--version"}).cl.action == CommandLine::Action::Version);
}

TEST_CASE("usage errors are one line plus the --help hint", "[driver]") {
  auto p = parse({"-q", "-e", "x"});
  CHECK(p.cl.action == CommandLine::Action::Error);
  CHECK(p.cl.exit_code == 1);
  CHECK(p.err == "ukstap: invalid option -- 'q'\n" + hint);

  p = parse({"--bogus"});
  CHECK(p.err == "ukstap: unrecognized option '--bogus'\n" + hint);

  p = parse({"-e"});
  CHECK(p.err == "ukstap: option '-e' requires an argument\n" + hint);

  p = parse({"-p", "6", "-e", "x"});
  CHECK(p.err == "ukstap: Invalid pass number (should be 1-5).\n" + hint);
  p = parse({"-p", "0", "-e", "x"});
  CHECK(p.cl.action == CommandLine::Action::Error);
  p = parse({"-p", "2x", "-e", "x"});
  CHECK(p.cl.action == CommandLine::Action::Error);

  p = parse({"-x", "abc", "-e", "x"});
  CHECK(p.err == "ukstap: Invalid target process ID number.\n" + hint);

  p = parse({"-c", "ls", "-x", "1", "-e", "x"});
  CHECK(p.err == "ukstap: You can't specify -c and -x options together.\n" + hint);

  p = parse({});
  CHECK(p.cl.action == CommandLine::Action::Error);

  p = parse({"-e", "a", "-e", "b"});
  CHECK(p.cl.action == CommandLine::Action::Error);

  p = parse({"-m", "bad-name", "-e", "x"});
  CHECK(p.cl.action == CommandLine::Action::Error);

  p = parse({"-G", "novalue", "-e", "x"});
  CHECK(p.cl.action == CommandLine::Action::Error);
}

TEST_CASE("-T takes seconds with fractions, at least 1ms", "[driver]") {
  CHECK(parse({"-T", "0.001", "-e", "x"}).opts.timeout_s == Approx(0.001));
  CHECK(parse({"-T", "3", "-e", "x"}).opts.timeout_s == Approx(3));
  for (const char* bad : {"0.0001", "0", "-1", "abc", "1s", ""}) {
    auto p = parse({"-T", bad, "-e", "x"});
    INFO(bad);
    CHECK(p.cl.action == CommandLine::Action::Error);
    CHECK(p.err == "Invalid timeout interval.\n");
  }
}

TEST_CASE("Session: defines, sources, search paths", "[driver]") {
  std::ostringstream err;
  Session s(err);
  s.opts.defines = {{"MAXSTRINGLEN", "128"}, {"MAXSTRINGLEN", "256"}};
  CHECK(s.define("MAXSTRINGLEN", "512") == "256");
  CHECK(s.define("MAXACTION", "1000") == "1000");

  const SourceFile* f = s.add_source("<input>", "probe begin {}\n", false);
  REQUIRE(f != nullptr);
  CHECK(f->name == "<input>");
  CHECK(f->line_text(1) == "probe begin {}");
  CHECK_FALSE(f->privileged);
  CHECK(s.add_source("t.stp", "", true)->privileged);

  s.opts.include_dirs = {"/first", "/second"};
  auto dirs = s.tapset_dirs();
  REQUIRE(dirs.size() == 3);
  CHECK(dirs[0] == "/first");
  CHECK(dirs[1] == "/second");
  CHECK(dirs[2].size() > 0);
  CHECK(s.runtime_dir().size() > 0);

  DerivedProbe* d = new_derived_probe(s);
  REQUIRE(d != nullptr);
  CHECK(d != new_derived_probe(s));
}
