// CFI sections, decompressed (see cfi_section.h).
#include "vma-tracker/cfi_section.h"

#include <gelf.h>

#include <cstring>

namespace ukstap::sym {

CfiSection cfi_section_kind(const char* name) {
  if (!name) return CfiSection::none;
  if (std::strcmp(name, ".eh_frame") == 0) return CfiSection::eh_frame;
  if (std::strcmp(name, ".debug_frame") == 0 || std::strcmp(name, ".zdebug_frame") == 0)
    return CfiSection::debug_frame;
  return CfiSection::none;
}

Elf_Data* cfi_section_data(Elf* elf, Elf_Scn* scn) {
  GElf_Shdr sh;
  size_t shstrndx;
  if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || elf_getshdrstrndx(elf, &shstrndx) != 0)
    return nullptr;
  const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
  // Both calls return 0 when the section is already decompressed (a second reader of the same
  // Elf), -1 on corrupt data: then the section is unreadable, not its compressed bytes.
  if (sh.sh_flags & SHF_COMPRESSED) {
    if (elf_compress(scn, 0, 0) < 0) return nullptr;
  } else if (name && std::strncmp(name, ".zdebug", 7) == 0) {
    if (elf_compress_gnu(scn, 0, 0) < 0) return nullptr;
  }
  Elf_Data* data = elf_getdata(scn, nullptr);
  return data && data->d_buf && data->d_size ? data : nullptr;
}

bool has_debug_frame(Elf* elf) {
  size_t shstrndx;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return false;
  for (Elf_Scn* s = elf_nextscn(elf, nullptr); s; s = elf_nextscn(elf, s)) {
    GElf_Shdr sh;
    const char* name = gelf_getshdr(s, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr;
    if (cfi_section_kind(name) == CfiSection::debug_frame && sh.sh_type != SHT_NOBITS) return true;
  }
  return false;
}

}  // namespace ukstap::sym
