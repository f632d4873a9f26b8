// One frame of a backtrace as pass 5 resolves it, and one profile sample. The record decoders
// (ustack_output, kstack_output) resolve a stack record's pcs into Frames; every output is made
// from them: SystemTap's backtrace texts (docs/STAP-FORMATS.md §4), folded stacks, the SVG
// flame graph and pprof (profile.h). No output is parsed back from another's text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ukstap::loader {

struct Frame {
  uint64_t addr = 0;
  std::string name;      // function; "" when no symbol covers the address
  std::string module;    // file path, "[vdso]", "kernel", a kernel module's name; "" when unknown
  bool kernel = false;   // from a kernel stack (KSTACK record)
  bool inexact = false;  // past the exact part of a user walk: printed " (inexact)"
  uint64_t offset = 0, size = 0;          // with a name: addr within the symbol, its size
  uint64_t mod_offset = 0, mod_size = 0;  // user frames with a module: within its mappings
  std::string src;                        // "FILE:LINE" when asked for and known
};

// One sample of `ukstap --profile`: the process, its frames leaf first (kernel, then user).
struct Sample {
  std::string comm;  // the process name: the root of its stacks
  int pid = 0, tid = 0;
  std::vector<Frame> frames;
  uint64_t count = 1;
};

}  // namespace ukstap::loader
