#include "probes/elf_symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

namespace ukstap::probes {

namespace {

// Owns an fd + Elf* (+ Dwarf*) and closes them.
struct ElfHandle {
  int fd = -1;
  Elf* elf = nullptr;
  Dwarf* dwarf = nullptr;
  ElfHandle() = default;
  ElfHandle(const ElfHandle&) = delete;
  ElfHandle& operator=(const ElfHandle&) = delete;
  ~ElfHandle() {
    if (dwarf) dwarf_end(dwarf);
    if (elf) elf_end(elf);
    if (fd >= 0) close(fd);
  }
  bool open_file(const std::string& path) {
    elf_version(EV_CURRENT);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    return elf && elf_kind(elf) == ELF_K_ELF;
  }
};

bool file_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string section_name(Elf* elf, size_t shstrndx, const GElf_Shdr& sh) {
  const char* n = elf_strptr(elf, shstrndx, sh.sh_name);
  return n ? n : "";
}

// ----------------------------------------------------------------------------- DWARF type names

bool die_type(Dwarf_Die* die, Dwarf_Die* out) {
  Dwarf_Attribute attr;
  if (!dwarf_attr_integrate(die, DW_AT_type, &attr)) return false;
  return dwarf_formref_die(&attr, out) != nullptr;
}

// SystemTap's dwarf_type_name(): "char const*", "struct S*", "unsigned int", "int[]".
std::string type_name(Dwarf_Die* die, int depth = 0) {
  if (depth > 16) return "?";
  const char* n = dwarf_diename(die);
  Dwarf_Die sub;
  bool has_sub = die_type(die, &sub);
  auto inner = [&]() { return has_sub ? type_name(&sub, depth + 1) : std::string("void"); };
  switch (dwarf_tag(die)) {
    case DW_TAG_base_type:
    case DW_TAG_typedef:
    case DW_TAG_unspecified_type: return n ? n : "?";
    case DW_TAG_structure_type: return std::string("struct ") + (n ? n : "{...}");
    case DW_TAG_union_type: return std::string("union ") + (n ? n : "{...}");
    case DW_TAG_class_type: return std::string("class ") + (n ? n : "{...}");
    case DW_TAG_enumeration_type: return std::string("enum ") + (n ? n : "{...}");
    case DW_TAG_pointer_type:
      if (has_sub && dwarf_tag(&sub) == DW_TAG_subroutine_type) {
        Dwarf_Die ret;
        std::string r = die_type(&sub, &ret) ? type_name(&ret, depth + 1) : "void";
        return r + " (*)()";
      }
      return inner() + "*";
    case DW_TAG_reference_type: return inner() + "&";
    case DW_TAG_rvalue_reference_type: return inner() + "&&";
    case DW_TAG_const_type: return inner() + " const";
    case DW_TAG_volatile_type: return inner() + " volatile";
    case DW_TAG_restrict_type:
    case DW_TAG_atomic_type: return inner();
    case DW_TAG_array_type: return inner() + "[]";
    case DW_TAG_subroutine_type: return inner() + " ()";
    default: return n ? n : "?";
  }
}

struct DwarfFunc {
  std::string decl_file;
  int decl_line = 0;
  std::string return_type;
  std::vector<std::pair<std::string, std::string>> vars;
  int nparams = 0;
};

void collect_vars(Dwarf_Die* fn, DwarfFunc& df) {
  Dwarf_Die child;
  if (dwarf_child(fn, &child) != 0) return;
  std::vector<std::pair<std::string, std::string>> params, locals;
  do {
    int tag = dwarf_tag(&child);
    if (tag != DW_TAG_formal_parameter && tag != DW_TAG_variable) continue;
    const char* n = dwarf_diename(&child);
    if (!n) continue;
    Dwarf_Die t;
    std::string ty = die_type(&child, &t) ? type_name(&t) : "void";
    (tag == DW_TAG_formal_parameter ? params : locals).push_back({std::string("$") + n, ty});
  } while (dwarf_siblingof(&child, &child) == 0);
  df.vars = params;
  df.nparams = static_cast<int>(params.size());
  df.vars.insert(df.vars.end(), locals.begin(), locals.end());
}

void walk_dies(Dwarf_Die* parent, std::map<uint64_t, DwarfFunc>& out, int depth) {
  if (depth > 8) return;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      Dwarf_Addr lo;
      if (dwarf_lowpc(&child, &lo) != 0) continue;
      if (out.count(lo)) continue;
      DwarfFunc df;
      if (const char* f = dwarf_decl_file(&child)) df.decl_file = f;
      dwarf_decl_line(&child, &df.decl_line);
      Dwarf_Die t;
      if (die_type(&child, &t)) df.return_type = type_name(&t);
      collect_vars(&child, df);
      out[lo] = std::move(df);
    } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
               tag == DW_TAG_structure_type) {
      walk_dies(&child, out, depth + 1);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

std::map<uint64_t, DwarfFunc> read_dwarf_funcs(Dwarf* dw) {
  std::map<uint64_t, DwarfFunc> out;
  Dwarf_Off off = 0, next;
  size_t hsize;
  while (dwarf_nextcu(dw, off, &next, &hsize, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(dw, off + hsize, &cu)) walk_dies(&cu, out, 0);
    off = next;
  }
  return out;
}

// A separate debug file for `elf`: /usr/lib/debug/.build-id/NN/REST.debug, else the
// .gnu_debuglink name beside the file, in .debug/ or under /usr/lib/debug.
std::string find_debug_file(Elf* elf, const std::string& path) {
  const void* id = nullptr;
  ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
  if (n > 1) {
    const unsigned char* b = static_cast<const unsigned char*>(id);
    char hex[3];
    std::string p = "/usr/lib/debug/.build-id/";
    snprintf(hex, sizeof hex, "%02x", b[0]);
    p += hex;
    p += "/";
    for (ssize_t i = 1; i < n; ++i) {
      snprintf(hex, sizeof hex, "%02x", b[i]);
      p += hex;
    }
    p += ".debug";
    if (file_exists(p)) return p;
  }
  GElf_Word crc;
  if (const char* link = dwelf_elf_gnu_debuglink(elf, &crc)) {
    std::string dir = path.substr(0, path.rfind('/'));
    for (std::string c : {dir + "/" + link, dir + "/.debug/" + link, "/usr/lib/debug" + dir + "/" + link})
      if (c != path && file_exists(c)) return c;
  }
  return "";
}


// The PLT stubs: each stub jumps through a GOT slot (`jmp *disp(%rip)`, ff 25, possibly after
// endbr64 and a bnd prefix); the slot's relocation names the imported symbol. Decoding the jump
// rather than assuming "slot i = relocation i" works for .plt, .plt.sec (IBT) and .plt.got
// alike, lazy or -z now (what objdump's NAME@plt labels show).
template <class FileOffset>
void read_plt(Elf* elf, size_t shstrndx, const FileOffset& file_offset, ElfInfo& info) {
  std::map<uint64_t, std::string> got_names;  // GOT slot address -> symbol
  std::vector<std::pair<GElf_Shdr, Elf_Data*>> stubs;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    std::string name = section_name(elf, shstrndx, sh);
    if (sh.sh_type == SHT_RELA && (name == ".rela.plt" || name == ".rela.dyn")) {
      Elf_Scn* symscn = elf_getscn(elf, sh.sh_link);
      GElf_Shdr symsh;
      if (!symscn || !gelf_getshdr(symscn, &symsh)) continue;
      Elf_Data* syms = elf_getdata(symscn, nullptr);
      Elf_Data* data = elf_getdata(scn, nullptr);
      size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      for (size_t i = 0; data && syms && i < count; ++i) {
        GElf_Rela r;
        if (!gelf_getrela(data, i, &r)) continue;
        uint32_t type = GELF_R_TYPE(r.r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
        GElf_Sym sym;
        if (!gelf_getsym(syms, GELF_R_SYM(r.r_info), &sym)) continue;
        const char* n = elf_strptr(elf, symsh.sh_link, sym.st_name);
        if (n && *n) got_names[r.r_offset] = n;
      }
    }
    if (sh.sh_type == SHT_PROGBITS && (name == ".plt" || name == ".plt.sec" || name == ".plt.got"))
      stubs.push_back({sh, elf_getdata(scn, nullptr)});
  }
  for (auto& [sh, data] : stubs) {
    if (!data || !data->d_buf) continue;
    const unsigned char* b = static_cast<const unsigned char*>(data->d_buf);
    size_t size = data->d_size;
    size_t ent = sh.sh_entsize ? sh.sh_entsize : 16;
    if (ent < 8) ent = 16;
    for (size_t at = 0; at + 6 <= size; at += ent) {
      for (size_t k = at; k + 6 <= size && k < at + ent && k < at + 8; ++k) {
        if (b[k] != 0xff || b[k + 1] != 0x25) continue;
        int32_t disp;
        std::memcpy(&disp, b + k + 2, 4);
        uint64_t slot = sh.sh_addr + k + 6 + static_cast<int64_t>(disp);
        auto it = got_names.find(slot);
        if (it != got_names.end()) {
          PltEntry e;
          e.name = it->second;
          e.addr = sh.sh_addr + at;
          e.offset = file_offset(e.addr);
          info.plt.push_back(std::move(e));
        }
        break;
      }
    }
  }
  std::sort(info.plt.begin(), info.plt.end(),
            [](const PltEntry& a, const PltEntry& b) { return a.addr < b.addr; });
}

// DT_NEEDED, DT_RUNPATH/DT_RPATH (process.library's search for the libraries a program uses).
void read_dynamic(Elf* elf, ElfInfo& info) {
  std::string rpath;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; data && i < count; ++i) {
      GElf_Dyn d;
      if (!gelf_getdyn(data, i, &d) || d.d_tag == DT_NULL) continue;
      if (d.d_tag != DT_NEEDED && d.d_tag != DT_RUNPATH && d.d_tag != DT_RPATH) continue;
      const char* s = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
      if (!s) continue;
      if (d.d_tag == DT_NEEDED) info.needed.push_back(s);
      else if (d.d_tag == DT_RUNPATH) info.runpath = s;
      else rpath = s;
    }
  }
  if (info.runpath.empty()) info.runpath = rpath;
}

// The is_stmt rows of every CU's line table.
template <class FileOffset>
void read_lines(Dwarf* dw, const FileOffset& file_offset, ElfInfo& info) {
  Dwarf_Off off = 0, next;
  size_t hsize;
  while (dwarf_nextcu(dw, off, &next, &hsize, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    Dwarf_Lines* lines = nullptr;
    size_t n = 0;
    if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0) {
      for (size_t i = 0; i < n; ++i) {
        Dwarf_Line* l = dwarf_onesrcline(lines, i);
        bool stmt = false, end = false;
        Dwarf_Addr a;
        int ln = 0;
        if (!l || dwarf_linebeginstatement(l, &stmt) != 0 || !stmt) continue;
        if (dwarf_lineendsequence(l, &end) == 0 && end) continue;
        if (dwarf_lineaddr(l, &a) != 0 || dwarf_lineno(l, &ln) != 0 || ln <= 0) continue;
        const char* f = dwarf_linesrc(l, nullptr, nullptr);
        if (!f) continue;
        info.lines.push_back({f, ln, a, file_offset(a)});
      }
    }
    off = next;
  }
}

}  // namespace

std::shared_ptr<const ElfInfo> read_elf_info(const std::string& path) {
  auto info = std::make_shared<ElfInfo>();
  info->path = path;
  ElfHandle h;
  if (!h.open_file(path)) {
    info->error = h.fd < 0 ? std::string(std::strerror(errno)) : "not an ELF file";
    return info;
  }
  Elf* elf = h.elf;
  GElf_Ehdr eh;
  if (!gelf_getehdr(elf, &eh)) {
    info->error = "not an ELF file";
    return info;
  }
  info->is_dyn = eh.e_type == ET_DYN;
  bool is64 = gelf_getclass(elf) == ELFCLASS64;

  std::vector<GElf_Phdr> loads;
  size_t phnum = 0;
  elf_getphdrnum(elf, &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD) loads.push_back(ph);
  }
  auto file_offset = [&](uint64_t addr) -> uint64_t {
    for (auto& ph : loads)
      if (addr >= ph.p_vaddr && addr < ph.p_vaddr + std::max(ph.p_memsz, ph.p_filesz))
        return addr - ph.p_vaddr + ph.p_offset;
    return addr;
  };

  size_t shstrndx = 0;
  elf_getshdrstrndx(elf, &shstrndx);
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynsym = nullptr;
  Elf_Scn* sdt = nullptr;
  uint64_t sdt_base_addr = 0;
  bool have_sdt_base = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_SYMTAB) symtab = scn;
    if (sh.sh_type == SHT_DYNSYM) dynsym = scn;
    std::string name = section_name(elf, shstrndx, sh);
    if (sh.sh_type == SHT_NOTE && name == ".note.stapsdt") sdt = scn;
    if (name == ".stapsdt.base") {
      sdt_base_addr = sh.sh_addr;
      have_sdt_base = true;
    }
  }

  // Function symbols: .symtab and .dynsym (a stripped binary has only .dynsym, its exported
  // functions; an unstripped one has both, duplicates are dropped below).
  for (Elf_Scn* scn : {symtab, dynsym}) {
    if (!scn) continue;
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    Elf_Data* data = elf_getdata(scn, nullptr);
    size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; data && i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, i, &sym)) continue;
      int type = GELF_ST_TYPE(sym.st_info);
      if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
      if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
      const char* n = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (!n || !*n) continue;
      FunctionSym f;
      f.name = n;
      // .dynsym names may carry a version ("memcpy@@GLIBC_2.14" only in readelf's view: the
      // string table holds the bare name), so no stripping is needed here.
      f.addr = sym.st_value;
      f.size = sym.st_size;
      f.offset = file_offset(sym.st_value);
      info->functions.push_back(std::move(f));
    }
  }
  info->is64 = is64;
  read_plt(elf, shstrndx, file_offset, *info);
  read_dynamic(elf, *info);
  std::sort(info->functions.begin(), info->functions.end(),
            [](const FunctionSym& a, const FunctionSym& b) {
              return a.name != b.name ? a.name < b.name : a.addr < b.addr;
            });
  info->functions.erase(std::unique(info->functions.begin(), info->functions.end(),
                                    [](const FunctionSym& a, const FunctionSym& b) {
                                      return a.name == b.name && a.addr == b.addr;
                                    }),
                        info->functions.end());

  // DWARF: in the file, else in a separate debug file.
  h.dwarf = dwarf_begin_elf(elf, DWARF_C_READ, nullptr);
  std::unique_ptr<ElfHandle> dbg;
  Dwarf* dw = h.dwarf;
  info->debug_file = dw ? path : "";
  if (!dw) {
    std::string df = find_debug_file(elf, path);
    if (!df.empty()) {
      dbg = std::make_unique<ElfHandle>();
      if (dbg->open_file(df)) {
        dbg->dwarf = dwarf_begin_elf(dbg->elf, DWARF_C_READ, nullptr);
        dw = dbg->dwarf;
        if (dw) info->debug_file = df;
      }
    }
  }
  if (dw) {
    read_lines(dw, file_offset, *info);
    auto funcs = read_dwarf_funcs(dw);
    info->have_dwarf = !funcs.empty();
    for (auto& f : info->functions) {
      auto it = funcs.find(f.addr);
      if (it == funcs.end()) continue;
      f.has_dwarf = true;
      f.decl_file = it->second.decl_file;
      f.decl_line = it->second.decl_line;
      f.return_type = it->second.return_type;
      f.vars = it->second.vars;
      f.nparams = it->second.nparams;
    }
  }

  // SDT notes.
  if (sdt) {
    Elf_Data* data = elf_getdata(sdt, nullptr);
    size_t off = 0, name_off, desc_off;
    GElf_Nhdr nh;
    size_t width = is64 ? 8 : 4;
    while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
      const char* base = static_cast<const char*>(data->d_buf);
      if (nh.n_type != 3 || nh.n_namesz != 8 || std::memcmp(base + name_off, "stapsdt", 8) != 0)
        continue;
      if (nh.n_descsz < 3 * width) continue;
      const char* desc = base + desc_off;
      auto word = [&](size_t i) -> uint64_t {
        if (width == 8) {
          uint64_t v;
          std::memcpy(&v, desc + i * 8, 8);
          return v;
        }
        uint32_t v;
        std::memcpy(&v, desc + i * 4, 4);
        return v;
      };
      SdtNote note;
      note.pc = word(0);
      uint64_t note_base = word(1);
      note.semaphore = word(2);
      if (have_sdt_base && note_base) note.pc += sdt_base_addr - note_base;
      std::string strs(desc + 3 * width, nh.n_descsz - 3 * width);
      size_t p1 = strs.find('\0');
      if (p1 == std::string::npos) continue;
      size_t p2 = strs.find('\0', p1 + 1);
      if (p2 == std::string::npos) continue;
      size_t p3 = strs.find('\0', p2 + 1);
      note.provider = strs.substr(0, p1);
      note.name = strs.substr(p1 + 1, p2 - p1 - 1);
      note.args = strs.substr(p2 + 1, p3 == std::string::npos ? std::string::npos : p3 - p2 - 1);
      std::istringstream as(note.args);
      std::string a;
      while (as >> a) ++note.nargs;
      note.pc_offset = file_offset(note.pc);
      note.semaphore_offset = note.semaphore ? file_offset(note.semaphore) : 0;
      info->notes.push_back(std::move(note));
    }
  }
  return info;
}

}  // namespace ukstap::probes
