// Built-in probe point families: the points that remain after tapset aliases are expanded
// (begin/end/error, timer.*, kernel.trace(), process.*, perf.*). Each family resolves a probe
// point, possibly with wildcards in its components or string arguments, to concrete points,
// and says which $variables each offers (for -L and for type checking of $targets).
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "ast/ast.h"
#include "probes/family_point.h"

namespace ukstap {
class Session;
}

namespace ukstap::probes {

struct ResolvedPoint {
  ast::ProbePoint* point = nullptr;  // concrete (no wildcards), allocated in the session arena
  FamilyPoint family;                // the family and its typed fields (family_point.h)
  // $variables: name with '$' -> type text ("long", "string", "char const*", ...)
  std::vector<std::pair<std::string, std::string>> target_vars;
};

// Resolves `pp` against the built-in families and appends every match to `out`.
// Throws SemanticError (pointing at the offending component's token) when the family is unknown
// ("probe point mismatch (similar: ...)"), when it is one this kernel cannot serve (kprobes,
// kernel.function: says why and what to use instead), or when arguments are invalid. A valid
// pattern that matches nothing returns with `out` unchanged; the caller decides (an optional `?`
// point is fine, otherwise "no match").
void resolve_builtin(Session& s, const ast::ProbePoint& pp, std::vector<ResolvedPoint>& out);

// Is `functor` the first component of some built-in family? (So the elaborator can tell an
// unknown alias from a built-in point.)
bool is_builtin_family(const std::string& functor);

// --dump-probe-types: one pattern per line, sorted, e.g. `kernel.trace(string)`, `timer.ms(number)`.
void dump_probe_types(std::ostream& out);

// Glob matching as SystemTap does for probe point components: '*' within one component,
// '?' one char, '[...]' classes and '{a,b}' alternatives.
bool glob_match(const std::string& pattern, const std::string& text);
bool has_glob(const std::string& s);

// ---- additions (probes/glob.cpp) ----
// glob_match() above matches one component or one string argument: '*' matches any run of
// characters (also '.', so function("foo.*") works), '\\' escapes, a malformed '[' or '{' is
// literal, and '{a,b}' alternatives may nest ("sys_{enter,exit}_open*").
//
// Whole dotted names, for alias matching: '*' and '?' never cross a '.', '**' does, so
// "syscall.*" matches "syscall.open" but not "syscall.open.return", "syscall.**" matches both.
bool glob_match_dotted(const std::string& pattern, const std::string& dotted_name);
// The same over split components: a pattern component "**" swallows zero or more whole
// components, any other one matches exactly one component.
bool glob_match_components(const std::vector<std::string>& pattern,
                           const std::vector<std::string>& components);
// stap's "(similar: a, b, c)" list: up to 5 of `names` closest to `target` by edit distance
// (at most 7 edits), printed in alphabetical order, joined by ", "; "" when none is close.
std::string suggest_similar(const std::string& target, const std::vector<std::string>& names);
// The names a built-in pattern allows after the given leading functors (already concrete):
// {} -> {"begin", "end", "error", "kernel", "never", "perf", "process", "timer", ...},
// {"timer"} -> {"hz", "jiffies", "ms", ...}. For merging built-ins into a mismatch message.
std::vector<std::string> builtin_names_after(const std::vector<std::string>& functors);

}  // namespace ukstap::probes
