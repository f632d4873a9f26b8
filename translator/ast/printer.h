// The parse-tree printer: SystemTap's `-p1` dump format (staptree.cxx print methods).
//
// Exact stap format (the default):
//   - every subexpression parenthesized: `(x) = ((a) + (1))`; calls and indexes print their
//     arguments bare: `foo(21)`, `a[(i) + (1)]`;
//   - a block is "{\n" + one "STATEMENT;\n" per statement + "}", with no indentation;
//   - `if`/`try` end with a newline of their own, so a `;` line follows them in a block;
//   - `while (c)` prints as `for (; c; )`, a missing for condition as `1`;
//   - string literals are re-escaped C-style (`"a\n"`), but printf formats and print
//     delimiters go through stap's lex_cast_qstring, which doubles the backslashes of the
//     escapes: `printf("%d\\n", x)`.
// Because of the last two points stap's output does not re-parse to the same tree. With
// PrintOptions::reparsable the printer instead writes formats like string literals, drops the
// stray `;` after compound statements and the extra braces around try/catch bodies, so
// print -> parse -> print is a fixed point.
#pragma once

#include <iosfwd>
#include <string>

#include "ast/ast.h"

namespace ukstap {
class Session;
}

namespace ukstap::ast {

struct PrintOptions {
  bool reparsable = false;
};

// C-style quoting of an unescaped string, as SystemTap writes string literals:
// `"` and `\` escaped, \a \b \f \n \r \t \v by letter, other non-printable bytes as \ooo.
std::string quote_string(const std::string& value);

// One expression, as stap prints it: `(a) + (1)`.
std::string to_string(const Expression& e, const PrintOptions& opts = {});
void print(std::ostream& o, const Expression& e, const PrintOptions& opts = {});

// One statement as stap prints it (a Block: "{\n...}", no trailing ";"). `indent` > 0 prefixes
// every line after the first with that many spaces (for -p2 -v); 0 is stap's -p1 layout.
void print(std::ostream& o, const Statement& s, int indent = 0, const PrintOptions& opts = {});
std::string to_string(const Statement& s, const PrintOptions& opts = {});

// `process("ls").function("main")?`, `begin if ((x) > (0))`: with extras (!, ?, condition).
void print(std::ostream& o, const ProbePoint& pp, bool with_extras = true,
           const PrintOptions& opts = {});

// `global` line bodies: `counts[100]`, `total = 0`, `a%`.
void print(std::ostream& o, const Vardecl& v, const PrintOptions& opts = {});
// `function foo (n)\n{\n...}`
void print(std::ostream& o, const Function& f, const PrintOptions& opts = {});
// `probe begin{\n...}` / `probe a.b = x.y{\n...}`
void print(std::ostream& o, const Probe& p, const PrintOptions& opts = {});
// "# file NAME\n" then embeds, globals, aliases, probes, functions (each followed by "\n").
void print(std::ostream& o, const StapFile& f, const PrintOptions& opts = {});

}  // namespace ukstap::ast
