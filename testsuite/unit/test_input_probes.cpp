// input.char / input.line (translator/probes/input_family.cpp, loader/input_reader.h): the
// family's points, their side, and how a line is kept. Truth: stapprobes INPUT — input.line's
// `line` holds the newline, and no more than MAXSTRINGLEN characters are kept (a string of
// MAXSTRINGLEN bytes holds MAXSTRINGLEN-1 characters and its NUL).
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "driver/session.h"

#include "loader/input_reader.h"
#include "probes/family_point.h"
#include "probes/provider.h"
#include "probe_points.h"
#include "test_util.h"

using namespace ukstap;
using test::as;
using test::resolve;
using Comp = test::C;

TEST_CASE("input family: __input.char and __input.line, native", "[probes][input]") {
  std::ostringstream err;
  Session s(err);
  auto c = resolve(s, {Comp{"__input"}, Comp{"char"}});
  REQUIRE(c.size() == 1);
  CHECK(c[0].family.kind() == probes::ProbeKind::Input);
  CHECK(as<probes::InputPoint>(c[0]).unit == probes::InputPoint::Unit::Char);
  CHECK(c[0].family.native());
  auto l = resolve(s, {Comp{"__input"}, Comp{"line"}});
  REQUIRE(l.size() == 1);
  CHECK(as<probes::InputPoint>(l[0]).unit == probes::InputPoint::Unit::Line);
}

TEST_CASE("input.line: the line with its newline, cut at MAXSTRINGLEN-1", "[loader][input]") {
  std::string line;
  for (char ch : std::string("abc\n")) loader::InputReader::append_to_line(line, ch, 512);
  CHECK(line == "abc\n");
  line.clear();
  for (char ch : std::string("abcdefgh\n")) loader::InputReader::append_to_line(line, ch, 8);
  CHECK(line == "abcdefg");  // 7 bytes and the NUL fill 8: no room left for the newline
}
