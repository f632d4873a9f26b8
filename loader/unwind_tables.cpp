// Unwind tables into the BPF module (see unwind_tables.h).
#include "loader/unwind_tables.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>
#include <sys/sysmacros.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "loader/owned_files.h"
#include "unwind-tables/table_cache.h"
#include "loader/interrupt.h"
#include "loader/util.h"
#include "unwind/stp_cfi.h"
#include "vma-tracker/symbolizer.h"
#include "unwind-tables/table_compiler.h"
#include "vma-tracker/tracker.h"
#include "vma-tracker/traced_file.h"

namespace ukstap::loader {

struct UnwindTables::Entry {
  std::string path;
  uint32_t file_id = 0;
  uint64_t dev = 0, ino = 0;  // user-space st_dev encoding
  int64_t delta = 0;          // p_vaddr - p_offset of the executable PT_LOAD
  unwind::CfiTable table;
  uint32_t first = 0;
  bool written = false;
};

namespace {

// Headroom for files mapped after load (dlopen, exec): 512K rows = 6 MiB.
constexpr uint32_t kHeadroomRows = 512 * 1024;
constexpr size_t kRowStride = (sizeof(stp_cfi_row) + 7) & ~size_t(7);

// This kernel's vDSO as a file (the same image in every 64-bit process), for the compiler: a
// memfd, named /proc/self/fd/N, that goes away with ukstap however it ends (a /tmp copy outlived
// a kill -9).
std::string vdso_file() {
  static std::string path;
  if (!path.empty()) return path;
  unsigned long base = getauxval(AT_SYSINFO_EHDR);
  if (!base) return "";
  std::ifstream maps("/proc/self/maps");
  std::string line;
  size_t len = 0;
  while (std::getline(maps, line)) {
    if (line.find("[vdso]") == std::string::npos) continue;
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && lo == base) len = hi - lo;
  }
  if (!len) return "";
  std::string proc_path, why;
  int fd = make_anonymous_file("ukstap-vdso", proc_path, why);
  if (fd < 0) return "";
  if (::write(fd, reinterpret_cast<const void*>(base), len) != (ssize_t)len) {
    ::close(fd);
    return "";
  }
  path = proc_path;  // the fd stays open until exit
  return path;
}

// p_vaddr - p_offset of the file's executable PT_LOAD (0 when unknown: the usual layout).
int64_t exec_segment_delta(int fd) {
  int64_t delta = 0;
  elf_version(EV_CURRENT);
  if (Elf* elf = elf_begin(fd, ELF_C_READ, nullptr)) {
    size_t n = 0;
    if (elf_getphdrnum(elf, &n) == 0)
      for (size_t i = 0; i < n; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
          delta = (int64_t)(ph.p_vaddr - ph.p_offset);
          break;
        }
      }
    elf_end(elf);
  }
  return delta;
}

bool same_file_state(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

UnwindTables::UnwindTables(vma::Tracker& tracker, sym::Symbolizer& symbolizer, int verbose)
    : tracker_(tracker), sym_(symbolizer), verbose_(verbose) {
  std::string why;  // no cache directory: every table is compiled, nothing else changes
  cache_ = std::make_unique<TableCache>(cache_dir(why));
}

UnwindTables::~UnwindTables() {
  if (pool_) ::munmap(pool_, pool_len_);
  if (pages_) ::munmap(pages_, pages_len_);
}

std::vector<std::string> UnwindTables::ldd(const std::string& path) {
  // What ldd does: ask the dynamic loader to list the objects without running the program.
  std::vector<std::string> out;
  // The loader opens the file with a blocking open(): a FIFO there would hang it and us.
  {
    vma::TracedFile file(path);
    if (file.fd() < 0) return out;
  }
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return out;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], 1);
    int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, 2);
    for (const char* ld : {"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"})
      ::execl(ld, ld, "--list", path.c_str(), (char*)nullptr);
    ::_exit(127);
  }
  ::close(pipefd[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0) text.append(buf, n);
  ::close(pipefd[0]);
  int st;
  ::waitpid(pid, &st, 0);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "\t/lib64/ld-linux... (0x...)"
    size_t arrow = line.find("=> ");
    std::string p = arrow != std::string::npos ? line.substr(arrow + 3) : line;
    size_t b = p.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    p = p.substr(b);
    size_t paren = p.find(" (");
    if (paren != std::string::npos) p.resize(paren);
    if (!p.empty() && p[0] == '/') out.push_back(p);
  }
  return out;
}

size_t UnwindTables::preload(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    std::string path = p == "[vdso]" ? vdso_file() : p;
    struct stat st;
    if (path.empty() || ::stat(path.c_str(), &st) != 0) {
      warnings.push_back("missing unwind/symbol data for module '" + p + "'");
      continue;
    }
    uint32_t id = p == "[vdso]" ? tracker_.file_id_for("[vdso]", 0, 0)
                                : tracker_.file_id_for(p, st.st_dev, st.st_ino);
    if (files_.count(id)) continue;
    if (load_file(path, st.st_dev, st.st_ino, id)) {
      files_[id]->path = p;
      preload_rows_ += files_[id]->table.rows.size();
    }
  }
  return preload_rows_;
}

uint32_t UnwindTables::pool_rows() const {
  size_t n = kHeadroomRows;
  for (auto& [id, e] : files_) n += e->table.rows.size();
  return n > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)n;
}

bool UnwindTables::load_file(const std::string& path, uint64_t dev, uint64_t ino, uint32_t file_id) {
  auto e = std::make_unique<Entry>();
  e->path = path;
  e->file_id = file_id;
  e->dev = dev;
  e->ino = ino;
  // One descriptor for everything read from the file (traced_file.h: the path may be swapped
  // for a FIFO or another file at any moment; the build-id, the delta and the rows must all
  // come from the same file).
  vma::TracedFile file(path);
  std::string why = file.why();
  auto t0 = std::chrono::steady_clock::now();
  // The key is read from the descriptor the compiler reads next: a file that changed in between
  // (size, mtime or ctime of the open file) may have given the key of other bytes, so its table
  // is used for this run but not cached.
  struct stat before {}, after {};
  bool stable = file.fd() >= 0 && ::fstat(file.fd(), &before) == 0;
  std::string key = stable ? elf_table_key(file.fd()) : "";
  e->delta = file.fd() >= 0 ? exec_segment_delta(file.fd()) : 0;
  std::string refused;
  bool ok = !key.empty() && cache_->load(key, e->table, &refused);
  if (!refused.empty() && !cache_warned_) {
    warnings.push_back("not using the cached unwind table: " + refused + "; compiling it again");
    cache_warned_ = true;
  }
  if (ok) {
    from_cache_++;
  } else if (file.fd() >= 0) {
    ok = unwind::compile_cfi(file.fd(), path, e->table, why);
    compiled_++;
    stable = stable && ::fstat(file.fd(), &after) == 0 && same_file_state(before, after);
    if (ok && stable && !key.empty() && !e->table.rows.empty()) cache_->store(key, e->table);
  }
  compile_ms_ += ms_since(t0);
  if (!ok || e->table.rows.empty()) {
    failed_.insert(file_id);
    mark_no_table(file_id, dev, ino);
    if (verbose_ > 0)
      warnings.push_back("no unwind table for " + path + (why.empty() ? "" : ": " + why));
    return false;
  }
  files_[file_id] = std::move(e);
  return true;
}

bool UnwindTables::write(Entry& e) {
  if (e.written) return true;
  size_t n = e.table.rows.size();
  if (!pool_) return false;  // before load: attach() writes it
  if (used_ + n > capacity_) {
    if (!pool_full_warned_)
      warnings.push_back("unwind table pool full (" + std::to_string(capacity_) +
                         " rows): " + e.path + " and later files unwind by frame pointers only");
    pool_full_warned_ = true;
    mark_no_table(e.file_id, e.dev, e.ino);
    return false;
  }
  // A BPF array stores each value at an 8-byte-aligned stride (12-byte rows sit 16 bytes apart).
  char* dst = static_cast<char*>(pool_) + (size_t)used_ * kRowStride;
  for (size_t i = 0; i < n; ++i) std::memcpy(dst + i * kRowStride, &e.table.rows[i], sizeof(stp_cfi_row));
  struct stp_cfi_file f{};
  f.base = e.table.base;
  f.first = used_;
  f.nr = (uint32_t)n;
  f.delta = e.delta;
  // The page index: for each 4 KiB of row pcs, the row covering the page's first byte.
  std::vector<uint32_t> idx;
  {
    uint64_t last_pc = e.table.rows.back().pc;
    size_t npages = (last_pc >> STP_CFI_PAGE_SHIFT) + 2;
    idx.resize(npages);
    size_t r = 0;
    for (size_t p = 0; p < npages; ++p) {
      uint64_t start = (uint64_t)p << STP_CFI_PAGE_SHIFT;
      while (r + 1 < n && e.table.rows[r + 1].pc <= start) ++r;
      idx[p] = (uint32_t)r;
    }
    idx.back() = (uint32_t)(n - 1);
  }
  if (pages_ && pages_used_ + idx.size() <= pages_cap_) {
    // An array value sits at an 8-byte stride: uint32_t entries are 8 bytes apart.
    char* dst = static_cast<char*>(pages_) + (size_t)pages_used_ * 8;
    for (size_t i = 0; i < idx.size(); ++i) std::memcpy(dst + i * 8, &idx[i], 4);
    f.page_first = pages_used_;
    f.npages = (uint32_t)idx.size();
    pages_used_ += (uint32_t)idx.size();
  }
  if (bpf_map_update_elem(files_fd_, &e.file_id, &f, BPF_ANY) != 0) {
    warnings.push_back("cannot register the unwind table of " + e.path + ": " + std::strerror(errno));
    return false;
  }
  if (e.ino && inodes_fd_ >= 0) {  // the kernel's dev_t: major << 20 | minor
    struct stp_cfi_inode k{};
    k.ino = e.ino;
    k.dev = (uint32_t)((major(e.dev) << 20) | minor(e.dev));
    bpf_map_update_elem(inodes_fd_, &k, &e.file_id, BPF_ANY);
  }
  e.first = used_;
  used_ += (uint32_t)n;
  e.written = true;
  return true;
}

bool UnwindTables::attach(struct bpf_object* obj, std::string& why) {
  struct bpf_map* rows = bpf_object__find_map_by_name(obj, "stp_cfi_rows");
  struct bpf_map* files = bpf_object__find_map_by_name(obj, "stp_cfi_files");
  if (!rows || !files) {
    why = "the module has no unwind-table maps";
    return false;
  }
  capacity_ = bpf_map__max_entries(rows);
  pool_len_ = (size_t)capacity_ * kRowStride;
  pool_len_ = (pool_len_ + 4095) & ~size_t(4095);
  pool_ = ::mmap(nullptr, pool_len_, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(rows), 0);
  if (pool_ == MAP_FAILED) {
    pool_ = nullptr;
    why = std::string("cannot map the unwind-table pool: ") + std::strerror(errno);
    return false;
  }
  files_fd_ = bpf_map__fd(files);
  if (struct bpf_map* pages = bpf_object__find_map_by_name(obj, "stp_cfi_pages")) {
    pages_cap_ = bpf_map__max_entries(pages);
    pages_len_ = ((size_t)pages_cap_ * 8 + 4095) & ~size_t(4095);
    pages_ = ::mmap(nullptr, pages_len_, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(pages), 0);
    if (pages_ == MAP_FAILED) pages_ = nullptr;  // tables still work, with longer searches
  }
  if (struct bpf_map* inodes = bpf_object__find_map_by_name(obj, "stp_cfi_inodes"))
    inodes_fd_ = bpf_map__fd(inodes);
  for (auto& [id, e] : files_) write(*e);
  for (const NoTable& n : no_table_before_load_) mark_no_table(n.file_id, n.dev, n.ino);
  no_table_before_load_.clear();
  return true;
}

void UnwindTables::mark_no_table(uint32_t file_id, uint64_t dev, uint64_t ino) {
  if (!file_id) return;
  if (files_fd_ < 0) {
    no_table_before_load_.push_back({file_id, dev, ino});
    return;
  }
  struct stp_cfi_file f{};  // nr 0: no rows
  bpf_map_update_elem(files_fd_, &file_id, &f, BPF_NOEXIST);  // never over a table
  if (ino && inodes_fd_ >= 0) {
    struct stp_cfi_inode k{};
    k.ino = ino;
    k.dev = (uint32_t)((major(dev) << 20) | minor(dev));
    bpf_map_update_elem(inodes_fd_, &k, &file_id, BPF_NOEXIST);
  }
}

const unwind::CfiTable* UnwindTables::table_for(const vma::Mapping& m) {
  on_mapping(m);
  auto it = files_.find(m.file_id);
  return it == files_.end() ? nullptr : &it->second->table;
}

void UnwindTables::on_mapping(const vma::Mapping& m) {
  if (!m.file_id || files_.count(m.file_id) || failed_.count(m.file_id)) return;
  std::string path = m.path == "[vdso]" ? vdso_file() : m.path;
  if (path.empty() || path[0] != '/') {
    failed_.insert(m.file_id);
    mark_no_table(m.file_id, m.dev, m.ino);
    return;
  }
  if (load_file(path, m.dev, m.ino, m.file_id)) {
    files_[m.file_id]->path = m.path;
    write(*files_[m.file_id]);
  }
}

std::vector<std::string> UnwindTables::report() const {
  std::vector<std::string> out;
  size_t rows = 0;
  for (auto& [id, e] : files_) {
    rows += e->table.rows.size();
    out.push_back(unwind::coverage_line(e->path, e->table) + (e->written ? "" : " (not loaded)"));
  }
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "unwind tables: %zu files, %zu rows (%zu KiB of a %u-row pool), %zu compiled + %zu "
                "from the cache in %.1f ms",
                files_.size(), rows, rows * kRowStride / 1024, capacity_, compiled_, from_cache_,
                compile_ms_);
  out.push_back(buf);
  return out;
}

}  // namespace ukstap::loader
