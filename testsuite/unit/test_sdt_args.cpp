// probes/sdt_args.h: SDT argument operands in the AT&T syntax the assembler gives <sys/sdt.h>'s
// "nor" constraints (register, DISP(%reg) memory, $constant), sizes signed when negative.
#include <catch2/catch.hpp>

#include "probes/sdt_args.h"

using ukstap::probes::parse_sdt_arg;

TEST_CASE("SDT arguments: register, memory and constant operands", "[probes][sdt]") {
  const std::string args = "-4@-20(%rbp) 8@%rdi -4@$5 4@%r9d 2@0x10(%rsp) 1@%al";
  auto a = parse_sdt_arg(args, 1);
  REQUIRE(a);
  CHECK((a->reg == 6 && a->mem && a->disp == -20 && a->size == -4));
  a = parse_sdt_arg(args, 2);
  REQUIRE(a);
  CHECK((a->reg == 5 && !a->mem && a->size == 8));
  a = parse_sdt_arg(args, 3);
  REQUIRE(a);
  CHECK((a->reg == -1 && a->disp == 5 && a->size == -4));
  a = parse_sdt_arg(args, 4);
  REQUIRE(a);
  CHECK((a->reg == 9 && !a->mem && a->size == 4));
  a = parse_sdt_arg(args, 5);
  REQUIRE(a);
  CHECK((a->reg == 7 && a->mem && a->disp == 16 && a->size == 2));
  a = parse_sdt_arg(args, 6);
  REQUIRE(a);
  CHECK((a->reg == 0 && a->size == 1));
  CHECK_FALSE(parse_sdt_arg(args, 7));                      // no 7th argument
  CHECK_FALSE(parse_sdt_arg("8@(%rax,%rbx,8)", 1));           // an index register: not handled
  CHECK_FALSE(parse_sdt_arg("8@sym(%rip)", 1));               // a symbol: not handled
  // %ah is bits 8-15 of rax (Intel SDM vol. 1 §3.4.1): the low byte of rax would be wrong.
  CHECK_FALSE(parse_sdt_arg("1@%ah", 1));
  CHECK_FALSE(parse_sdt_arg("-1@%dh", 1));
  CHECK(parse_sdt_arg("1@%al", 1));
}
