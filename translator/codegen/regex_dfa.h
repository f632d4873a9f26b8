// A POSIX extended regular expression compiled, at translate time, into a DFA that a kernel-side
// probe runs as a bounded loop over the string's bytes (runtime/bpf/stp_bpf_regex.h). SystemTap
// also compiles `=~` to a DFA in C for its kernel module; the BPF program cannot call regexec.
//
// Semantics are regexec(3)'s with REG_EXTENDED | REG_NOSUB and no REG_NEWLINE (what the native
// side calls): the match may start anywhere, `^` matches only at the start of the string and `$`
// only at its end, `.` and negated brackets match any byte but NUL (the string's end). Supported:
// literals, `\c` (c literal), `.`, bracket expressions with ranges, negation and the [:class:]
// names, `(...)`, `|`, `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` (counts up to 255, RE_DUP_MAX), `^`,
// `$`. Not supported (an error at translate time): back-references, collating elements
// ([. .], [= =]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ukstap::codegen {

struct RegexDfa {
  // Bytes with the same behaviour everywhere share a class: next[] has ncls columns.
  uint8_t cls[256] = {};
  uint32_t ncls = 0;
  uint32_t nstates = 0;  // state 0 is the start (position 0 of the string)
  std::vector<uint16_t> next;  // nstates * ncls: the state after a byte of the class
  // Per state: bit 0 a match has been seen (the answer is yes whatever follows), bit 1 the
  // string may end here (a `$`-path reaches the end).
  std::vector<uint8_t> flags;

  // Runs the automaton as the BPF code does: the reference for the unit tests.
  bool matches(const std::string& s) const;
};

// Compiles `re`. Throws std::runtime_error with a short reason for an invalid or unsupported
// expression, or one whose automaton would exceed `max_states` states.
RegexDfa compile_regex_dfa(const std::string& re, uint32_t max_states = 1024);

// The C of the DFA, for the generated file: `STP_REGEX_DFA(name, ...)` with its tables.
std::string regex_dfa_c(const RegexDfa& d, const std::string& name);

}  // namespace ukstap::codegen
