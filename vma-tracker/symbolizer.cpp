// The symbolizer (symbolizer.h): libdwfl finds and reads every symbol source; this file only
// chooses which symbols make stap's table, applies stap's SIZE rule and the FDE rule for stripped
// functions, computes load biases and caches files.
#include "vma-tracker/symbolizer.h"
#include "vma-tracker/fde_ranges.h"
#include "vma-tracker/traced_file.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace ukstap::sym {

// One Dwfl per file: the module is reported at base 0, so libdwfl's module addresses are the
// file's own vaddrs (for ET_DYN and ET_EXEC alike) and nothing here depends on where a process
// mapped it. The callbacks (and the debuginfo_path string they point to) must live as long as
// the Dwfl, hence they are members and Impl is never moved.
struct ElfFile::Impl {
  std::string debug_root;  // for safe_find_debuginfo
  std::string debuginfo_path;
  char* debuginfo_path_c = nullptr;
  Dwfl_Callbacks callbacks{};
  Dwfl* dwfl = nullptr;
  Dwfl_Module* mod = nullptr;
  // Every FDE's bounds in the mapped file (.eh_frame, .debug_frame), read once at load.
  std::vector<FdeRange> fdes;
  std::mutex src_mu;
  ~Impl() {
    if (dwfl) dwfl_end(dwfl);
  }
};

ElfFile::~ElfFile() = default;

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%" PRIx64, v);
  return buf;
}

// Section types of the main file that decide where libdwfl took the symbols from.
void main_sections(Elf* elf, bool& has_symtab, bool& has_debugdata) {
  has_symtab = has_debugdata = false;
  size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_SYMTAB) has_symtab = true;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (name && strcmp(name, ".gnu_debugdata") == 0) has_debugdata = true;
  }
}

// libdwfl looks for a separate debug file beside the traced file with a plain blocking open():
// DIR/NAME, DIR/.debug/NAME, DEBUGROOT/DIR/NAME (NAME: the .gnu_debuglink name, else
// BASENAME.debug). DIR may be a user's directory, and a FIFO there would block the symbolizer
// (traced_file.h). So the candidates are looked at first (stat does not open); when one of them
// exists and is not a regular file, only the build-id file under the debug root is searched.
int safe_find_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                        const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                        char** debuginfo_file_name) {
  bool hostile = false;
  if (file_name && *userdata) {
    const std::string& root = *static_cast<const std::string*>(*userdata);  // the debug root
    std::string file = file_name;
    std::string dir = file.substr(0, file.rfind('/') == std::string::npos ? 0 : file.rfind('/'));
    std::string base_name = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
    std::string name = debuglink_file ? debuglink_file : base_name + ".debug";
    for (const std::string& c : {dir + "/" + name, dir + "/.debug/" + name, root + dir + "/" + name,
                                 root + "/" + name}) {
      struct stat st;
      if (stat(c.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) hostile = true;
    }
  }
  if (hostile)
    return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                        debuglink_crc, debuginfo_file_name);
  return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                      debuglink_crc, debuginfo_file_name);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

bool ElfFile::source_line(uint64_t vaddr, std::string& file, int& line) const {
  if (!impl_ || !impl_->mod) return false;
  std::lock_guard<std::mutex> lock(impl_->src_mu);  // libdw caches line tables unlocked
  Dwfl_Line* l = dwfl_module_getsrc(impl_->mod, vaddr);
  if (!l) return false;
  int ln = 0;
  const char* src = dwfl_lineinfo(l, nullptr, &ln, nullptr, nullptr, nullptr);
  if (!src || ln <= 0) return false;
  file = src;
  line = ln;
  return true;
}

bool ElfFile::lookup(uint64_t vaddr, SymbolHit& out) const {
  auto it = std::upper_bound(syms_.begin(), syms_.end(), vaddr,
                             [](uint64_t a, const Sym& s) { return a < s.start; });
  const Sym* s = it == syms_.begin() ? nullptr : &*(it - 1);

  // A symbol whose own st_size covers vaddr is the function, whatever FDEs lie inside it (glibc's
  // assembly routines can have several CFI regions per symbol); no FDE query needed.
  bool inside = s && s->elf_size > 0 && vaddr < s->start + s->elf_size;
  uint64_t fs = 0, fe = 0;
  bool fde = false;
  if (!inside && impl_) {
    if (const FdeRange* r = find_fde(impl_->fdes, vaddr)) {
      fde = true;
      fs = r->start;
      fe = r->end;
    }
  }
  // The FDE starts after the preceding symbol: the function at vaddr has no symbol of its own
  // (stripped static function, .cold part, PLT). Naming it after the preceding symbol would be a
  // lie, so it gets IDA's `sub_<start>` with the FDE's bounds. (Since s is the last symbol at or
  // below vaddr, s->start < fs also means no symbol starts in [fs, vaddr].)
  if (fde && (!s || s->start < fs)) {
    // Except the program's entry point: by the ELF convention every toolchain follows, the
    // function there is _start (stripped programs keep no symbol for it), the frame every
    // main-thread stack ends in.
    out.name = program_entry_ && fs == program_entry_ ? "_start" : "sub_" + hex(fs);
    out.start = fs;
    out.offset = vaddr - fs;
    out.size = fe - fs;
    out.from_fde = true;
    return true;
  }
  if (!s) return false;
  // stap's table has no end addresses: SIZE is the distance to the next symbol (0 for the last),
  // and an address past the symbol's st_size with no FDE still resolves to it (as stap does).
  out.name = s->name;
  out.start = s->start;
  out.offset = vaddr - s->start;
  out.size = it == syms_.end() ? 0 : it->start - s->start;
  out.from_fde = false;
  return true;
}

// Within one PT_LOAD, vaddr - file offset is constant (p_vaddr - p_offset), and that holds for
// the page-aligned head the kernel maps before p_offset too. So the mapping's first byte (file
// offset pgoff) has file vaddr p_vaddr - p_offset + pgoff, and bias = map_start - that vaddr.
// For ET_EXEC this is 0; for a PIE/shared object it is the load address.
uint64_t ElfFile::bias_for(uint64_t map_start, uint64_t pgoff) const {
  const Segment* best = nullptr;
  for (const Segment& seg : loads_) {
    uint64_t first = seg.offset & ~uint64_t(4095);
    if (pgoff >= first && pgoff < seg.offset + seg.filesz) return map_start - (seg.vaddr - seg.offset + pgoff);
    if (first <= pgoff) best = &seg;  // fallback: the last segment starting at or before pgoff
  }
  if (best) return map_start - (best->vaddr - best->offset + pgoff);
  return map_start - pgoff;
}

struct Symbolizer::Impl {
  std::mutex mu;
  std::string debug_root = "/usr/lib/debug";
  std::map<std::string, std::unique_ptr<ElfFile>> by_identity;  // owns every loaded file
  std::map<std::string, const ElfFile*> by_mapping;             // path+dev+ino as the caller gave
  std::map<std::string, std::string> failed;                    // same key -> why (not retried)
  std::map<std::string, double> load_ms;
  const ElfFile* vdso = nullptr;
  bool vdso_tried = false;

  // Reads the file at `path` through one descriptor (traced_file.h); its fstat in `st`.
  std::unique_ptr<ElfFile> load(const std::string& name, const std::string& path, std::string& why,
                                struct stat* st = nullptr);
  const ElfFile* adopt(std::unique_ptr<ElfFile> f, const std::string& identity);
};

// Is section `shndx` of `elf` code? (Also in a separate debug file, where .text is NOBITS but
// keeps its flags.)
static bool in_code_section(Elf* elf, GElf_Word shndx) {
  Elf_Scn* scn = elf ? elf_getscn(elf, shndx) : nullptr;
  GElf_Shdr sh;
  return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

std::unique_ptr<ElfFile> Symbolizer::Impl::load(const std::string& name, const std::string& path,
                                                std::string& why, struct stat* st) {
  int fd = vma::open_traced_file(path, why, st);
  if (fd < 0) return nullptr;
  auto f = std::make_unique<ElfFile>();
  f->impl_ = std::make_unique<ElfFile::Impl>();
  ElfFile::Impl& d = *f->impl_;
  d.debug_root = debug_root;
  // libdwfl's search path: the file's own directory and its .debug/ (for .gnu_debuglink), then
  // the debug root, which serves both ROOT/.build-id/xx/yyyy.debug and ROOT/<dir>/<debuglink>.
  d.debuginfo_path = ":.debug:" + debug_root;
  d.debuginfo_path_c = d.debuginfo_path.data();
  d.callbacks.find_elf = dwfl_build_id_find_elf;
  d.callbacks.find_debuginfo = safe_find_debuginfo;
  d.callbacks.section_address = dwfl_offline_section_address;
  d.callbacks.debuginfo_path = &d.debuginfo_path_c;
  d.dwfl = dwfl_begin(&d.callbacks);
  if (!d.dwfl) {
    close(fd);
    why = std::string("dwfl_begin: ") + dwfl_errmsg(-1);
    return nullptr;
  }
  dwfl_report_begin(d.dwfl);
  d.mod = dwfl_report_elf(d.dwfl, name.c_str(), path.c_str(), fd, 0, false);  // consumes fd
  dwfl_report_end(d.dwfl, nullptr, nullptr);
  if (!d.mod) {
    close(fd);
    why = path + ": " + dwfl_errmsg(-1);
    return nullptr;
  }
  void** userdata = nullptr;  // safe_find_debuginfo's way back to the debug root
  dwfl_module_info(d.mod, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (userdata) *userdata = &d.debug_root;
  f->path_ = name;

  const unsigned char* bits = nullptr;
  GElf_Addr note_vaddr = 0;
  int n = dwfl_module_build_id(d.mod, &bits, &note_vaddr);
  for (int i = 0; i < n; ++i) {
    char b[3];
    snprintf(b, sizeof b, "%02x", bits[i]);
    f->build_id_ += b;
  }

  Dwarf_Addr main_bias = 0;
  Elf* main_elf = dwfl_module_getelf(d.mod, &main_bias);
  d.fdes = read_fde_ranges(main_elf);
  size_t nph = 0;
  bool has_interp = false;
  if (main_elf && elf_getphdrnum(main_elf, &nph) == 0) {
    for (size_t i = 0; i < nph; ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(main_elf, int(i), &ph)) continue;
      if (ph.p_type == PT_LOAD) f->loads_.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz});
      if (ph.p_type == PT_INTERP) has_interp = true;
    }
  }
  GElf_Ehdr eh;
  if (main_elf && gelf_getehdr(main_elf, &eh) && (has_interp || eh.e_type == ET_EXEC))
    f->program_entry_ = eh.e_entry;

  // Symbols, in libdwfl's order of preference: the main .symtab, else a separate debug file's
  // .symtab (build-id, then debuglink), else .dynsym plus the MiniDebugInfo .symtab.
  struct Cand { uint64_t start, size; int rank; int index; const char* name; };
  std::vector<Cand> cands;
  bool from_main = false, from_other = false;
  int nsyms = dwfl_module_getsymtab(d.mod);
  for (int i = 1; i < nsyms; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word shndx = 0;
    Elf* elf = nullptr;
    const char* sname = dwfl_module_getsym_info(d.mod, i, &sym, &addr, &shndx, &elf, nullptr);
    if (!sname) continue;
    (elf == main_elf ? from_main : from_other) = true;
    int type = GELF_ST_TYPE(sym.st_info);
    if (addr == 0 || *sname == '\0' || shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == SHN_COMMON)
      continue;
    // Untyped labels count when they sit in code, as perf counts them: assembly entry points
    // such as ld.so's _start have no type, and without them their code would be named after
    // the preceding function.
    if (type == STT_NOTYPE && !in_code_section(elf, shndx)) continue;
    if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC && type != STT_NOTYPE)
      continue;
    int bind = GELF_ST_BIND(sym.st_info);
    int rank = (bind == STB_WEAK ? 2 : 0) + (bind == STB_GLOBAL ? 0 : 1) + (type == STT_NOTYPE ? 4 : 0);
    cands.push_back({addr, sym.st_size, rank, i, sname});
  }
  // One name per address, chosen much as perf does: non-weak over weak, global over local,
  // glibc's internal __GI_ aliases last, fewer leading underscores, then the longer name (the
  // more specific: __getdents64 over __getdents), then table order. glibc's debug table has
  // __GI___getdents64, __getdents, __getdents64 (local) and getdents64 (weak) at one address:
  // this picks __getdents64.
  auto underscores = [](const char* n) { int k = 0; while (n[k] == '_') ++k; return k; };
  auto internal = [](const char* n) { return std::strncmp(n, "__GI_", 5) == 0; };
  std::sort(cands.begin(), cands.end(), [&](const Cand& a, const Cand& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.rank != b.rank) return a.rank < b.rank;
    if (internal(a.name) != internal(b.name)) return !internal(a.name);
    int ua = underscores(a.name), ub = underscores(b.name);
    if (ua != ub) return ua < ub;
    size_t la = std::strlen(a.name), lb = std::strlen(b.name);
    if (la != lb) return la > lb;
    return a.index < b.index;
  });
  // Names without their symbol version ("__libc_start_main@@GLIBC_2.34" -> "__libc_start_main"):
  // SystemTap and perf print the bare name.
  for (const Cand& c : cands)
    if (f->syms_.empty() || f->syms_.back().start != c.start)
      f->syms_.push_back({c.start, c.size, std::string(c.name, std::strcspn(c.name, "@"))});

  // Where they came from. libdwfl does not say directly: tell by which Elf the symbols belong
  // to. Only foreign symbols means a debug file's .symtab replaced the main file's tables; main
  // plus foreign ones are .dynsym plus the MiniDebugInfo table (libdwfl only loads the latter
  // when no .symtab was found anywhere).
  bool has_symtab = false, has_debugdata = false;
  main_sections(main_elf, has_symtab, has_debugdata);
  const char* debugfile = nullptr;
  dwfl_module_info(d.mod, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &debugfile);
  if (nsyms <= 0)
    f->symbol_source_ = "none";
  else if (has_symtab && !from_other)
    f->symbol_source_ = "symtab";
  else if (from_other && !from_main && debugfile)
    f->symbol_source_ = debugfile;
  else if (from_other && has_debugdata)
    f->symbol_source_ = "minidebuginfo";
  else
    f->symbol_source_ = "dynsym";
  return f;
}

// Keep one ElfFile per identity: a second path (or a copy) of an already loaded build is dropped
// in favour of the first.
const ElfFile* Symbolizer::Impl::adopt(std::unique_ptr<ElfFile> f, const std::string& identity) {
  auto [it, inserted] = by_identity.try_emplace(identity, std::move(f));
  return it->second.get();
}

Symbolizer::Symbolizer() : impl_(std::make_unique<Impl>()) {}
Symbolizer::~Symbolizer() = default;

void Symbolizer::set_debug_root(const std::string& dir) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->debug_root = dir;
}

const ElfFile* Symbolizer::file(const std::string& path, uint64_t dev, uint64_t ino,
                                std::string* why) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string key = path + '\0' + std::to_string(dev) + ':' + std::to_string(ino);
  if (auto it = impl_->by_mapping.find(key); it != impl_->by_mapping.end()) return it->second;
  if (auto it = impl_->failed.find(key); it != impl_->failed.end()) {
    if (why) *why = it->second;
    return nullptr;
  }
  // The kernel's dev/ino are only a cache key: they are not compared with stat()'s, because on
  // overlayfs /proc/PID/maps reports the lower file's identity, which stat() of the path does not.
  std::string err;
  struct stat st {};
  std::unique_ptr<ElfFile> f;
  auto t0 = std::chrono::steady_clock::now();
  f = impl_->load(path, path, err, &st);
  if (!f) {
    impl_->failed[key] = err;
    if (why) *why = err;
    return nullptr;
  }
  impl_->load_ms.try_emplace(path, ms_since(t0));
  std::string identity = f->build_id().empty()
                             ? "f:" + std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino) + ':' + path
                             : "b:" + f->build_id();
  const ElfFile* r = impl_->adopt(std::move(f), identity);
  impl_->by_mapping[key] = r;
  return r;
}

// The vDSO exists only in memory. libdwfl's reporting API wants a file, so the image is copied
// into a memfd, reported by its /proc/self/fd/N name (libdwfl opens its own descriptor), and
// ours is closed. No file in any directory: a /tmp copy (ignoring TMPDIR) was left behind when
// ukstap was killed, or exited from its signal handler, between writing and unlinking it.
const ElfFile* Symbolizer::vdso() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->vdso_tried) return impl_->vdso;
  impl_->vdso_tried = true;
  uint64_t base = getauxval(AT_SYSINFO_EHDR);
  if (!base) return nullptr;
  uint64_t size = 0;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("[vdso]") == std::string::npos) continue;
    uint64_t start = 0, end = 0;
    if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64, &start, &end) == 2 && start == base) size = end - start;
  }
  if (!size) return nullptr;
  int fd = memfd_create("ukstap-vdso", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  bool written = write(fd, reinterpret_cast<const void*>(base), size) == (ssize_t)size;
  auto t0 = std::chrono::steady_clock::now();
  std::string err;
  std::unique_ptr<ElfFile> f =
      written ? impl_->load("[vdso]", "/proc/self/fd/" + std::to_string(fd), err) : nullptr;
  close(fd);
  if (!f) return nullptr;
  impl_->load_ms.try_emplace("[vdso]", ms_since(t0));
  std::string identity = "vdso:" + f->build_id();
  impl_->vdso = impl_->adopt(std::move(f), identity);
  return impl_->vdso;
}

double Symbolizer::load_ms(const std::string& path) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->load_ms.find(path);
  return it == impl_->load_ms.end() ? 0 : it->second;
}

}  // namespace ukstap::sym
