// Pass 2: a tapset file's own probes come with it when the script uses one of its functions or
// globals, as in SystemTap (tapsets/target_set.stp, tzinfo.stp rely on it), and only then.
// Expected probe lists follow SystemTap's rule, stated in tapsets/RUNTIME-HOOKS.md.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "driver/passes.h"
#include "driver/session.h"
#include "parse/parser.h"

using namespace ukstap;

namespace {

struct TapsetElab {
  std::ostringstream err;
  Session s{err};
  parse::MacroLibrary lib;
  int rc = -1;

  TapsetElab(const std::string& script, const std::vector<std::string>& tapsets) {
    s.opts.last_pass = 2;
    int i = 0;
    for (const auto& text : tapsets) {
      auto* src = s.add_source("t" + std::to_string(i++) + ".stp", text, true);
      auto* f = parse::parse_file(s, src, lib);
      REQUIRE(f != nullptr);
      s.tapset_files.push_back(f);
    }
    s.user_file = parse::parse_file(s, s.add_source("<input>", script, false), lib);
    REQUIRE(s.user_file != nullptr);
    rc = pass2_elaborate(s);
  }
  // The probe points in pass-2 order.
  std::vector<std::string> points() {
    std::ostringstream o;
    print_pass2(s, o);
    std::vector<std::string> out;
    std::istringstream in(o.str());
    bool probes = false;
    for (std::string line; std::getline(in, line);) {
      if (line == "# probes") { probes = true; continue; }
      if (probes && !line.empty() && line[0] != ' ') out.push_back(line.substr(0, line.find(' ')));
    }
    return out;
  }
};

const char* kWithProbe = R"(
global __seen
probe begin(-100) { __seen = 1 }
function seen:long () { return __seen }
)";
const char* kUnused = R"(
probe end { x = 1 }
function unused:long () { return 2 }
)";
const char* kChainA = R"(
probe begin(-50) { b_fn() }
function a_fn:long () { return 1 }
)";
const char* kChainB = R"(
global __b
probe end(99) { __b = 0 }
function b_fn () { __b++ }
)";

}  // namespace

TEST_CASE("a used tapset function brings its file's probes, an unused file brings none",
          "[elaborate][tapset-probes]") {
  TapsetElab e("probe timer.s(1) { x = seen() }", {kWithProbe, kUnused});
  REQUIRE(e.rc == 0);
  REQUIRE(e.points() == std::vector<std::string>{"timer.s(1)", "begin(-100)"});
}

TEST_CASE("tapset probes that use another tapset bring that file's probes too",
          "[elaborate][tapset-probes]") {
  TapsetElab e("probe timer.s(1) { x = a_fn() }", {kChainA, kChainB, kUnused});
  REQUIRE(e.rc == 0);
  REQUIRE(e.points() == std::vector<std::string>{"timer.s(1)", "begin(-50)", "end(99)"});
}

TEST_CASE("a script using no tapset function gets no tapset probes", "[elaborate][tapset-probes]") {
  TapsetElab e("probe timer.s(1) { x = 1 }", {kWithProbe, kUnused});
  REQUIRE(e.rc == 0);
  REQUIRE(e.points() == std::vector<std::string>{"timer.s(1)"});
}
