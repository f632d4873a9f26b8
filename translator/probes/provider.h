// Built-in probe point families: the points that remain after tapset aliases are expanded
// (begin/end/error, timer.*, kernel.trace(), process.*, perf.*). Each family resolves a probe
// point, possibly with wildcards in its components or string arguments, to concrete points,
// and says which $variables each offers (for -L and for type checking of $targets).
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ast/ast.h"

namespace ukstap {
class Session;
}

namespace ukstap::probes {

struct ResolvedPoint {
  ast::ProbePoint* point = nullptr;  // concrete (no wildcards), allocated in the session arena
  std::string family;                // "begin", "end", "error", "never", "timer", "tracepoint",
                                     // "process", "uprobe", "perf"
  std::map<std::string, std::string> params;  // for the backend, e.g. {"event","sys_enter_openat"}
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

}  // namespace ukstap::probes
