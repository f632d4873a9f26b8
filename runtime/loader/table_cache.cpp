// On-disk cache of compiled unwind tables (table_cache.h).
#include "loader/table_cache.h"
#include "vma-tracker/traced_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "loader/util.h"
#include "vma-tracker/table_compiler.h"

namespace ukstap::loader {

namespace {

// Bump when the table compiler's output or this layout changes: old files are then ignored.
constexpr uint32_t kFormat = 4;  // 2: scaled CFA offsets; 3: rbx (STP_CFA_BX, bx_off); 4: vfork RA_LR
constexpr char kMagic[8] = {'U', 'K', 'S', 'T', 'C', 'F', 'I', '\0'};

struct Header {
  char magic[8];
  uint32_t format;
  uint32_t row_size;  // sizeof(stp_cfi_row)
  char build_id[64];  // hex, NUL-padded
  uint64_t base;
  uint64_t nrows;
  uint64_t fdes, fdes_skipped, rows, invalid;
  uint64_t by_kind[8];
  uint64_t by_reason[16];
  uint32_t skip_why_len;
  uint32_t pad;
};

}  // namespace

std::string elf_build_id(const std::string& path) {
  std::string why;
  int fd = vma::open_traced_file(path, why);  // never blocks, regular files only
  if (fd < 0) return "";
  std::string hex = elf_build_id(fd);
  ::close(fd);
  return hex;
}

std::string elf_build_id(int fd) {
  elf_version(EV_CURRENT);
  std::string hex;
  if (Elf* e = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    const void* bits = nullptr;
    ssize_t n = dwelf_elf_gnu_build_id(e, &bits);
    for (ssize_t i = 0; i < n && i < 32; ++i) {
      char b[3];
      std::snprintf(b, sizeof b, "%02x", static_cast<const unsigned char*>(bits)[i]);
      hex += b;
    }
    elf_end(e);
  }
  return hex;
}

std::string TableCache::path_for(const std::string& id) const {
  if (dir_.empty() || id.size() < 4) return "";
  return dir_ + "/cfi/" + id.substr(0, 2) + "/" + id.substr(2) + ".v" + std::to_string(kFormat) +
         ".cfi";
}

bool TableCache::load(const std::string& id, unwind::CfiTable& out) const {
  std::string p = path_for(id);
  if (p.empty()) return false;
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Header h;
  if (data.size() < sizeof h) return false;
  std::memcpy(&h, data.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.format != kFormat ||
      h.row_size != sizeof(stp_cfi_row) ||
      std::strncmp(h.build_id, id.c_str(), sizeof h.build_id) != 0)
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
  if (p.empty() || id.size() >= sizeof(Header::build_id)) return false;
  if (!make_dirs(p.substr(0, p.rfind('/')))) return false;
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format = kFormat;
  h.row_size = sizeof(stp_cfi_row);
  std::memcpy(h.build_id, id.data(), id.size());
  h.base = t.base;
  h.nrows = t.rows.size();
  const auto& s = t.stats;
  h.fdes = s.fdes;
  h.fdes_skipped = s.fdes_skipped;
  h.rows = s.rows;
  h.invalid = s.invalid;
  for (int i = 0; i < 8; ++i) h.by_kind[i] = s.by_kind[i];
  for (int i = 0; i < 16; ++i) h.by_reason[i] = s.by_reason[i];
  std::string why = s.skip_why.substr(0, 4096);
  h.skip_why_len = static_cast<uint32_t>(why.size());
  // Written under a unique name, then renamed: concurrent runs never read a half-written file.
  std::string tmp = p + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    f.write(why.data(), static_cast<std::streamsize>(why.size()));
    f.write(reinterpret_cast<const char*>(t.rows.data()),
            static_cast<std::streamsize>(t.rows.size() * sizeof(stp_cfi_row)));
    if (!f.flush()) {
      ::unlink(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), p.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace ukstap::loader
