// Pass 3: which of the BPF runtime's global functions (STP_RT_FN in runtime/bpf/) a module's
// generated C calls. Each is compiled only into the modules that call it.
//
// Why: clang generates every global function of the runtime into every BPF object, called or
// not: 15 functions, 47 KB of .text, ~0.6 s of the ~1.2 s clang spent on a one-probe script (the
// cold compile's floor: make check compiles ~200 modules cold, and it is the cold start-up's
// floor too). They are global (not static inline) so that the verifier checks each once per
// program, not once per call site.
//
// How: the runtime's API that reaches a function (its callers in runtime/bpf and
// runtime/common, transitively: the macros and inline functions the emitter and the tapsets'
// embedded C call) is listed with it below; a module uses the function when its C names one of
// them outside `#ifdef __UKSTAP_NATIVE__` code. The module then gets `#define STP_USES_<name> 1`
// (else 0) and STP_RT_SELECT before `#include "stp_runtime.h"`. A miss costs verifier work,
// never correctness: the function is then compiled static (runtime/bpf/stp_bpf_strings.h).
// A runtime function marked STP_RT_FN but missing here fails every compile ("unknown type name
// STP__LINK_STP_USES_..."), so the list cannot silently fall behind.
#pragma once

#include <string>
#include <vector>

namespace ukstap::codegen {

struct RuntimeFunction {
  const char* name;                  // the global function (STP_RT_FN(name) in runtime/bpf/)
  std::vector<const char*> callers;  // the runtime names whose use means it is called
};

// Every STP_RT_FN function of the runtime, with its callers.
const std::vector<RuntimeFunction>& runtime_functions();

// The names of runtime_functions() that `source` (a module's generated C) calls from code not
// under `#ifdef __UKSTAP_NATIVE__` / `#ifndef __UKSTAP_BPF__`.
std::vector<std::string> used_runtime_functions(const std::string& source);

// `source` with STP_RT_SELECT and one STP_USES_<name> line per runtime function inserted before
// its `#include "stp_runtime.h"` (unchanged without that line).
std::string select_runtime_functions(const std::string& source);

}  // namespace ukstap::codegen
