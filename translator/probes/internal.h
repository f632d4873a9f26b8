// Internals shared by the probe families of translator/probes/ (not part of the contract: use
// provider.h from outside this directory).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ast/ast.h"
#include "probes/provider.h"

namespace ukstap {
class Session;
}

namespace ukstap::probes {

// The kind of argument a pattern component takes.
enum class ArgKind { None, Number, String };

struct PatternComponent {
  std::string name;
  ArgKind arg = ArgKind::None;
  std::string str() const;  // "timer", "ms(number)", "process(string)"
};

struct Pattern;

// What a family builder receives: the user's point, the pattern it matched, and for each pattern
// component the user's component that matched it (same index).
struct Match {
  const ast::ProbePoint* pp = nullptr;
  const Pattern* pattern = nullptr;
  std::vector<const ast::ProbePointComponent*> comps;  // one per pattern component

  // The user's argument of the component named `name` (first occurrence), null if absent.
  const ast::Expression* arg(const std::string& name) const;
  bool has(const std::string& name) const;
  int64_t num(const std::string& name, int64_t fallback = 0) const;
  std::string str(const std::string& name, const std::string& fallback = "") const;
  const Token* tok(const std::string& name) const;  // the component's token, else pp's
};

using Builder = std::function<void(Session&, const Match&, std::vector<ResolvedPoint>&)>;

struct Pattern {
  std::vector<PatternComponent> comps;
  Builder build;
  std::string str() const;  // "process(string).function(string).return"
};

// All built-in patterns (a stable list built once).
const std::vector<Pattern>& all_patterns();

// Family registration (each *_family.cpp adds its patterns).
void add_begin_end_patterns(std::vector<Pattern>& out);
void add_timer_patterns(std::vector<Pattern>& out);
void add_tracepoint_patterns(std::vector<Pattern>& out);
void add_process_patterns(std::vector<Pattern>& out);
void add_perf_patterns(std::vector<Pattern>& out);
void add_procfs_patterns(std::vector<Pattern>& out);
void add_input_patterns(std::vector<Pattern>& out);
void add_netfilter_patterns(std::vector<Pattern>& out);
void add_kernel_function_patterns(std::vector<Pattern>& out);

// Builds a concrete point in the session arena. `comps`: functor and argument (a number, a
// string, or none) per component; tokens are taken from the user's point `like`.
struct PointComponent {
  std::string functor;
  ArgKind arg = ArgKind::None;
  int64_t num = 0;
  std::string str;
  const Token* tok = nullptr;
};
ast::ProbePoint* make_point(Session& s, const ast::ProbePoint& like,
                            const std::vector<PointComponent>& comps);

// The concrete components of a match, copied from the pattern names and the user's arguments.
std::vector<PointComponent> concrete_components(const Match& m);

// Edit distance (suggest_similar() is in provider.h).
unsigned levenshtein(const std::string& a, const std::string& b);

// Is this kernel able to serve kprobes (kprobe_events in tracefs or a kprobe PMU)?
bool kprobes_available();

// Per-session cache of tracefs formats and ELF/DWARF digests (Session::probe_cache).
struct Cache;
Cache& session_cache(Session& s);

}  // namespace ukstap::probes
