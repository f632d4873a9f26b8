// tracefs: where it is (mounting it when needed and allowed), its event list and the parsed
// `events/SYSTEM/EVENT/format` files.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ast/location.h"

namespace ukstap::probes {

struct TraceField {
  std::string type;  // C type as written, array suffix included: "const char *", "char[16]"
  std::string name;
  int offset = 0;
  int size = 0;
  bool is_signed = false;
  // The value a script sees: the declared C integer type's width and signedness. The syscall
  // events store every argument in an 8-byte slot marked unsigned (`field:int dfd; size:8;
  // signed:0`), but $dfd is the C int (AT_FDCWD is -100, as in SystemTap): the low
  // value_size bytes, sign-extended when the C type is signed. Equal to size/is_signed unless
  // the field is a known integer type narrower than its slot.
  int value_size = 0;
  bool value_signed = false;
};

struct TraceEvent {
  std::string system, event;
  long id = -1;
  std::vector<TraceField> fields;  // all fields, common_* included
};

// The width in bytes and signedness of a kernel C integer type name as a format file writes it
// ("int", "const pid_t", "unsigned short", "umode_t", "enum x"); false when not one known here.
bool kernel_c_integer(const std::string& type, int& bytes, bool& is_signed);

// Parses the text of a format file. False when it is not one (no "name:" or "ID:").
bool parse_trace_format(const std::string& text, TraceEvent& ev);

// The -L type text of a tracepoint field: integers (any size) -> "long", pointers in stap's
// DWARF style ("const char *" -> "char const*", "struct task_struct *" -> "struct task_struct*"),
// fixed arrays as written without spaces ("char[16]"), `__data_loc char[]` -> "string".
std::string trace_field_type_text(const TraceField& f);

// Is the field one a script sees as $name? (Not common_* and not __syscall_nr.)
bool trace_field_visible(const TraceField& f);

// Finds the tracefs mount: $UKSTAP_TRACEFS (tests), /sys/kernel/tracing, then
// /sys/kernel/debug/tracing; as root mounts tracefs on /sys/kernel/tracing when neither has an
// events/ directory. Returns "" when unavailable and sets `why`.
std::string find_tracefs(std::string& why);

class Tracefs {
 public:
  explicit Tracefs(std::string root) : root_(std::move(root)) {}
  const std::string& root() const { return root_; }
  // Sorted subsystem names (directories of events/ holding events).
  const std::vector<std::string>& systems();
  // Sorted event names of one subsystem.
  const std::vector<std::string>& events(const std::string& system);
  // The parsed format, read once; null when unreadable.
  const TraceEvent* event(const std::string& system, const std::string& event);

 private:
  std::string root_;
  bool have_systems_ = false;
  std::vector<std::string> systems_;
  std::map<std::string, std::vector<std::string>> events_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<TraceEvent>> formats_;
  std::map<std::pair<std::string, std::string>, bool> failed_;
};

}  // namespace ukstap::probes
