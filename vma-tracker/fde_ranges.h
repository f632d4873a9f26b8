// Every FDE's address range in a file's .eh_frame and .debug_frame, sorted by start.
//
// The symbolizer names a stripped function after the FDE that covers an address
// (`sub_<start>`, size = FDE length). libdw answers "which CFI row covers pc" but not the
// bounds of the FDE holding that row, so the FDEs are enumerated with dwarf_next_cfi and their
// initial_location/address_range decoded per their CIE's pointer encoding ('R' augmentation).
#pragma once

#include <cstdint>
#include <vector>

#include <libelf.h>

namespace ukstap::sym {

struct FdeRange {
  uint64_t start, end;  // [start, end), file virtual addresses
};

// All FDEs of `elf` (.eh_frame and .debug_frame), sorted by start, duplicates removed.
std::vector<FdeRange> read_fde_ranges(Elf* elf);

// The range covering vaddr in sorted `ranges`, or nullptr.
const FdeRange* find_fde(const std::vector<FdeRange>& ranges, uint64_t vaddr);

}  // namespace ukstap::sym
