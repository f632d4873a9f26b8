// Pass 2: which script functions each function and each probe calls. Pass 3 gives every
// function one frame (one set of locals), so a cycle in this graph -- recursion -- cannot be
// laid out: it is refused here, at elaboration, with the function and its location.
#pragma once

#include <map>
#include <vector>

#include "ast/ast.h"
#include "driver/session.h"

namespace ukstap::passes {

struct CallGraph {
  // The calls written in each used function's body, in source order (repeats kept).
  std::map<const ast::Function*, std::vector<ast::Function*>> callees;
  // The calls written in each probe's body and condition.
  std::map<const DerivedProbe*, std::vector<ast::Function*>> probe_callees;
  // The function a call cycle re-enters first (searched depth-first from the used functions
  // in s.functions order); null when there is no recursion.
  const ast::Function* recursive = nullptr;

  const std::vector<ast::Function*>& of(const ast::Function* f) const;
};

// Builds the graph of s.functions and s.probes and looks for a cycle.
CallGraph build_call_graph(const Session& s);

// Pass 3's refusal of a cycle (one frame per function cannot hold recursion): "recursive
// function calls are not supported yet (function 'NAME')" at NAME's declaration. Returns the
// number of errors. Not a pass-2 error: SystemTap accepts recursion (bounded at run time by
// MAXNESTING), so `-p2` of such a script succeeds as in stap; only ukstap's code generation
// cannot do it yet.
int report_recursion(Session& s, const CallGraph& g);

}  // namespace ukstap::passes
