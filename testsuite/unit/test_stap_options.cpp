// SystemTap's options that scripts and .meta files pass (issue 14): what parse_command_line
// stores for each (driver/options.cpp), and the one-line errors of the checked ones
// (driver/option_checks.cpp). Their effects are tested end to end in
// testsuite/e2e/cli_stap_options.sh.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "driver/option_checks.h"
#include "driver/options.h"
#include "driver/session.h"
#include "parse_args.h"

using namespace ukstap;

namespace {

using Parsed = test::ParsedArgs;
constexpr auto& parse_stap = test::parse_args;

}  // namespace

TEST_CASE("SystemTap's options: defaults", "[driver][stap-options]") {
  auto p = parse_stap({"-e", "x"});
  REQUIRE(p.cl.action == CommandLine::Action::Run);
  CHECK_FALSE(p.opts.warnings_as_errors);
  CHECK_FALSE(p.opts.all_modules);
  CHECK(p.opts.compatible.empty());
  CHECK_FALSE(p.opts.skip_badvars);
  CHECK_FALSE(p.opts.disable_cache);
  CHECK_FALSE(p.opts.check_version);
  CHECK(p.opts.prologue_searching == "auto");  // stap: "if the option is missing, auto"
}

TEST_CASE("SystemTap's options: each one stored", "[driver][stap-options]") {
  auto p = parse_stap({"-W", "--all-modules", "--compatible=1.8", "--skip-badvars",
                       "--disable-cache", "--check-version", "--prologue-searching",
                       "--runtime=bpf", "--bpf", "-e", "x"});
  INFO(p.err);
  REQUIRE(p.cl.action == CommandLine::Action::Run);
  CHECK(p.err.empty());
  CHECK(p.opts.warnings_as_errors);
  CHECK(p.opts.all_modules);
  CHECK(p.opts.compatible == "1.8");
  CHECK(p.opts.skip_badvars);
  CHECK(p.opts.disable_cache);
  CHECK(p.opts.check_version);
  CHECK(p.opts.prologue_searching == "always");  // stap: "if WHEN is missing, always"

  CHECK(parse_stap({"--prologue-searching=never", "-e", "x"}).opts.prologue_searching == "never");
  CHECK(parse_stap({"-P", "-e", "x"}).opts.prologue_searching == "always");
  CHECK(parse_stap({"--compatible", "4.8", "-e", "x"}).opts.compatible == "4.8");
  // .meta lines put them after the script and its arguments
  p = parse_stap({"x.stp", "arg", "--all-modules", "-W"});
  CHECK(p.opts.all_modules);
  CHECK(p.opts.warnings_as_errors);
  CHECK(p.opts.args == std::vector<std::string>{"arg"});
}

TEST_CASE("SystemTap's options: bad values are one usage error", "[driver][stap-options]") {
  const std::string hint = std::string(kHelpHint) + "\n";
  for (auto args : {std::initializer_list<const char*>{"--compatible=4.x", "-e", "x"},
                    std::initializer_list<const char*>{"--compatible=", "-e", "x"},
                    std::initializer_list<const char*>{"--compatible=4..8", "-e", "x"},
                    std::initializer_list<const char*>{"--prologue-searching=often", "-e", "x"},
                    std::initializer_list<const char*>{"--runtime=dyninst", "-e", "x"},
                    std::initializer_list<const char*>{"--runtime=kernel", "-e", "x"},
                    std::initializer_list<const char*>{"--runtime=lua", "-e", "x"},
                    std::initializer_list<const char*>{"--dyninst", "-e", "x"}}) {
    auto p = parse_stap(args);
    INFO(*args.begin());
    CHECK(p.cl.action == CommandLine::Action::Error);
    CHECK(p.cl.exit_code == 1);
    // one line, then the hint
    REQUIRE(p.err.size() > hint.size());
    CHECK(p.err.substr(p.err.size() - hint.size()) == hint);
    CHECK(p.err.substr(0, p.err.size() - hint.size()).find('\n') == p.err.size() - hint.size() - 1);
  }
  CHECK(check_compatible_version("1.8.2").empty());
  CHECK(check_runtime("bpf").empty());
  CHECK(check_runtime("dyninst").find("Dyninst runtime") != std::string::npos);
}
