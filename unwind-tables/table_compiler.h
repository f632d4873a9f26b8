// The unwind-table compiler: a file's DWARF CFI (.eh_frame, plus .debug_frame of the file or of
// its build-id debug file) turned into the compact rows of runtime/unwind/stp_cfi.h, which the
// BPF and native steppers evaluate without a DWARF interpreter.
//
// libdw interprets the CFI programs; this code only enumerates the FDEs (fde_ranges.h), asks
// libdw for the rules of each row and classifies them into the few forms a stepper can evaluate.
// Whatever does not fit becomes an INVALID row with a reason, so the walk stops there instead of
// guessing. x86_64 (DWARF regs rbp=6, rsp=7, RA=16) and aarch64 (x29, sp=31, RA column x30;
// runtime/arch/): aarch64 rows use the RA kinds of stp_cfi.h (RA in x30 or at CFA+off).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "unwind/stp_cfi.h"

namespace ukstap::unwind {

struct CfiTable {
  uint64_t base = 0;              // file vaddr of row pc 0 (the lowest FDE start)
  std::vector<stp_cfi_row> rows;  // sorted by pc, adjacent equal rules merged
  // The -v coverage report, over the final (merged) rows.
  struct Stats {
    size_t fdes = 0;          // FDEs enumerated (.eh_frame and .debug_frame, duplicates removed)
    size_t fdes_skipped = 0;  // FDEs outside the executable segments (dropped) or that libdw
                              // could not give a frame for (one INVALID NO_CFA row each)
    std::string skip_why;     // why the first one was skipped
    size_t rows = 0;          // code rows: rows.size() minus the STP_INV_NO_FDE gap rows
    size_t invalid = 0;       // code rows of kind STP_CFA_INVALID (gap rows not counted)
    size_t by_kind[8] = {};   // code rows by enum stp_cfa_kind
    size_t by_reason[16] = {};  // INVALID rows by enum stp_cfi_invalid ([0]: the NO_FDE gap rows)
  } stats;
};

// Compiles the CFI of the ELF file at `path`. Where .eh_frame and .debug_frame both cover an
// address, .eh_frame wins. Odd or corrupt CFI never fails the whole file: the affected rows are
// INVALID with a reason. Returns false with a one-line `why` only when the file cannot be read
// as ELF, is neither x86_64 nor aarch64, or its CFI spans more than 4 GiB (row pcs are 32-bit). A file without
// any CFI gives true, no rows and a `why`.
bool compile_cfi(const std::string& path, CfiTable& out, std::string& why);
// The same from a descriptor the caller opened (vma/traced_file.h) and keeps; `path` only names
// it in messages. The file is read through the descriptor only.
bool compile_cfi(int fd, const std::string& path, CfiTable& out, std::string& why);

// The row covering file vaddr `vaddr`: nullptr below base and past the end of the last FDE
// (where the final NO_FDE row starts). Between FDEs the gap row answers.
const stp_cfi_row* find_row(const CfiTable& t, uint64_t vaddr);

// "libc.so.6: 24102 rows, 99.95% expressible (12 invalid: 10 CFA expr, 2 RA rule), 3100 FDEs"
std::string coverage_line(const std::string& name, const CfiTable& t);

// Short names for the coverage report and tests.
const char* cfa_kind_name(unsigned kind);
const char* invalid_reason_name(unsigned reason);

}  // namespace ukstap::unwind
