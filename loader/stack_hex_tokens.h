// ubacktrace() kept as a key (translator/passes/backtrace_tokens.h): the kernel stored the pcs
// in the "stp_ubtstacks" map and the script's string holds "\x1e" 'H' <16 hex digits of the id>
// "\x1f" instead of the hex list. Printed, or read back by print_ustack/sprint_ustack, the token
// becomes the text ubacktrace() would have made: "0x%x " per pc, all of them (no MAXSTRINGLEN
// cut).
#pragma once

#include <cstdint>
#include <string>

#include "loader/stack_ids.h"

namespace ukstap::loader {

// The hex list of a stored stack ("" when the id is unknown or there are no stacks).
std::string hex_list_of(const StoredStack& st);

// s with every H token replaced by its stack's hex list (unknown ids: ""). When s is exactly
// one known token, *only is set to its stack (its pid and time say how to symbolize it).
std::string expand_hexid_tokens(const std::string& s, const StackIds* ids,
                                const StoredStack** only = nullptr);

}  // namespace ukstap::loader
