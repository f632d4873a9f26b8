// Why a user stack stopped short, as its last line (stack_cut_note.h).
#include "loader/stack_cut_note.h"

#include "common/stp_stack_abi.h"

namespace ukstap::loader {

bool is_outermost_frame(const std::string& name) {
  // The entry point of a program, glibc's thread start (clone3 since 2.34, clone before), and
  // ld.so's entry while it loads the program: nothing calls them.
  return name == "_start" || name == "__clone3" || name == "clone3" || name == "__clone" ||
         name == "clone" || name == "_dl_start_user";
}

namespace {

// The stop reason's name when a walk that stopped for `stop` is incomplete, else null.
const char* cut_reason(uint32_t stop, bool outermost) {
  static const char* names[] = STP_UNWIND_STOP_NAMES;
  stop &= STP_STOP_MASK;
  if (outermost || stop == STP_STOP_END || stop == STP_STOP_NO_USER || stop >= STP_STOP_NR)
    return nullptr;
  return names[stop];
}

}  // namespace

std::string stack_cut_note(uint32_t stop, bool outermost) {
  const char* why = cut_reason(stop, outermost);
  return why ? std::string("<user stack cut short: ") + why + ">\n" : "";
}

std::string stack_cut_frame(uint32_t stop, bool outermost) {
  const char* why = cut_reason(stop, outermost);
  return why ? std::string("[user stack cut short: ") + why + "]" : "";
}

}  // namespace ukstap::loader
