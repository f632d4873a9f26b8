// The last line of a user stack that stopped before its outermost frame: why it stopped.
//
// SystemTap prints nothing there: a stack cut short looks complete (13 % of a system-wide
// profile's stacks stopped after 3 frames, at a stripped libstdc++ function, with nothing said).
// ukstap ends such a stack with one line in SystemTap's own form for a stack that is not there,
// `<no user backtrace at PP>`:
//
//   <user stack cut short: no unwind table>
//
// A tool that reads stap's backtraces already meets that form (it is not a ` 0xADDR : ...`
// frame line), and a person sees that callers are missing and why (the stop reasons' names are
// -v's, runtime/common/stp_stack_abi.h). It is part of the backtrace's text, not a -v extra,
// because the text itself would otherwise claim a stack it does not have.
#pragma once

#include <cstdint>
#include <string>

namespace ukstap::loader {

// Does a function named `name` start every stack of a process or thread (_start, clone3,
// ld.so's _dl_start_user)? A walk that printed it is complete whatever ended it.
bool is_outermost_frame(const std::string& name);

// The note for a walk that stopped for `stop` (enum stp_unwind_stop) after a last frame that is
// (`outermost`) or is not the outermost one; "" when the stack is complete: it reached the end,
// its outermost frame, or has no user context at all.
std::string stack_cut_note(uint32_t stop, bool outermost);

// The same for a profile: the outermost frame's name of such a stack, "[user stack cut short:
// REASON]" (a flame graph then shows every stack cut short for one reason under one box, not
// each as a tower of its own beside the complete ones); "" when the stack is complete.
std::string stack_cut_frame(uint32_t stop, bool outermost);

}  // namespace ukstap::loader
