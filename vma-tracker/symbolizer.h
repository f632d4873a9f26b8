// The symbolizer: user addresses -> SYMBOL+0xOFF/0xSIZE, with elfutils (libdwfl/libdw/libelf)
// doing all ELF and DWARF reading: .symtab, .dynsym, MiniDebugInfo (.gnu_debugdata), separate
// debug files by build-id (DEBUGROOT/.build-id/xx/yyyy.debug) and .gnu_debuglink.
//
// Symbol tables are loaded once per file (identity: build-id, else dev+inode+path) and shared by
// every process that maps the file.
//
// Sizes are SystemTap's: SIZE = distance to the next symbol of the table (FUNC and OBJECT
// symbols), not st_size; 0 for the last one (docs/STAP-FORMATS.md §4). A stripped function (no symbol
// starts at the start of the FDE that covers the address, and the preceding symbol starts before
// that FDE) is named after its FDE: `sub_<hex file vaddr of the FDE start>`, size = FDE length —
// never the preceding symbol (docs/DESIGN.md "Symbolizer").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ukstap::sym {

struct SymbolHit {
  std::string name;
  uint64_t start = 0;   // file vaddr of the symbol
  uint64_t offset = 0;  // addr - start
  uint64_t size = 0;    // SystemTap's size (see above)
  bool from_fde = false;
};

class ElfFile {
 public:
  ~ElfFile();
  // The symbol covering file vaddr `vaddr`; false when none (then the caller prints the module
  // form ` 0xADDR [/path+0xOFF/0xSIZE]`).
  bool lookup(uint64_t vaddr, SymbolHit& out) const;
  // Load bias for a mapping of this file at `map_start` with file offset `pgoff`:
  // file vaddr = pc - bias. Uses the PT_LOAD segment holding pgoff.
  uint64_t bias_for(uint64_t map_start, uint64_t pgoff) const;
  const std::string& path() const { return path_; }
  const std::string& build_id() const { return build_id_; }  // hex, "" when none
  // Where the symbols came from: "symtab", "dynsym", "minidebuginfo", or a debug file's path.
  const std::string& symbol_source() const { return symbol_source_; }
  size_t symbol_count() const { return syms_.size(); }
  // Source file and line of file vaddr `vaddr` from DWARF line tables (the file's own or its
  // separate debug file); false without debuginfo. For print_ubacktrace_fileline.
  bool source_line(uint64_t vaddr, std::string& file, int& line) const;

 private:
  friend class Symbolizer;
  struct Sym { uint64_t start; uint64_t elf_size; std::string name; };
  std::string path_, build_id_, symbol_source_;
  std::vector<Sym> syms_;                 // sorted by start, FUNC/OBJECT, de-duplicated
  struct Segment { uint64_t vaddr, offset, filesz; };
  std::vector<Segment> loads_;
  uint64_t program_entry_ = 0;            // e_entry of a program (PT_INTERP or ET_EXEC), else 0
  struct Impl;                            // libdwfl handles (CFI for FDE bounds)
  std::unique_ptr<Impl> impl_;
};

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  // Debug roots searched for separate debug files (default "/usr/lib/debug"), for tests.
  void set_debug_root(const std::string& dir);
  // The file mapped from `path` (dev/ino as the kernel reported them; 0 = unknown). Loaded on
  // first use and cached; nullptr when it cannot be read (the reason in `why`).
  const ElfFile* file(const std::string& path, uint64_t dev = 0, uint64_t ino = 0,
                      std::string* why = nullptr);
  // The vDSO of this kernel (the same image in every 64-bit process): read from ukstap's own
  // mapping, module name "[vdso]".
  const ElfFile* vdso();
  // Milliseconds spent loading `path` the first time (for -v and the benchmarks).
  double load_ms(const std::string& path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ukstap::sym
