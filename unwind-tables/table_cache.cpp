// On-disk cache of compiled unwind tables (table_cache.h).
#include "unwind-tables/table_cache.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "loader/content_hash.h"
#include "loader/owned_files.h"
#include "loader/util.h"
#include "unwind-tables/table_compiler.h"
#include "vma-tracker/cfi_section.h"
#include "vma-tracker/traced_file.h"

namespace ukstap::loader {

namespace {

// Bump when the table compiler's output or this layout changes: old files are then ignored.
// 2: scaled CFA offsets; 3: rbx (STP_CFA_BX, bx_off); 4: vfork RA_LR; 5: keyed by content
constexpr uint32_t kFormat = 5;
constexpr char kMagic[8] = {'U', 'K', 'S', 'T', 'C', 'F', 'I', '\0'};

struct Header {
  char magic[8];
  uint32_t format;
  uint32_t row_size;  // sizeof(stp_cfi_row)
  char key[128];  // elf_table_key, NUL-padded
  uint64_t base;
  uint64_t nrows;
  uint64_t fdes, fdes_skipped, rows, invalid;
  uint64_t by_kind[8];
  uint64_t by_reason[16];
  uint32_t skip_why_len;
  uint32_t pad;
};

}  // namespace

namespace {

// Hashes what compile_cfi reads from `elf` (table_compiler.cpp): the executable PT_LOAD headers
// (FDEs outside them are dropped) and the CFI sections, each by name, address, size and bytes.
// Returns whether the file has a .debug_frame of its own.
bool hash_cfi_inputs(Elf* elf, ContentHash& h) {
  size_t n = 0;
  if (elf_getphdrnum(elf, &n) == 0)
    for (size_t i = 0; i < n; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) h.add(&ph, sizeof ph);
    }
  bool debug_frame = false;
  size_t shstrndx;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    const char* name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr;
    sym::CfiSection kind = sym::cfi_section_kind(name);
    if (kind == sym::CfiSection::none || sh.sh_type == SHT_NOBITS) continue;
    debug_frame |= kind == sym::CfiSection::debug_frame;
    h.add(std::string(name));
    h.add(&sh.sh_addr, sizeof sh.sh_addr);
    h.add(&sh.sh_size, sizeof sh.sh_size);
    // A compressed section (SHF_COMPRESSED, or .zdebug_frame) is hashed as stored: its Chdr or
    // "ZLIB" header and zlib stream fix the bytes the compiler decompresses (cfi_section.h).
    h.add(&sh.sh_flags, sizeof sh.sh_flags);
    for (Elf_Data* d = elf_getdata(scn, nullptr); d; d = elf_getdata(scn, d))
      if (d->d_buf) h.add(d->d_buf, d->d_size);
  }
  return debug_frame;
}

// Reads the file open on `fd` with libelf (the descriptor stays open): calls `use(elf, st)`;
// false when it is not a regular ELF file.
template <typename F>
bool with_elf(int fd, F use) {
  struct stat st;
  bool ok = false;
  elf_version(EV_CURRENT);
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    if (Elf* e = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
      ok = elf_kind(e) == ELF_K_ELF && use(e, st);
      elf_end(e);
    }
  return ok;
}

// The same for the file at `path`, opened as a traced file (traced_file.h: never blocks, regular
// files only).
template <typename F>
bool with_elf(const std::string& path, F use) {
  std::string why;
  int fd = vma::open_traced_file(path, why);
  if (fd < 0) return false;
  bool ok = with_elf(fd, use);
  ::close(fd);
  return ok;
}

std::string build_id_hex(Elf* e) {
  std::string hex;
  const void* bits = nullptr;
  ssize_t n = dwelf_elf_gnu_build_id(e, &bits);
  for (ssize_t i = 0; i < n && i < 32; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", static_cast<const unsigned char*>(bits)[i]);
    hex += b;
  }
  return hex;
}

}  // namespace

namespace {

// `need_build_id`: "" for a file without one (the cache key); else such a file gets "-<hash>"
// (the in-memory identity: with no build-id there is no debug file, so the hash is complete).
template <typename Source>
std::string table_key_of(const Source& file, bool need_build_id = true) {
  std::string id, key;
  with_elf(file, [&](Elf* e, const struct stat& st) {
    id = build_id_hex(e);
    if (id.size() < 4 && (need_build_id || !id.empty())) return false;
    ContentHash h;
    h.add(std::string("cfi-inputs-v2"));  // v2: compressed .debug_frame read
    uint64_t size = st.st_size;
    h.add(&size, sizeof size);
    if (!hash_cfi_inputs(e, h) && !id.empty()) {
      // The table compiler then reads the build-id debug file's .debug_frame (if any).
      std::string dbg = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
      h.add(std::string("debug file"));
      with_elf(dbg, [&](Elf* d, const struct stat&) { return hash_cfi_inputs(d, h); });
    }
    key = id + "-" + h.hex();
    return true;
  });
  return key;
}

}  // namespace

std::string elf_build_id(const std::string& path) {
  std::string id;
  with_elf(path, [&](Elf* e, const struct stat&) {
    id = build_id_hex(e);
    return true;
  });
  return id;
}

std::string elf_table_key(const std::string& path) { return table_key_of(path); }
std::string elf_table_key(int fd) { return table_key_of(fd); }
std::string elf_table_identity(int fd) { return table_key_of(fd, false); }

std::string TableCache::path_for(const std::string& id) const {
  if (dir_.empty() || id.size() < 4) return "";
  return dir_ + "/cfi/" + id.substr(0, 2) + "/" + id.substr(2) + ".v" + std::to_string(kFormat) +
         ".cfi";
}

bool TableCache::load(const std::string& id, unwind::CfiTable& out, std::string* problem) const {
  std::string p = path_for(id);
  if (p.empty()) return false;
  std::string data, why;
  // Its directories as well as the file: ours and private (owned_files.h).
  for (const std::string& d : {dir_ + "/cfi", dir_ + "/cfi/" + id.substr(0, 2)}) {
    struct stat st;
    if (::lstat(d.c_str(), &st) != 0) return false;  // nothing cached yet
    if (!private_dir(d, why)) {
      if (problem) *problem = why;
      return false;
    }
  }
  if (!read_private_file(p, data, why)) {  // absent, or not ours: compiled again
    if (problem) *problem = why;
    return false;
  }
  Header h;
  if (data.size() < sizeof h) return false;
  std::memcpy(&h, data.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.format != kFormat ||
      h.row_size != sizeof(stp_cfi_row) ||
      std::strncmp(h.key, id.c_str(), sizeof h.key) != 0)
    return false;
  size_t need = sizeof h + h.skip_why_len + h.nrows * sizeof(stp_cfi_row);
  if (h.nrows > (1u << 30) || h.skip_why_len > 4096 || data.size() != need) return false;
  out = unwind::CfiTable{};
  out.base = h.base;
  auto& s = out.stats;
  s.fdes = h.fdes;
  s.fdes_skipped = h.fdes_skipped;
  s.rows = h.rows;
  s.invalid = h.invalid;
  for (int i = 0; i < 8; ++i) s.by_kind[i] = h.by_kind[i];
  for (int i = 0; i < 16; ++i) s.by_reason[i] = h.by_reason[i];
  s.skip_why.assign(data.data() + sizeof h, h.skip_why_len);
  out.rows.resize(h.nrows);
  std::memcpy(out.rows.data(), data.data() + sizeof h + h.skip_why_len, h.nrows * sizeof(stp_cfi_row));
  return true;
}

bool TableCache::store(const std::string& id, const unwind::CfiTable& t) const {
  std::string p = path_for(id);
  std::string why;
  if (p.empty() || id.size() >= sizeof(Header::key)) return false;
  if (!make_dirs(dir_) || !make_private_dirs(dir_, "cfi/" + id.substr(0, 2), why)) return false;
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format = kFormat;
  h.row_size = sizeof(stp_cfi_row);
  std::memcpy(h.key, id.data(), id.size());
  h.base = t.base;
  h.nrows = t.rows.size();
  const auto& s = t.stats;
  h.fdes = s.fdes;
  h.fdes_skipped = s.fdes_skipped;
  h.rows = s.rows;
  h.invalid = s.invalid;
  for (int i = 0; i < 8; ++i) h.by_kind[i] = s.by_kind[i];
  for (int i = 0; i < 16; ++i) h.by_reason[i] = s.by_reason[i];
  std::string skip_why = s.skip_why.substr(0, 4096);
  h.skip_why_len = static_cast<uint32_t>(skip_why.size());
  std::string data(reinterpret_cast<const char*>(&h), sizeof h);
  data += skip_why;
  data.append(reinterpret_cast<const char*>(t.rows.data()), t.rows.size() * sizeof(stp_cfi_row));
  // Written under a unique name, then renamed: concurrent runs never read a half-written file.
  return write_private_file(p, data, why);
}

}  // namespace ukstap::loader
