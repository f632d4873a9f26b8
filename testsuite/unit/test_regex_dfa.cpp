// The translate-time regex → DFA compiler (codegen/regex_dfa.cpp) against glibc's regexec with
// REG_EXTENDED | REG_NOSUB, the matcher the native side uses: every pattern × every string.
#include <regex.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "codegen/regex_dfa.h"

using ukstap::codegen::compile_regex_dfa;

namespace {

bool posix_match(const std::string& re, const std::string& s) {
  regex_t r;
  REQUIRE(regcomp(&r, re.c_str(), REG_EXTENDED | REG_NOSUB) == 0);
  bool m = regexec(&r, s.c_str(), 0, nullptr, 0) == 0;
  regfree(&r);
  return m;
}

const std::vector<std::string> kPatterns = {
    "", "a", "abc", "^abc", "abc$", "^abc$", "^", "$", "^$", "a|b", "ab|cd", "^ab|cd$",
    "(^a|b$)", "a*", "a+", "a?", "^a*$", "^a+$", "^a?$", "(ab)*", "^(ab)+$", "(a|b)*c",
    "^(a|b)*c$", "a{3}", "^a{3}$", "^a{2,}$", "^a{2,4}$", "^(ab){1,2}$", "a{0}", "^a{0,1}b$",
    ".", "^.$", "a.c", "^...$", "[abc]", "^[abc]+$", "[^abc]", "^[^abc]*$", "[a-z]+[0-9]",
    "^[a-z]+[0-9]$", "[]a]", "^[]a]+$", "[a-]", "^[-a]+$", "[[:digit:]]+", "^[[:alpha:]]+$",
    "^[[:space:]]*x", "[[:upper:]][[:lower:]]", "^[[:alnum:]_]+$", "[[:punct:]]", "\\.",
    "^a\\.b$", "\\*", "a\\+b", "\\(x\\)", "^(a|ab)(c|bcd)(d*)$", "(a*)*", "(a*)+b", "(|a)b",
    "a||b", "x(y|)z", "^(foo|foobar)$", "sys_(enter|exit)_", "^/usr/(s?bin|lib)/",
    "[0-9]+\\.[0-9]+", "^$|^x", "(a|b)*a(a|b)(a|b)", "^[^/]*$", "ba(na)+", "(^|/)lib",
    "(x$|y)", "a$|b", "^(a$|b)", "(a|$)b", "[.]", "^[a-c][x-z]?$", "[[:xdigit:]]{4}"};

const std::vector<std::string> kStrings = {
    "", "a", "b", "c", "ab", "abc", "xabc", "abcx", "aaa", "aaaa", "aa", "abab", "ababab",
    "aac", "bbc", "abcabc", "cd", "acd", "a.c", "a.b", "axb", "a*", "a+b", "aab", "(x)", "x",
    "]", "-", "a-", "123", "abc1", "Abc", "AbC", "hello world", "  x", "\tx", "xyz", "xz",
    "foo", "foobar", "foob", "sys_enter_read", "sys_exit_read", "sys_read", "/usr/bin/ls",
    "/usr/sbin/sshd", "/usr/lib/x", "/usr/libexec", "3.14", "3.", ".5", "banana", "bana",
    "lib", "/lib", "xlib", "/x/lib", "y", "xy", "aab", "abd", "abcd", "abbcd", "abbcdd",
    "ac", "cx", "cz", "dead", "BEEF", "12ab", "x$", "$", "^", "a^b", "b$"};

}  // namespace

TEST_CASE("regex DFA agrees with regexec(REG_EXTENDED) on every pattern and string",
          "[regex_dfa]") {
  int checked = 0;
  for (const auto& re : kPatterns) {
    auto dfa = compile_regex_dfa(re);
    for (const auto& s : kStrings) {
      INFO("pattern '" << re << "' string '" << s << "'");
      CHECK(dfa.matches(s) == posix_match(re, s));
      ++checked;
    }
  }
  CHECK(checked == static_cast<int>(kPatterns.size() * kStrings.size()));
}

TEST_CASE("regex DFA: unsupported or invalid expressions are refused", "[regex_dfa]") {
  for (const char* bad : {"(a", "a)", "[a", "*a", "a{2,1}", "a{300}", "(a)\\1", "[[.a.]]",
                          "[[:nope:]]", "a\\"})
    CHECK_THROWS_AS(compile_regex_dfa(bad), std::runtime_error);
}

TEST_CASE("regex DFA: the state limit", "[regex_dfa]") {
  // (a|b)*a(a|b){12}: a DFA needs 2^13 states; refused under the limit, not built.
  CHECK_THROWS_AS(compile_regex_dfa("(a|b)*a(a|b){12}", 1024), std::runtime_error);
}
