// Pass 2: arrays keyed by symbol placeholders are merged by their text in user space, and the
// uses that merge cannot make right (errors).
//
// A key from usymname(), symname(), sprint_ubacktrace() and the other symbolizing functions is a
// placeholder (symbol_tokens.h) that hashes the address (and the process), not the text: two pcs
// of one function are two placeholders that print the same name. SystemTap keys such an array by
// the text, one entry per name. So before user space reads the array (a native probe: foreach,
// print, delete, membership, the end-of-run display) ukstap merges the entries whose keys print
// the same text (loader/symbol_key_merge.h). That is exact for counts (`++`, `--`, `+=`, `-=`:
// the sum of two entries' values is the value the one text entry would have) and for statistics
// (`<<<`: count, sum, min, max, variance and histogram merge), and for an array whose every
// assignment writes one literal (`seen[usymname(a)] = 1`: any entry of a name holds the value).
// It is not for any other value (`a[k] = v`: which entry's value was written last is not
// known), nor for a kernel probe
// reading or deleting one entry (it sees one address's part). Those uses are errors here, at
// their file:line:col.
#pragma once

#include <set>

#include "driver/session.h"
#include "passes/probe_placement.h"
#include "passes/reachability.h"
#include "passes/symbol_tokens.h"

namespace ukstap::passes {

// Is array position `k` of `array` one user space merges by text (a placeholder key)?
bool merged_by_text(const SymbolTokens& t, const ast::Vardecl* array, size_t k);

// Reports every use of a text-merged array that merging cannot make right; returns their number.
// `assigned` gets the arrays whose value is one literal (merged by keeping one entry's value, not
// by summing).
int check_symbol_key_merge(Session& s, const SymbolTokens& t, const ProbePlacement& placement,
                           const Reachability& reach, std::set<const ast::Vardecl*>& assigned);

}  // namespace ukstap::passes
