// FDE ranges from .eh_frame/.debug_frame (see fde_ranges.h).
#include "vma-tracker/fde_ranges.h"

#include "vma-tracker/cfi_section.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace ukstap::sym {

namespace {

// Reads one DW_EH_PE-encoded value at p (bounded by end); `here` is p's address for pcrel.
// Returns false for encodings a CIE of a normal ELF file does not use (then the FDE is skipped).
bool read_encoded(const uint8_t*& p, const uint8_t* end, uint8_t enc, uint64_t here, bool is64,
                  uint64_t& out) {
  if (enc == DW_EH_PE_omit) return false;
  uint64_t v = 0;
  size_t n;
  bool sign = false;
  switch (enc & 0x0f) {
    case DW_EH_PE_absptr: n = is64 ? 8 : 4; break;
    case DW_EH_PE_udata2: n = 2; break;
    case DW_EH_PE_udata4: n = 4; break;
    case DW_EH_PE_udata8: n = 8; break;
    case DW_EH_PE_sdata2: n = 2; sign = true; break;
    case DW_EH_PE_sdata4: n = 4; sign = true; break;
    case DW_EH_PE_sdata8: n = 8; sign = true; break;
    default: return false;  // uleb128/sleb128 pointers: not emitted by toolchains for FDEs
  }
  if (p + n > end) return false;
  std::memcpy(&v, p, n);  // little-endian hosts only (x86_64, arm64)
  if (sign && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~0ull << (8 * n);
  p += n;
  switch (enc & 0x70) {
    case 0: break;
    case DW_EH_PE_pcrel: v += here; break;
    default: return false;  // textrel/datarel/funcrel: not used on x86_64/arm64 Linux
  }
  out = v;
  return true;
}

// The FDE pointer encoding of a CIE: the byte after 'R' in the 'z' augmentation data.
uint8_t cie_encoding(const Dwarf_CIE& cie, bool eh_frame, bool is64) {
  uint8_t def = DW_EH_PE_absptr;
  (void)is64;
  if (!eh_frame || !cie.augmentation || cie.augmentation[0] != 'z' || !cie.augmentation_data)
    return def;
  const uint8_t* d = cie.augmentation_data;
  const uint8_t* e = d + cie.augmentation_data_size;
  for (const char* a = cie.augmentation + 1; *a && d < e; ++a) {
    switch (*a) {
      case 'R': return *d;
      case 'L': ++d; break;
      case 'P': {  // personality: encoding byte, then a pointer in that encoding
        uint8_t penc = *d++;
        uint64_t ignored;
        if (!read_encoded(d, e, penc & 0x0f, 0, true, ignored)) return def;
        break;
      }
      case 'S': case 'B': break;
      default: return def;
    }
  }
  return def;
}

void read_section(Elf* elf, Elf_Scn* scn, bool eh_frame, std::vector<FdeRange>& out) {
  GElf_Shdr sh;
  Elf_Data* data = cfi_section_data(elf, scn);  // decompressed (Go's .debug_frame)
  if (!data || !gelf_getshdr(scn, &sh)) return;
  const unsigned char* ident = reinterpret_cast<const unsigned char*>(elf_getident(elf, nullptr));
  if (!ident) return;
  bool is64 = ident[EI_CLASS] == ELFCLASS64;
  std::map<Dwarf_Off, uint8_t> cies;  // CIE offset -> FDE pointer encoding
  Dwarf_Off off = 0, next = 0;
  const uint8_t* base = static_cast<const uint8_t*>(data->d_buf);
  for (int guard = 0; guard < 10000000; ++guard, off = next) {
    Dwarf_CFI_Entry entry;
    int rc = dwarf_next_cfi(ident, data, eh_frame, off, &next, &entry);
    if (rc != 0) break;  // 1: end of section; -1: malformed (stop: the rest is unreadable)
    if (entry.CIE_id == LIBDW_CIE_ID) {
      cies[off] = cie_encoding(entry.cie, eh_frame, is64);
      continue;
    }
    auto cie = cies.find(entry.fde.CIE_pointer);
    uint8_t enc = cie != cies.end() ? cie->second : (uint8_t)DW_EH_PE_absptr;
    const uint8_t* p = entry.fde.start;
    uint64_t start = 0, len = 0;
    uint64_t here = sh.sh_addr + (uint64_t)(p - base);
    if (!read_encoded(p, entry.fde.end, enc, here, is64, start)) continue;
    if (!read_encoded(p, entry.fde.end, enc & 0x0f, 0, is64, len)) continue;
    if (len == 0 || start == 0) continue;  // discarded (e.g. removed by --gc-sections)
    out.push_back({start, start + len});
  }
}

}  // namespace

std::vector<FdeRange> read_fde_ranges(Elf* elf) {
  std::vector<FdeRange> out;
  size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) return out;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name) continue;
    CfiSection kind = cfi_section_kind(name);
    if (kind != CfiSection::none) read_section(elf, scn, kind == CfiSection::eh_frame, out);
  }
  std::sort(out.begin(), out.end(), [](const FdeRange& a, const FdeRange& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const FdeRange& a, const FdeRange& b) { return a.start == b.start; }),
            out.end());
  return out;
}

const FdeRange* find_fde(const std::vector<FdeRange>& ranges, uint64_t vaddr) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), vaddr,
                             [](uint64_t a, const FdeRange& r) { return a < r.start; });
  if (it == ranges.begin()) return nullptr;
  --it;
  return vaddr < it->end ? &*it : nullptr;
}

}  // namespace ukstap::sym
