// The sections that hold a file's CFI, and their bytes as the CFI readers need them.
//
// .eh_frame is never compressed, but .debug_frame may be: Go's linker and
// `ld --compress-debug-sections=zlib` write it as an SHF_COMPRESSED section (a Chdr, then zlib
// data), older toolchains as `.zdebug_frame` ("ZLIB" + size, then zlib data). Read raw, such a
// section holds no FDE, and the file's code unwinds by frame pointers only. libelf decompresses
// the section in memory (elf_compress / elf_compress_gnu); the file is never written.
#pragma once

#include <libelf.h>

namespace ukstap::sym {

enum class CfiSection { none, eh_frame, debug_frame };

// Which CFI section `name` is: ".eh_frame", ".debug_frame" or ".zdebug_frame" (a debug_frame).
CfiSection cfi_section_kind(const char* name);

// The section's bytes, decompressed when `scn` is SHF_COMPRESSED or named `.zdebug_*`; nullptr
// for SHT_NOBITS, an empty section or data libelf cannot decompress. The Elf_Data belongs to
// the Elf (freed by elf_end); decompressing is done once per Elf.
Elf_Data* cfi_section_data(Elf* elf, Elf_Scn* scn);

// Whether `elf` has a .debug_frame (or .zdebug_frame) with bytes in it.
bool has_debug_frame(Elf* elf);

}  // namespace ukstap::sym
