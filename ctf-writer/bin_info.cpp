#include "ctf-writer/bin_info.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "vma-tracker/traced_file.h"

namespace ukstap::ctf {

uint64_t ElfFacts::bias_for(uint64_t map_start, uint64_t pgoff) const {
  // The segment whose file range holds pgoff; a mapping starts at a page boundary, so a
  // segment starting mid-page covers from its page on. Two segments can share a page (text's
  // end, data's start): the one starting latest at or before pgoff is the mapping's.
  const Load* best = nullptr;
  for (const Load& l : loads) {
    uint64_t page_off = l.offset & ~uint64_t{0xfff};
    if (pgoff >= page_off && pgoff < l.offset + std::max<uint64_t>(l.filesz, 1) &&
        (!best || page_off > (best->offset & ~uint64_t{0xfff})))
      best = &l;
  }
  if (!best) return map_start - pgoff;
  return map_start - (pgoff + best->vaddr - best->offset);
}

ElfFacts read_elf_facts(const std::string& path, std::string& why) {
  ElfFacts f;
  std::string open_why;
  int fd = vma::open_traced_file(path, open_why);
  if (fd < 0) {
    why = open_why;
    return f;
  }
  if (!vma::has_elf_magic(fd)) {
    why = path + " is not an ELF file";
    ::close(fd);
    return f;
  }
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr eh;
  size_t nph = 0;
  if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph) != 0) {
    why = path + ": " + elf_errmsg(-1);
    if (elf) elf_end(elf);
    ::close(fd);
    return f;
  }
  f.is_pic = eh.e_type == ET_DYN;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < nph; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    f.loads.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz});
    lo = std::min<uint64_t>(lo, ph.p_vaddr);
    hi = std::max<uint64_t>(hi, ph.p_vaddr + ph.p_memsz);
  }
  if (f.loads.empty()) {
    why = path + " has no loadable segment";
  } else {
    f.ok = true;
    f.vaddr_lo = lo;
    f.memsz = hi - lo;
    const void* id = nullptr;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
    if (n > 0) f.build_id.assign(static_cast<const uint8_t*>(id), static_cast<const uint8_t*>(id) + n);
    GElf_Word crc = 0;
    if (const char* link = dwelf_elf_gnu_debuglink(elf, &crc)) {
      f.debug_link = link;
      f.debug_link_crc = crc;
    }
  }
  elf_end(elf);
  ::close(fd);
  return f;
}

const ElfFacts& ElfFactsCache::get(const std::string& path, uint64_t dev, uint64_t ino) {
  std::string key = path + '\0' + std::to_string(dev) + ':' + std::to_string(ino);
  auto it = by_file_.find(key);
  if (it != by_file_.end()) return it->second;
  std::string why;
  ElfFacts f = read_elf_facts(path, why);
  if (!f.ok) ++unreadable;
  return by_file_.emplace(key, std::move(f)).first->second;
}

}  // namespace ukstap::ctf
