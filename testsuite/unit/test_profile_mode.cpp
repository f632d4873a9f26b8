// driver/profile_mode: --profile's options and its script; the profile writers (loader/profile.h).
// The samples' way from the records to the writers: test_profile_samples.cpp.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "driver/options.h"
#include "driver/profile_mode.h"

using namespace ukstap;

namespace {

CommandLine parse(std::vector<std::string> args, Options& o, std::string& err) {
  std::vector<char*> argv;
  static std::string prog = "ukstap";
  argv.push_back(prog.data());
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream e;
  CommandLine cl = parse_command_line(static_cast<int>(argv.size()), argv.data(), o, e);
  err = e.str();
  return cl;
}

}  // namespace

TEST_CASE("--profile options", "[profile_mode]") {
  std::string err;
  {
    Options o;
    auto cl = parse({"--profile", "-c", "sort x"}, o, err);
    CHECK(cl.action == CommandLine::Action::Run);
    CHECK(o.profile_hz == 99);
    CHECK(o.target_cmd == "sort x");
    CHECK(profile_mode::format_for(o) == "folded");
  }
  {
    Options o;
    parse({"--profile=999", "-o", "out.svg", "-x", "42"}, o, err);
    CHECK(o.profile_hz == 999);
    CHECK(profile_mode::format_for(o) == "svg");
  }
  {
    Options o;
    parse({"--profile", "-o", "p.pb.gz", "-T", "2"}, o, err);
    CHECK(profile_mode::format_for(o) == "pprof");
    o.profile_format = "folded";
    CHECK(profile_mode::format_for(o) == "folded");  // --format wins over the extension
  }
  {
    Options o;
    auto cl = parse({"--profile=0"}, o, err);
    CHECK(cl.action == CommandLine::Action::Error);
    CHECK(err.find("Invalid --profile frequency '0'") != std::string::npos);
  }
  {
    Options o;
    auto cl = parse({"--profile", "-e", "probe begin {}"}, o, err);
    CHECK(cl.action == CommandLine::Action::Error);
    CHECK(err.find("give no script") != std::string::npos);
  }
  {
    Options o;
    auto cl = parse({"--format=png", "--profile"}, o, err);
    CHECK(cl.action == CommandLine::Action::Error);
    CHECK(err.find("Invalid --format 'png'") != std::string::npos);
  }
  {
    Options o;
    auto cl = parse({"--format=svg", "-e", "probe begin {}"}, o, err);
    CHECK(cl.action == CommandLine::Action::Error);
    CHECK(err.find("--format only applies to --profile") != std::string::npos);
  }
}

TEST_CASE("--profile script: target filter or everything but ukstap", "[profile_mode]") {
  Options o;
  o.profile_hz = 999;
  o.target_cmd = "ls";
  std::string s = profile_mode::script(o);
  CHECK(s.find("perf.sw.cpu_clock.hz(999)") != std::string::npos);
  CHECK(s.find("pid() == target()") != std::string::npos);
  CHECK(s.find("print_ubacktrace()") != std::string::npos);
  CHECK(s.find("print_backtrace()") != std::string::npos);
  Options all;
  all.profile_hz = 99;
  CHECK(profile_mode::script(all).find("pid() != stp_pid()") != std::string::npos);
}

#include "loader/profile.h"

TEST_CASE("profile writers: empty profile, odd names, kernel frames", "[profile_mode]") {
  profile::Profile empty;
  CHECK(profile::to_folded(empty).empty());
  std::string svg = profile::to_svg(empty);
  CHECK(svg.find("0 samples") != std::string::npos);
  CHECK(svg.find("nothing was sampled") != std::string::npos);
  std::string gz, why;
  REQUIRE(profile::to_pprof(empty, gz, why));
  CHECK(gz.size() > 10);
  CHECK((unsigned char)gz[0] == 0x1f);
  CHECK((unsigned char)gz[1] == 0x8b);

  profile::Profile p;
  profile::Sample s;
  s.comm = "my prog";
  auto frame = [](uint64_t addr, const char* name, const char* module, bool kernel) {
    profile::Frame f;
    f.addr = addr;
    f.name = name;
    f.module = module;
    f.kernel = kernel;
    return f;
  };
  s.frames = {frame(0xffffffff81000000ull, "do_syscall_64", "kernel", true),
              frame(0x401000, "operator<<(std::ostream&, T)", "/bin/x", false),
              frame(0x402000, "", "/usr/lib/libfoo.so", false), frame(0x403000, "", "", false)};
  s.count = 3;
  p.samples = {s, s};
  // Root first, ';' replaced in names (a demangled name keeps its spaces: the count follows the
  // last one), "_[k]" on kernel frames, equal stacks summed.
  CHECK(profile::to_folded(p) ==
        "my_prog;[unknown];[libfoo.so];operator<<(std::ostream&, T);do_syscall_64_[k] 6\n");
  svg = profile::to_svg(p);
  CHECK(svg.find("operator&lt;&lt;(std::ostream&amp;, T)") != std::string::npos);
  CHECK(svg.find("operator<<") == std::string::npos);
  CHECK(svg.find("6 samples") != std::string::npos);
}

#include <zlib.h>

#include "profile.pb.h"

namespace {

// The pprof bytes decoded by zlib and libprotobuf: each sample's outermost frame's name.
std::vector<std::string> pprof_roots(const std::string& gz) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
  std::string raw(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(raw.data());
  z.avail_out = static_cast<uInt>(raw.size());
  REQUIRE(inflate(&z, Z_FINISH) == Z_STREAM_END);
  raw.resize(z.total_out);
  inflateEnd(&z);
  perftools::profiles::Profile p;
  REQUIRE(p.ParseFromString(raw));
  std::map<uint64_t, std::string> fn, loc;
  for (const auto& f : p.function()) fn[f.id()] = p.string_table(f.name());
  for (const auto& l : p.location()) {
    REQUIRE(loc.count(l.id()) == 0);  // location ids are unique
    loc[l.id()] = fn.at(l.line(0).function_id());
  }
  std::vector<std::string> roots;
  for (const auto& s : p.sample()) roots.push_back(loc.at(s.location_id(s.location_id_size() - 1)));
  return roots;
}

}  // namespace

TEST_CASE("pprof: each sample's root is its own process name", "[profile_mode]") {
  // A -c child is sampled before its exec as "ukstap", then as the program: the two names
  // share no location (a location per (module, address 0) gave every sample the first name).
  profile::Profile p;
  profile::Sample before, after;
  profile::Frame f;
  f.addr = 0x401000;
  f.name = "main";
  f.module = "/bin/x";
  before.comm = "ukstap";
  before.frames = {f};
  before.count = 1;
  after = before;
  after.comm = "split";
  after.count = 5;
  profile::Sample other = after;
  other.comm = "";
  p.samples = {before, after, other};
  std::string gz, why;
  REQUIRE(profile::to_pprof(p, gz, why));
  CHECK(pprof_roots(gz) == std::vector<std::string>{"ukstap", "split", "[unknown]"});
}

TEST_CASE("svg: a rare deep stack too narrow to draw adds no height", "[profile_mode]") {
  // 200,000 samples of a 3-frame stack and one of a 150-frame recursion: the recursion is
  // 0.006 px wide, not drawn. The graph must be as tall as the 3-frame flame (the header, 4 rows
  // with the process name, the footer), not 150 rows of empty space above it. Read back by
  // Python's XML parser: height = viewBox height, topmost frame at y 60 (under the header).
  profile::Profile p;
  profile::Sample shallow, deep;
  profile::Frame f;
  f.module = "/bin/x";
  for (const char* n : {"leaf", "work", "main"}) {
    f.name = n;
    shallow.frames.push_back(f);
  }
  shallow.comm = deep.comm = "x";
  shallow.count = 200000;
  f.name = "recurse";
  deep.frames.assign(150, f);
  p.samples = {shallow, deep};
  char path[] = "/tmp/ukstap-svg-depth-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  std::string svg = profile::to_svg(p);
  REQUIRE(::write(fd, svg.data(), svg.size()) == (ssize_t)svg.size());
  ::close(fd);
  std::string cmd = std::string("python3 -c \"\n"
                                "import sys, xml.etree.ElementTree as ET\n"
                                "ns = '{http://www.w3.org/2000/svg}'\n"
                                "svg = ET.parse(sys.argv[1]).getroot()\n"
                                "h = float(svg.get('height')); vb = float(svg.get('viewBox').split()[3])\n"
                                "ys = [float(r.get('y')) for r in svg.iter(ns + 'rect') if r.get('rx')]\n"
                                "sys.exit(0 if h == vb == 60 + 5 * 16 + 40 and min(ys) == 60 else "
                                "'height %s viewBox %s top %s' % (h, vb, min(ys)))\" ") +
                    path;
  int rc = std::system(cmd.c_str());
  ::unlink(path);
  CHECK(rc == 0);
}
