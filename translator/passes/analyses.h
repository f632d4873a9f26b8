// The deciding analyses of pass 2, run last by pass2_elaborate on the elaborated program
// (after optimization, on the probes and functions later passes will see). Each is a file of
// its own with a typed result; run_analyses() runs them in this order, each reading the
// results before it, and keeps them in s.analyses. Pass 3 only reads them: it writes C, it
// does not decide (codegen/emitter.cpp).
#pragma once

#include <set>

#include "driver/session.h"
#include "passes/backtrace_tokens.h"
#include "passes/call_graph.h"
#include "passes/probe_placement.h"
#include "passes/reachability.h"
#include "passes/symbol_tokens.h"
#include "passes/syscall_dispatch.h"

namespace ukstap::passes {

struct Analyses {
  CallGraph calls;             // call_graph.h: who calls whom; recursion is an error
  ProbePlacement placement;    // probe_placement.h: kernel, native or no side per probe
  Reachability reach;          // reachability.h: functions and globals per side, stack use
  SyscallDispatch dispatch;    // syscall_dispatch.h: the dispatcher policy and slots
  BacktraceTokens bt_tokens;   // backtrace_tokens.h: ubacktrace() keys kept as stack ids
  SymbolTokens sym_tokens;     // symbol_tokens.h: symbol/stack placeholders read as text: errors
  // symbol_key_merge.h: arrays keyed by placeholders whose value is one assigned literal
  std::set<const ast::Vardecl*> text_keyed_literal;
};

// Runs the analyses into s.analyses. Returns the number of errors (reported through s.diag);
// s.analyses is set only when there were none.
int run_analyses(Session& s);

}  // namespace ukstap::passes
