// Kernel symbols from /proc/kallsyms: the symbol table kernel backtraces and symname()/symdata()
// are named from (loader/kstack_output.cpp). Read once, sorted by address.
//
// As SystemTap's tables (docs/STAP-FORMATS.md §4): a symbol's SIZE is the distance to the next symbol
// (of the same module), 0 for the last one; MODULE is `kernel` for the core kernel, else the
// module name kallsyms gives (`ext4`, and pseudo-modules such as `bpf`). One name per address:
// non-weak over weak, global over local, `__pfx_`/`__cfi_` padding symbols last, fewer leading
// underscores, then the longer name (the user-space symbolizer's rule). The `__pfx_` symbols are
// kept as ends: since Linux 6.2 one sits in the padding before each function, so a function's
// size is its own length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ukstap::ksym {

struct Symbol {
  uint64_t start = 0;
  uint64_t size = 0;    // distance to the next symbol of the same module; 0 for the last one
  std::string name;
  std::string module;   // "kernel" or the module's name
};

class Kallsyms {
 public:
  // Reads a kallsyms-format file (default /proc/kallsyms). False with `why` when unreadable.
  bool load(const std::string& path, std::string& why);
  // Parses kallsyms text: "ADDR TYPE NAME[\t[MODULE]]" lines (unit tests).
  void parse(std::string_view text);

  // Every address read 0: kernel.kptr_restrict hides them from this process.
  bool hidden() const { return hidden_; }
  size_t size() const { return syms_.size(); }

  // The symbol containing addr: the last one starting at or before it, when addr is below the
  // next symbol of its module (the last symbol of a module: within 4 KiB of its start, as its
  // end is unknown). Null when none.
  const Symbol* lookup(uint64_t addr) const;
  // The kernel's (not a module's) symbol named NAME; null when none. A linear scan.
  const Symbol* find(const std::string& name) const;

 private:
  std::vector<Symbol> syms_;  // sorted by start; one per address
  bool hidden_ = false;
};

}  // namespace ukstap::ksym
