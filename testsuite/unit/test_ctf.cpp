// --ctf=DIR's pieces that need no BPF (the e2e test run_ctf.sh runs the whole): the field names
// of printed values (codegen/format_arg_names.h, its stated rules) and the DIR rules
// (ctf-writer/trace_dir.h), checked against the file system with stat(2).
#include "test_util.h"
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "codegen/format_arg_names.h"
#include "ctf-writer/trace_dir.h"

using ukstap::test::TempDir;
namespace ast = ukstap::ast;

TEST_CASE("format_arg_names: the script's names, else argN, unique", "[ctf]") {
  ast::Symbol count;
  count.name = "count";
  ast::TargetSymbol filename;
  filename.name = "$filename";
  ast::TargetSymbol member;
  member.name = "$file";
  ast::TargetComponent c;
  c.member = "f_path";
  member.components.push_back(c);
  ast::FunctionCall call;
  call.name = "execname";
  ast::LiteralNumber number;
  ast::Symbol count2;
  count2.name = "count";
  ast::TargetSymbol parms;
  parms.name = "$$parms";
  auto names = ukstap::codegen::format_arg_names({&count, &filename, &member, &call, &number, &count2, &parms});
  REQUIRE(names == std::vector<std::string>{"count", "filename", "f_path", "execname", "arg4", "count_1", "parms"});
}

TEST_CASE("prepare_trace_dir: what DIR may be", "[ctf]") {
  TempDir t("ctf");
  std::string why;
  SECTION("absent: made, 0755 or less") {
    REQUIRE(ukstap::ctf::prepare_trace_dir(t / "new", why));
    struct stat st {};
    REQUIRE(::lstat((t / "new").c_str(), &st) == 0);
    REQUIRE(S_ISDIR(st.st_mode));
    REQUIRE((st.st_mode & 022) == 0);
  }
  SECTION("a previous ukstap trace: its files removed") {
    ::mkdir((t / "d").c_str(), 0755);
    ::mkdir((t / "d/ukstap").c_str(), 0755);
    t.write("d/ukstap/metadata", "/* CTF 1.8 */\nenv {\n\ttracer_name = \"ukstap\";\n};\n");
    t.write("d/ukstap/channel0_0", "x");
    REQUIRE(ukstap::ctf::prepare_trace_dir(t / "d", why));
    REQUIRE(::access((t / "d/ukstap").c_str(), F_OK) != 0);
  }
  SECTION("a ukstap trace declaring LTTng-UST's layout (producer = \"ukstap\"): its files removed") {
    ::mkdir((t / "d").c_str(), 0755);
    ::mkdir((t / "d/ukstap").c_str(), 0755);
    t.write("d/ukstap/metadata", "/* CTF 1.8 */\nenv {\n\tdomain = \"ust\";\n\ttracer_name = \"lttng-ust\";\n\tproducer = \"ukstap\";\n};\n");
    REQUIRE(ukstap::ctf::prepare_trace_dir(t / "d", why));
    REQUIRE(::access((t / "d/ukstap").c_str(), F_OK) != 0);
  }
  SECTION("another tracer's trace: refused, left as it was") {
    ::mkdir((t / "d").c_str(), 0755);
    ::mkdir((t / "d/ukstap").c_str(), 0755);
    t.write("d/ukstap/metadata", "/* CTF 1.8 */\nenv {\n\ttracer_name = \"lttng-ust\";\n};\n");
    REQUIRE_FALSE(ukstap::ctf::prepare_trace_dir(t / "d", why));
    REQUIRE(why == "cannot write the CTF trace to '" + (t / "d") + "': it is not empty and not a previous ukstap trace");
    REQUIRE(::access((t / "d/ukstap/metadata").c_str(), F_OK) == 0);
  }
  SECTION("a trace directory that is a symlink: refused, not followed") {
    ::mkdir((t / "d").c_str(), 0755);
    ::mkdir((t / "elsewhere").c_str(), 0755);
    t.write("elsewhere/metadata", "tracer_name = \"ukstap\";");
    REQUIRE(::symlink((t / "elsewhere").c_str(), (t / "d/ukstap").c_str()) == 0);
    REQUIRE_FALSE(ukstap::ctf::prepare_trace_dir(t / "d", why));
    REQUIRE(::access((t / "elsewhere/metadata").c_str(), F_OK) == 0);
  }
}
