// vma-tracker/symbolizer: names, offsets and stap sizes of binaries compiled here and stripped
// five ways (.symtab, .dynsym only, MiniDebugInfo, build-id debug file, .gnu_debuglink), libc,
// and the vDSO. Truth comes from binutils (readelf symbol tables and frame dumps, nm), never
// from the symbolizer.
#include "test_util.h"
#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "vma-tracker/symbolizer.h"

using ukstap::sym::ElfFile;
using ukstap::sym::SymbolHit;
using ukstap::sym::Symbolizer;

using ukstap::test::run;
using ukstap::test::sh;
using ukstap::test::TempDir;

namespace {

// One symbol as readelf prints it.
struct RSym {
  uint64_t value = 0, size = 0;
  std::string type, bind, ndx, name;
};

// readelf -sW, grouped by table (".symtab", ".dynsym"); version suffixes (@GLIBC_...) removed.
std::map<std::string, std::vector<RSym>> readelf_syms(const std::string& file) {
  std::map<std::string, std::vector<RSym>> out;
  std::istringstream in(run("readelf -sW '" + file + "' 2>/dev/null"));
  std::string table;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Symbol table '", 0) == 0) {
      table = line.substr(14, line.find('\'', 14) - 14);
      continue;
    }
    std::istringstream ls(line);
    std::string num, value, vis;
    RSym s;
    if (!(ls >> num >> value >> s.size >> s.type >> s.bind >> vis >> s.ndx >> s.name)) continue;
    if (num.empty() || num.back() != ':') continue;
    s.value = std::stoull(value, nullptr, 16);
    s.name = s.name.substr(0, s.name.find('@'));
    out[table].push_back(s);
  }
  return out;
}

bool in_stap_table(const RSym& s) {
  return (s.type == "FUNC" || s.type == "OBJECT" || s.type == "IFUNC") && s.value != 0 &&
         s.ndx != "UND" && s.ndx != "ABS" && s.ndx != "COM" && !s.name.empty();
}

// stap's table per the truth: sorted distinct start addresses of the FUNC/OBJECT symbols.
std::vector<uint64_t> starts_of(const std::vector<std::vector<RSym>>& tables) {
  std::vector<uint64_t> v;
  for (auto& t : tables)
    for (auto& s : t)
      if (in_stap_table(s)) v.push_back(s.value);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

uint64_t stap_size(const std::vector<uint64_t>& starts, uint64_t start) {
  auto it = std::upper_bound(starts.begin(), starts.end(), start);
  return it == starts.end() ? 0 : *it - start;
}

// FDE ranges [start, end) per `readelf --debug-dump=frames` ("... FDE cie=... pc=A..B").
std::map<uint64_t, uint64_t> fdes_of(const std::string& file) {
  std::map<uint64_t, uint64_t> out;
  std::istringstream in(run("readelf --debug-dump=frames '" + file + "' 2>/dev/null"));
  for (std::string line; std::getline(in, line);) {
    auto p = line.find(" FDE ");
    auto pc = line.find("pc=");
    if (p == std::string::npos || pc == std::string::npos) continue;
    auto dots = line.find("..", pc);
    out[std::stoull(line.substr(pc + 3, dots - pc - 3), nullptr, 16)] =
        std::stoull(line.substr(dots + 2), nullptr, 16);
  }
  return out;
}

// Static functions (stripped from .dynsym-only variants) and exported ones (-rdynamic), a
// global array (OBJECT), -O2, no inlining or cloning so every function keeps its own name.
const char* kSource = R"(
#define NI __attribute__((noinline, noclone))
volatile int sink;
int table[16] = {1, 2, 3};
static NI int s_one(int x) { sink += x; return x * 3 + sink; }
static NI int s_two(int x) { for (int i = 0; i < x; ++i) sink += i * s_one(i); return sink; }
NI int g_one(int x) { return s_two(x) + table[x & 15]; }
static NI long s_three(long a, long b) { sink ^= (int)(a * b); return a / (b | 1) + sink; }
NI int g_two(int x) { return (int)s_three(x, x + 1) + g_one(x); }
static NI int s_four(const char* s) { int h = 0; while (*s) h = h * 31 + *s++; sink = h; return h; }
int main(int argc, char** argv) { return g_two(argc) + s_four(argv[0]) + s_two(argc); }
)";
const char* kFunctions[] = {"s_one", "s_two", "g_one", "s_three", "g_two", "s_four", "main"};

// The test program and its variants, built once per test run.
struct Binaries {
  TempDir dir;
  bool ok = false;
  std::string full, stripped, mini, mini_symtab, buildid, buildid_root, buildid_debug, debuglink,
      debuglink_debug;
  std::map<std::string, uint64_t> addr;  // function -> address (unstripped .symtab)
  std::vector<RSym> full_symtab;
  std::string build_id;

  Binaries() {
    if (!sh("gcc --version >/dev/null 2>&1 && xz --version >/dev/null 2>&1")) return;
    std::ofstream(dir / "t.c") << kSource;
    full = dir / "full";
    if (!sh("gcc -O2 -rdynamic -Wl,--build-id -o '" + full + "' '" + dir / "t.c" + "'")) return;
    full_symtab = readelf_syms(full)[".symtab"];
    for (auto& s : full_symtab)
      for (const char* f : kFunctions)
        if (s.name == f && s.type == "FUNC") addr[f] = s.value;
    std::string note = run("readelf -n '" + full + "' | sed -n 's/.*Build ID: *//p'");
    build_id = note.substr(0, note.find_first_of(" \n"));

    stripped = dir / "stripped";
    if (!sh("strip --strip-all -o '" + stripped + "' '" + full + "'")) return;

    // MiniDebugInfo, the Fedora recipe: the .symtab entries of functions missing from .dynsym,
    // xz-compressed into .gnu_debugdata of the stripped binary.
    std::string d = dir.path;
    mini = dir / "mini";
    mini_symtab = dir / "mini_debuginfo";
    if (!sh("cd '" + d + "' && "
            "nm -D full --format=posix --defined-only | awk '{ print $1 }' | sort > dynsyms && "
            "nm full --format=posix --defined-only | "
            "awk '{ if ($2 == \"T\" || $2 == \"t\" || $2 == \"D\") print $1 }' | sort > funcsyms && "
            "comm -13 dynsyms funcsyms > keep_symbols && "
            "objcopy --only-keep-debug full full.dbg && "
            "objcopy -S --remove-section .gdb_index --remove-section .comment "
            "--keep-symbols=keep_symbols full.dbg mini_debuginfo && "
            "strip --strip-all -R .comment -o mini full && "
            "xz -k mini_debuginfo && "
            "objcopy --add-section .gnu_debugdata=mini_debuginfo.xz mini"))
      return;

    // A separate debug file found by build-id under a private debug root.
    if (build_id.size() < 4) return;
    buildid = dir / "buildid";
    buildid_root = dir / "debugroot";
    buildid_debug = buildid_root + "/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug";
    if (!sh("mkdir -p '" + buildid_root + "/.build-id/" + build_id.substr(0, 2) + "' && "
            "objcopy --only-keep-debug '" + full + "' '" + buildid_debug + "' && "
            "strip --strip-all -o '" + buildid + "' '" + full + "'"))
      return;

    // A separate debug file named by .gnu_debuglink, next to the binary.
    sh("mkdir -p '" + d + "/dl'");
    debuglink = d + "/dl/debuglink";
    debuglink_debug = d + "/dl/debuglink.debug";
    if (!sh("objcopy --only-keep-debug '" + full + "' '" + debuglink_debug + "' && "
            "strip --strip-all -o '" + debuglink + "' '" + full + "' && "
            "cd '" + d + "/dl' && objcopy --add-gnu-debuglink=debuglink.debug debuglink"))
      return;
    ok = addr.size() == std::size(kFunctions);
  }
};

Binaries& binaries() {
  static Binaries b;
  return b;
}

#define REQUIRE_BINARIES(b)                                         \
  Binaries& b = binaries();                                         \
  if (!b.ok) {                                                      \
    WARN("skipping: gcc/binutils/xz could not build the test binaries"); \
    return;                                                         \
  }

// Every test function resolves to its real name, offset 3 (and 0), stap SIZE per `starts`.
void check_named(const ElfFile* f, const Binaries& b, const std::vector<uint64_t>& starts) {
  for (const char* fn : kFunctions) {
    INFO(fn);
    uint64_t a = b.addr.at(fn);
    SymbolHit h;
    REQUIRE(f->lookup(a + 3, h));
    CHECK(h.name == fn);
    CHECK(h.start == a);
    CHECK(h.offset == 3);
    CHECK(h.size == stap_size(starts, a));
    CHECK_FALSE(h.from_fde);
    REQUIRE(f->lookup(a, h));
    CHECK(h.name == fn);
    CHECK(h.offset == 0);
  }
}

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%" PRIx64, v);
  return buf;
}

// The name stap's table keeps for `value`: the first GLOBAL symbol there, else the first one.
std::string preferred_name(const std::vector<RSym>& table, uint64_t value) {
  std::string first;
  for (auto& r : table) {
    if (r.value != value || !in_stap_table(r)) continue;
    if (r.bind == "GLOBAL") return r.name;
    if (first.empty()) first = r.name;
  }
  return first;
}

// The loaded object holding `addr`, per the dynamic loader: its bias (l_addr) and the extent of
// its PT_LOAD segments.
struct Image {
  uint64_t addr = 0, bias = 0, start = 0, end = 0;
};

Image loaded_image(uint64_t addr) {
  Image img;
  img.addr = addr;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        auto* img = static_cast<Image*>(data);
        uint64_t lo = UINT64_MAX, hi = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
          hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        if (img->addr < lo || img->addr >= hi) return 0;
        *img = {img->addr, info->dlpi_addr, lo & ~uint64_t(4095), hi};
        return 1;
      },
      &img);
  return img;
}

// One mapping of /proc/self/maps.
struct Map {
  uint64_t start = 0, end = 0, pgoff = 0;
  std::string path;
};

std::vector<Map> self_maps() {
  std::vector<Map> out;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    char perms[8], dev[16];
    unsigned long long s, e, off, ino;
    int n = 0;
    if (sscanf(line.c_str(), "%llx-%llx %7s %llx %15s %llu %n", &s, &e, perms, &off, dev, &ino, &n) < 6)
      continue;
    out.push_back({s, e, off, n > 0 ? line.substr(n) : ""});
  }
  return out;
}

bool mapping_of(uint64_t addr, Map& m) {
  for (const Map& x : self_maps())
    if (addr >= x.start && addr < x.end) {
      m = x;
      return true;
    }
  return false;
}

}  // namespace

TEST_CASE("symbolizer: .symtab gives real names and stap sizes", "[symbolizer]") {
  REQUIRE_BINARIES(b);
  Symbolizer s;
  std::string why;
  const ElfFile* f = s.file(b.full, 0, 0, &why);
  REQUIRE(f);
  CHECK(f->symbol_source() == "symtab");
  CHECK(f->build_id() == b.build_id);
  check_named(f, b, starts_of({b.full_symtab}));
  // The global array is an OBJECT of the table.
  SymbolHit h;
  uint64_t table = 0;
  for (auto& sym : b.full_symtab)
    if (sym.name == "table") table = sym.value;
  REQUIRE(f->lookup(table + 4, h));
  CHECK(h.name == "table");
  CHECK(h.offset == 4);
}

TEST_CASE("symbolizer: .dynsym only, stripped statics are sub_<FDE start>", "[symbolizer]") {
  REQUIRE_BINARIES(b);
  Symbolizer s;
  const ElfFile* f = s.file(b.stripped);
  REQUIRE(f);
  CHECK(f->symbol_source() == "dynsym");
  auto dyn = readelf_syms(b.stripped);
  REQUIRE(dyn.count(".symtab") == 0);
  auto starts = starts_of({dyn[".dynsym"]});
  auto fdes = fdes_of(b.stripped);
  for (const char* fn : kFunctions) {
    INFO(fn);
    uint64_t a = b.addr.at(fn);
    SymbolHit h;
    REQUIRE(f->lookup(a + 3, h));
    CHECK(h.offset == 3);
    CHECK(h.start == a);
    if (fn[0] == 's' && fn[1] == '_') {
      // The FDE starts exactly at the real function, and the size is the FDE's length.
      REQUIRE(fdes.count(a));
      CHECK(h.name == "sub_" + hex(a));
      CHECK(h.size == fdes[a] - a);
      CHECK(h.from_fde);
    } else {
      CHECK(h.name == fn);
      CHECK(h.size == stap_size(starts, a));
      CHECK_FALSE(h.from_fde);
    }
  }
}

TEST_CASE("symbolizer: a stripped program's entry point is _start", "[symbolizer]") {
  REQUIRE_BINARIES(b);
  Symbolizer s;
  const ElfFile* f = s.file(b.stripped);
  REQUIRE(f);
  // Truth: readelf's entry point, and the unstripped twin's _start symbol.
  uint64_t entry = std::stoull(run("readelf -h '" + b.stripped + "' | awk '/Entry point/ {print $4}'"), nullptr, 16);
  REQUIRE(b.addr.count("_start") == 0);  // not one of the test functions
  uint64_t twin_start = 0;
  for (auto& sym : b.full_symtab)
    if (sym.name == "_start") twin_start = sym.value;
  CHECK(twin_start == entry);
  SymbolHit h;
  REQUIRE(f->lookup(entry + 4, h));
  CHECK(h.name == "_start");
  CHECK(h.start == entry);
  CHECK(h.offset == 4);
  // A shared library's entry (libc has one) never renames anything: it has symbols.
}

TEST_CASE("symbolizer: MiniDebugInfo (.gnu_debugdata)", "[symbolizer]") {
  REQUIRE_BINARIES(b);
  Symbolizer s;
  const ElfFile* f = s.file(b.mini);
  REQUIRE(f);
  CHECK(f->symbol_source() == "minidebuginfo");
  // stap's table here is .dynsym plus the compressed .symtab.
  check_named(f, b, starts_of({readelf_syms(b.mini)[".dynsym"], readelf_syms(b.mini_symtab)[".symtab"]}));
}

TEST_CASE("symbolizer: separate debug file by build-id", "[symbolizer]") {
  REQUIRE_BINARIES(b);
  Symbolizer s;
  s.set_debug_root(b.buildid_root);
  const ElfFile* f = s.file(b.buildid);
  REQUIRE(f);
  CHECK(f->build_id() == b.build_id);
  CHECK(f->symbol_source() == b.buildid_debug);
  check_named(f, b, starts_of({readelf_syms(b.buildid_debug)[".symtab"]}));

  // Without the debug root the same binary only has .dynsym.
  Symbolizer plain;
  plain.set_debug_root(b.dir / "empty-root");
  const ElfFile* p = plain.file(b.buildid);
  REQUIRE(p);
  CHECK(p->symbol_source() == "dynsym");
}

TEST_CASE("symbolizer: separate debug file by .gnu_debuglink", "[symbolizer]") {
  REQUIRE_BINARIES(b);
  Symbolizer s;
  s.set_debug_root(b.dir / "empty-root");  // the build-id lookup must not be what finds it
  const ElfFile* f = s.file(b.debuglink);
  REQUIRE(f);
  std::string src = f->symbol_source();
  INFO(src);
  CHECK(src.size() >= 15);
  CHECK(src.substr(src.size() - 15) == "debuglink.debug");
  check_named(f, b, starts_of({readelf_syms(b.debuglink_debug)[".symtab"]}));
}

TEST_CASE("symbolizer: addresses outside every symbol and FDE", "[symbolizer]") {
  REQUIRE_BINARIES(b);
  Symbolizer s;
  const ElfFile* f = s.file(b.stripped);
  REQUIRE(f);
  SymbolHit h;
  // Below the first symbol and every FDE (the ELF header): nothing.
  auto starts = starts_of({readelf_syms(b.stripped)[".dynsym"]});
  REQUIRE(!starts.empty());
  auto fdes = fdes_of(b.stripped);
  REQUIRE(!fdes.empty());
  CHECK_FALSE(f->lookup(std::min(starts.front(), fdes.begin()->first) - 1, h));
  // Far past the last symbol, no FDE: still the last symbol, size 0 (stap).
  REQUIRE(f->lookup(starts.back() + 0x100000, h));
  CHECK(h.start == starts.back());
  CHECK(h.size == 0);
}

TEST_CASE("symbolizer: a file is loaded once and shared", "[symbolizer]") {
  REQUIRE_BINARIES(b);
  Symbolizer s;
  const ElfFile* a = s.file(b.full);
  REQUIRE(a);
  CHECK(s.file(b.full) == a);
  struct stat st {};
  REQUIRE(stat(b.full.c_str(), &st) == 0);
  CHECK(s.file(b.full, st.st_dev, st.st_ino) == a);  // other key, same build-id
  CHECK(s.load_ms(b.full) > 0);
  CHECK(a->path() == b.full);

  std::string why;
  CHECK(s.file(b.dir / "does-not-exist", 0, 0, &why) == nullptr);
  CHECK(why.find("does-not-exist") != std::string::npos);
  CHECK(why.find('\n') == std::string::npos);
  why.clear();
  CHECK(s.file(b.dir / "t.c", 0, 0, &why) == nullptr);  // not ELF
  CHECK(!why.empty());
}

TEST_CASE("symbolizer: libc exports and the load bias of its mappings", "[symbolizer]") {
  struct Want { const char* name; void* addr; };
  Want wants[] = {{"getpid", dlsym(RTLD_DEFAULT, "getpid")},
                  {"qsort", dlsym(RTLD_DEFAULT, "qsort")},
                  {"abort", dlsym(RTLD_DEFAULT, "abort")},
                  {"setenv", dlsym(RTLD_DEFAULT, "setenv")},
                  {"fopen", dlsym(RTLD_DEFAULT, "fopen")}};
  Symbolizer s;
  for (auto& w : wants) {
    INFO(w.name);
    REQUIRE(w.addr);
    Map m;
    REQUIRE(mapping_of(uint64_t(w.addr), m));
    const ElfFile* f = s.file(m.path);
    REQUIRE(f);
    uint64_t vaddr = uint64_t(w.addr) - f->bias_for(m.start, m.pgoff);
    // Truth: the .dynsym value and the names at that value; the GLOBAL one is preferred.
    auto dyn = readelf_syms(m.path)[".dynsym"];
    uint64_t value = 0;
    for (auto& sym : dyn)
      if (sym.name == w.name && sym.ndx != "UND") value = sym.value;
    REQUIRE(value != 0);
    CHECK(vaddr == value);
    SymbolHit h;
    REQUIRE(f->lookup(vaddr + 2, h));
    CHECK(h.start == value);
    CHECK(h.offset == 2);
    CHECK_FALSE(h.from_fde);
    // With libc6-dbg the table is the debug file's .symtab, whose names may differ.
    if (f->symbol_source() == "dynsym") CHECK(h.name == preferred_name(dyn, value));

    // Every mapping the dynamic loader made of the file (text, read-only data, RELRO, data)
    // agrees on the bias, which is the loader's own l_addr. The image's extent comes from the
    // loader too: the symbolizer's own read-only mmap of the file is in the maps as well.
    Image img = loaded_image(uint64_t(w.addr));
    REQUIRE(img.end > img.start);
    CHECK(img.bias == uint64_t(w.addr) - value);
    int mappings = 0;
    for (const Map& x : self_maps())
      if (x.path == m.path && x.start >= img.start && x.start < img.end) {
        INFO(hex(x.start) + " " + hex(x.pgoff));
        CHECK(f->bias_for(x.start, x.pgoff) == img.bias);
        ++mappings;
      }
    CHECK(mappings >= 3);
  }
}

TEST_CASE("symbolizer: libc load time", "[symbolizer]") {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  // With the default debug root (a libc6-dbg .symtab when installed) and with none (.dynsym).
  TempDir empty;
  for (const std::string& root : {std::string("/usr/lib/debug"), empty.path}) {
    std::vector<double> ms;
    std::string source;
    size_t count = 0;
    for (int i = 0; i < 5; ++i) {
      Symbolizer s;  // cold: nothing cached between runs (the page cache is warm)
      s.set_debug_root(root);
      const ElfFile* f = s.file(libc);
      REQUIRE(f);
      ms.push_back(s.load_ms(libc));
      source = f->symbol_source();
      count = f->symbol_count();
    }
    std::sort(ms.begin(), ms.end());
    char line[256];
    snprintf(line, sizeof line,
             "libc load: median %.2f ms (min %.2f, max %.2f) of 5 cold loads, %zu symbols from %s",
             ms[2], ms[0], ms[4], count, source.c_str());
    WARN(line);
    CHECK(count > 1000);
  }
}

TEST_CASE("symbolizer: the vDSO", "[symbolizer]") {
  uint64_t base = getauxval(AT_SYSINFO_EHDR);
  if (!base) {
    WARN("skipping: no vDSO");
    return;
  }
  // What ukstap's descriptors name before and after: the copy libdwfl reads is a memfd, in no
  // directory (a /tmp copy was left behind when ukstap died before unlinking it).
  auto fd_targets = [] {
    std::set<std::string> t;
    for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
      std::error_code ec;
      t.insert(std::filesystem::read_symlink(e.path(), ec).string());
    }
    return t;
  };
  std::set<std::string> before = fd_targets();
  Symbolizer s;
  const ElfFile* f = s.vdso();
  REQUIRE(f);
  CHECK(f->path() == "[vdso]");
  CHECK(s.vdso() == f);
  std::vector<std::string> opened;
  for (const std::string& t : fd_targets())
    if (!before.count(t)) opened.push_back(t);
  CAPTURE(opened);
  CHECK(std::count_if(opened.begin(), opened.end(), [](const std::string& t) {
          return t.rfind("/memfd:ukstap-vdso", 0) == 0;
        }) == 1);
  CHECK(std::none_of(opened.begin(), opened.end(),
                     [](const std::string& t) { return t.find("ukstap-vdso-") != std::string::npos; }));

  // Truth: readelf on a copy of the same image made here.
  Map m;
  REQUIRE(mapping_of(base, m));
  TempDir dir;
  std::string copy = dir / "vdso.so";
  {
    std::ofstream out(copy, std::ios::binary);
    out.write(reinterpret_cast<const char*>(base), std::streamsize(m.end - m.start));
  }
  auto dyn = readelf_syms(copy)[".dynsym"];
  auto starts = starts_of({dyn});
  int checked = 0;
  for (auto& sym : dyn) {
    if (!in_stap_table(sym) || sym.type != "FUNC" || sym.size < 2) continue;
    INFO(sym.name);
    SymbolHit h;
    REQUIRE(f->lookup(sym.value + 1, h));
    CHECK(h.start == sym.value);
    CHECK(h.offset == 1);
    CHECK(h.size == stap_size(starts, sym.value));
    CHECK(h.name == preferred_name(dyn, sym.value));
    if (sym.name == "__vdso_clock_gettime") CHECK(h.name == sym.name);
    ++checked;
  }
  CHECK(checked >= 4);

  // clock_gettime's code, through the bias of the mapping: p_vaddr of the vDSO's PT_LOAD is its
  // link address, so bias = mapping start - that.
  std::string ph = run("readelf -lW '" + copy + "' | awk '$1 == \"LOAD\" { print $3; exit }'");
  REQUIRE(!ph.empty());
  CHECK(f->bias_for(m.start, 0) == m.start - std::stoull(ph, nullptr, 16));
}

TEST_CASE("symbolizer: concurrent file() and lookup()", "[symbolizer]") {
  REQUIRE_BINARIES(b);
  Symbolizer s;
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        const ElfFile* f = s.file(b.stripped);
        SymbolHit h;
        for (const char* fn : kFunctions)
          if (!f || !f->lookup(b.addr.at(fn) + 1, h) || h.start != b.addr.at(fn)) ++bad;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(bad == 0);
}
