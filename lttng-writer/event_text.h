// One ukstap:event's values (ukstap_tp.h), decoded from an event of ukstap's CTF path
// (ctf-writer/wire.h): the common context by LTTng's context names (vpid, vtid, procname, ip,
// callstack_user, callstack_kernel), the class's callstack_*_symbols as lines, and every other
// payload value into the one `fields` text, "name=value, name=value": integers in the display
// base their conversion asked for (%x: 0x..), strings double-quoted with C escapes so that a
// comma or quote inside a value cannot be read as a separator. LTTng-UST's fields are fixed when
// the provider is compiled, and it has no sequence of strings: hence text for what each script
// prints differently, and typed fields for what every event has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ctf-writer/wire.h"
#include "lttng-writer/ust_emit.h"

namespace ukstap::lttng {

struct EventValues {
  std::string name;
  uint64_t hit_ns = 0;
  uint32_t cpu = 0;
  int32_t vpid = 0, vtid = 0;
  std::string procname;
  uint64_t ip = 0;
  std::vector<uint64_t> ustack, kstack;
  std::string usyms, ksyms;  // one frame per line
  std::string fields;
  // The frame texts SymbolSeq values name by id (wire.h Symbol messages, sent once each).
  const std::vector<std::string>* symbols = nullptr;

  // Reads the value of `f` (a common-context field when `common`) and files it.
  void read(ctf::Decoder& d, const ctf::FieldSpec& f, bool common);
  // The tracepoint's argument; points into this object.
  ukstap_lttng_event to_event() const;
};

// A string as `fields` quotes it: "..." with \" \\ \n \t \xHH escapes.
std::string quoted(const std::string& s);

}  // namespace ukstap::lttng
