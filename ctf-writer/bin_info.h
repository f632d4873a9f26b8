// What LTTng-UST's statedump says about one loaded ELF file (lttng_ust_statedump:bin_info,
// build_id, debug_link), computed from a mapping the VMA tracker saw instead of from
// dl_iterate_phdr inside the process: babeltrace2's flt.lttng-utils.debug-info and Trace
// Compass read these events to resolve addresses themselves (docs/DESIGN.md "CTF traces").
//
// The values mean exactly what LTTng-UST 2.13's own statedump writes, because the readers
// compute with them:
//   baddr   load bias + the first PT_LOAD's p_vaddr (dlpi_addr + p_vaddr): the address the
//           file's lowest segment was loaded at; for a non-PIC program its link-time address
//   memsz   highest PT_LOAD p_vaddr + p_memsz - lowest PT_LOAD p_vaddr
//   is_pic  e_type == ET_DYN (the reader then looks up ip - baddr in the file's symbols)
//   build_id the NT_GNU_BUILD_ID note's bytes; debug_link: .gnu_debuglink's file name and CRC
// All ELF reading is libelf's and libdwelf's (dwelf_elf_gnu_build_id, dwelf_elf_gnu_debuglink).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ukstap::ctf {

// The facts of one file, independent of where it is mapped.
struct ElfFacts {
  bool ok = false;            // false: not readable as ELF (vanished, not a regular file, not ELF)
  bool is_pic = false;        // ET_DYN
  uint64_t vaddr_lo = 0;      // lowest PT_LOAD p_vaddr
  uint64_t memsz = 0;         // LTTng's memsz (above)
  struct Load { uint64_t vaddr, offset, filesz; };
  std::vector<Load> loads;    // PT_LOAD segments, for the load bias of a mapping
  std::vector<uint8_t> build_id;  // empty: none
  std::string debug_link;     // "" : none
  uint32_t debug_link_crc = 0;

  // The load bias of a mapping of this file at `map_start` with file offset `pgoff` (file vaddr
  // = address - bias): from the PT_LOAD whose file range holds pgoff; start - pgoff when none does.
  uint64_t bias_for(uint64_t map_start, uint64_t pgoff) const;
  // LTTng's baddr for that mapping.
  uint64_t baddr_for(uint64_t map_start, uint64_t pgoff) const {
    return bias_for(map_start, pgoff) + vaddr_lo;
  }
};

// Reads the facts of `path` (opened as vma-tracker/traced_file.h opens traced files: no FIFO,
// no link swapped in). Never prints: a file that vanished or is not ELF gives ok = false and
// the reason in `why`.
ElfFacts read_elf_facts(const std::string& path, std::string& why);

// Facts by file (path, dev, ino as the kernel reported them), read once.
class ElfFactsCache {
 public:
  const ElfFacts& get(const std::string& path, uint64_t dev, uint64_t ino);
  uint64_t unreadable = 0;  // files that gave ok = false

 private:
  std::map<std::string, ElfFacts> by_file_;
};

}  // namespace ukstap::ctf
