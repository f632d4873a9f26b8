// The user-space end of a walk the kernel could not finish because a file's unwind table was not
// loaded yet (a program's first events, the first events after a dlopen: issue 15). The BPF
// module stops such a walk with STP_STOP_NO_TABLE_YET, never guessing, and sends a copy of the
// top of the stack (a USNAP record, common/stp_usnap.h) just before its USTACK record. Here the
// copy is kept until that record comes; then the tables of the files the stack runs through are
// loaded (UnwindTables, at once if the tracker has not reported them yet) and the walk is done
// again over the copy with the kernel's own stepper (unwind/stp_cfi_step.h) and rules
// (stp_uwalk_frame): the stack printed is the one the kernel would have found with its tables.
//
// Why this stepper and not libdwfl's (dwfl_attach_state + dwfl_thread_getframes): the rows are
// already compiled and cached for the kernel, the stop reasons and the "inexact" marks are the
// kernel walk's, and the result cannot differ from what the same event gives once the tables
// are loaded (notes/early.md has the comparison with perf).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/stp_usnap.h"

struct stp_ustack;

namespace ukstap::vma {
class Tracker;
}
namespace ukstap::sym {
class Symbolizer;
}

namespace ukstap::loader {

class UnwindTables;

class DeferredUnwind {
 public:
  DeferredUnwind(vma::Tracker& tracker, sym::Symbolizer& symbolizer, UnwindTables& tables);

  // A USNAP record's payload: kept for the thread's next USTACK record.
  void snapshot(const unsigned char* p, size_t n);
  // A USTACK record of kind PCS: when its walk stopped for a table not loaded yet and its copy
  // came, `pcs`, `exact` and `stop` become the walk over the copy (true). Otherwise they are
  // left as the kernel found them (false: stop stays "unwind table not loaded yet").
  bool finish(const stp_ustack& u, std::vector<uint64_t>& pcs, uint32_t& exact, uint32_t& stop);

  // The script's MAXBACKTRACE (-D): a walk finished here stops at the same depth as the BPF
  // walk would (default: the runtime's, 128).
  void set_max_frames(uint32_t n) { max_frames_ = n; }

  // For -v: copies received, their stack bytes, walks finished from them, walks without one.
  uint64_t copies = 0, copy_bytes = 0, finished = 0, without_copy = 0;
  uint64_t first_ns = 0, last_ns = 0;  // the first and the last copy's event times

 private:
  struct Copy {
    stp_usnap regs;
    std::vector<uint8_t> stack;  // [regs.sp, regs.sp + size)
  };
  vma::Tracker& tracker_;
  sym::Symbolizer& sym_;
  UnwindTables& tables_;
  std::unordered_map<uint32_t, Copy> pending_;  // by tid: the record that follows is its own
  uint32_t max_frames_ = 0;  // 0: the runtime's MAXBACKTRACE
};

}  // namespace ukstap::loader
