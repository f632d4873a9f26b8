// What process(...) probes need from an ELF file, read with elfutils (libelf/libdw): function
// symbols (.symtab and .dynsym: a stripped binary keeps its exported ones) with their file
// offsets, the PLT stubs with the names they import, the DWARF line table, their DWARF declaration and variables when debuginfo exists
// (in the file or in /usr/lib/debug by build-id or .gnu_debuglink), and SDT (.note.stapsdt)
// markers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ukstap::probes {

struct FunctionSym {
  std::string name;
  uint64_t addr = 0;    // st_value (link-time virtual address)
  uint64_t size = 0;
  uint64_t offset = 0;  // file offset of addr (what a uprobe attaches to)
  // From DWARF, when a subprogram starts at addr:
  bool has_dwarf = false;
  std::string decl_file;
  int decl_line = 0;
  std::string return_type;  // "" for void
  std::vector<std::pair<std::string, std::string>> vars;  // "$n" -> "int": params, then locals
  int nparams = 0;  // how many of vars are parameters
};

struct SdtNote {
  std::string provider, name, args;  // args: "8@%rdi -4@%esi" (may be empty)
  uint64_t pc = 0, pc_offset = 0;    // address (prelink-adjusted) and file offset
  uint64_t semaphore = 0, semaphore_offset = 0;  // 0 when none
  int nargs = 0;
};

// A PLT entry (process.plt): the stub a call to an imported function goes through. `name` is
// the imported symbol (its relocation's symbol: JUMP_SLOT in .rela.plt, GLOB_DAT for .plt.got).
struct PltEntry {
  std::string name;
  uint64_t addr = 0, offset = 0;  // the stub's address and file offset
};

// One row of the DWARF line table (is_stmt rows only): what .statement("F@FILE:LINE") needs.
struct LineRow {
  std::string file;
  int line = 0;
  uint64_t addr = 0, offset = 0;
};

struct ElfInfo {
  std::string path;   // canonical
  std::string error;  // non-empty: could not be read as ELF
  bool is_dyn = false;  // ET_DYN (PIE or shared library)
  bool have_dwarf = false;
  std::string debug_file;  // where the DWARF came from (path itself or a separate file)
  std::vector<FunctionSym> functions;  // sorted by name, then address
  std::vector<SdtNote> notes;
  std::vector<PltEntry> plt;  // sorted by address
  std::vector<LineRow> lines;  // from DWARF; empty without it
  bool is64 = true;
  // The dynamic section: DT_NEEDED names and the search path (DT_RUNPATH, else DT_RPATH).
  std::vector<std::string> needed;
  std::string runpath;
};

// Reads `path` (already canonical). Never throws: failures are in ElfInfo::error.
std::shared_ptr<const ElfInfo> read_elf_info(const std::string& path);

}  // namespace ukstap::probes
