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

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "loader/owned_files.h"
#include "loader/table_sharing.h"
#include "unwind-tables/compact_table.h"
#include "unwind-tables/table_cache.h"
#include "loader/interrupt.h"
#include "loader/kernel_inode.h"
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
  std::string identity;  // table_cache.h elf_table_identity ("" unknown)
  uint32_t same_as = 0;  // the file id whose table this file shares (table_sharing.h); 0: own
  FilePage page;  // the compiled file, until the kernel has named its inode (kernel_inode.h)
};

namespace {

constexpr size_t kMiB = 1024 * 1024;
constexpr size_t kChunkBytes = (size_t)STP_CFI_CHUNK * sizeof(stp_cfi_elem);
// A BPF array stores each value at an 8-byte-aligned stride: 12-byte rules sit 16 bytes apart.
constexpr size_t kRuleStride = (sizeof(stp_cfi_row) + 7) & ~size_t(7);
constexpr size_t kRulesBytes = (size_t)STP_CFI_RULES * kRuleStride;

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
  for (Chunk& c : chunks_) {
    if (c.mem) ::munmap(c.mem, kChunkBytes);
    if (c.fd >= 0) ::close(c.fd);
  }
  if (rules_mem_) ::munmap(rules_mem_, rules_len_);
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

uint32_t UnwindTables::pool_slots() const {
  // The rule dictionary is allocated whole; the rest of the budget is chunks. Pool indexes are
  // 32-bit: at most 2^32 elements (32 GiB).
  uint64_t budget = budget_mb_ * kMiB;
  uint64_t slots = budget > kRulesBytes ? (budget - kRulesBytes) / kChunkBytes : 0;
  uint64_t max_slots = (1ull << 32) / STP_CFI_CHUNK;
  return (uint32_t)(slots < max_slots ? slots : max_slots);
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
  e->page = FilePage(file.fd());
  e->identity = stable ? elf_table_identity(file.fd()) : "";
  std::string key = identity_is_cache_key(e->identity) ? e->identity : "";
  // A file of the same content already has its table (another path, a hard link, a copy).
  for (auto& [id, other] : files_)
    if (!e->identity.empty() && other->identity == e->identity && !other->same_as) {
      e->same_as = id;
      files_[file_id] = std::move(e);
      ++shared_;
      return true;
    }
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
    if (!stable) e->identity.clear();  // its rows may be of other bytes: no file shares them
  }
  compile_ms_ += ms_since(t0);
  if (!ok || e->table.rows.empty()) {
    failed_.insert(file_id);
    mark_no_table(file_id, dev, ino, std::move(e->page));
    // A file that is no ELF at all (a #! script given to -c) is no mapping to unwind: nothing
    // to say. An ELF file that cannot be read keeps its line.
    if (verbose_ > 0 && (file.fd() < 0 || vma::has_elf_magic(file.fd())))
      warnings.push_back("no unwind table for " + path + (why.empty() ? "" : ": " + why));
    return false;
  }
  files_[file_id] = std::move(e);
  return true;
}

char* UnwindTables::pool_elem(uint32_t i) {
  return static_cast<char*>(chunks_[i >> STP_CFI_CHUNK_SHIFT].mem) +
         (size_t)(i & (STP_CFI_CHUNK - 1)) * sizeof(stp_cfi_elem);
}

bool UnwindTables::grow_pool(uint64_t elements, std::string& why) {
  size_t want = (size_t)((elements + STP_CFI_CHUNK - 1) / STP_CFI_CHUNK);
  if (want <= chunks_.size()) return true;
  // Every update of an array-of-maps waits for an RCU grace period (5-25 ms measured here), so
  // the new chunks go in with one batch update where the kernel takes one.
  std::vector<Chunk> fresh;
  auto drop = [&](size_t from) {
    for (size_t i = from; i < fresh.size(); ++i) {
      ::munmap(fresh[i].mem, kChunkBytes);
      ::close(fresh[i].fd);
    }
  };
  while (chunks_.size() + fresh.size() < want) {
    LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
    Chunk c;
    c.fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "stp_cfi_chunk", sizeof(uint32_t),
                          sizeof(stp_cfi_elem), STP_CFI_CHUNK, &opts);
    c.mem = c.fd < 0 ? MAP_FAILED
                     : ::mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd, 0);
    if (c.mem == MAP_FAILED) {
      why = std::string("cannot create an unwind-table chunk: ") + std::strerror(errno);
      if (c.fd >= 0) ::close(c.fd);
      drop(0);
      return false;
    }
    fresh.push_back(c);
  }
  std::vector<uint32_t> keys, fds;
  for (size_t i = 0; i < fresh.size(); ++i) {
    keys.push_back((uint32_t)(chunks_.size() + i));
    fds.push_back((uint32_t)fresh[i].fd);
  }
  uint32_t count = (uint32_t)keys.size();
  if (bpf_map_update_batch(pool_fd_, keys.data(), fds.data(), &count, nullptr) == 0) {
    chunks_.insert(chunks_.end(), fresh.begin(), fresh.end());
    return true;
  }
  for (size_t i = 0; i < fresh.size(); ++i) {  // no batch updates here: one at a time
    if (bpf_map_update_elem(pool_fd_, &keys[i], &fds[i], BPF_ANY) != 0) {
      why = std::string("cannot add an unwind-table chunk: ") + std::strerror(errno);
      drop(i);
      return false;
    }
    chunks_.push_back(fresh[i]);
  }
  return true;
}

bool UnwindTables::write(Entry& e) {
  if (e.written) return true;
  if (!attached_) return false;  // before load: attach() writes it
  if (e.same_as) {  // the rows of the file of the same content, under this file's id
    Entry& twin = *files_.at(e.same_as);
    std::string why;
    if (!write(twin)) {
      mark_no_table(e.file_id, e.dev, e.ino, std::move(e.page));
      return false;
    }
    // The inode key after the file-map entry: a walk must not find the id before its entry.
    e.written = share_table(files_fd_, twin.file_id, e.file_id, why);
    if (!e.written) warnings.push_back("cannot register the unwind table of " + e.path + ": " + why);
    else register_inode_key(e.dev, e.ino, e.page, e.file_id, BPF_ANY);
    return e.written;
  }
  auto t0 = std::chrono::steady_clock::now();
  size_t n = e.table.rows.size();
  unwind::CompactTable c;
  size_t known_rules = rules_->rules().size();
  // A refused table leaves no rule behind, says why in one warning, and its file is answered
  // for (no table: walks take frame pointers there instead of waiting for it).
  auto refuse = [&](const std::string& warning) {
    rules_->truncate(known_rules);
    warnings.push_back(warning);
    mark_no_table(e.file_id, e.dev, e.ino, std::move(e.page));
    return false;
  };
  if (!unwind::compact(e.table, *rules_, c))
    return refuse("unwind rule dictionary full (" + std::to_string(rules_->capacity()) +
                  " distinct rules): " + e.path + " has no unwind table, its frames " +
                  "unwind by frame pointers only");
  uint64_t need = (uint64_t)used_ + c.elements();
  if (need > (uint64_t)slots_ * STP_CFI_CHUNK) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "unwind table memory budget of %" PRIu64 " MiB exceeded: %s (%zu rows, %.1f MiB) "
                  "has no unwind table, its frames unwind by frame pointers only (%.1f MiB in use "
                  "by %zu rows; raise it with -D STP_UNWIND_TABLE_MB=N)",
                  budget_mb_, e.path.c_str(), n, (double)c.elements() * 8 / kMiB,
                  (double)(chunks_.size() * kChunkBytes + kRulesBytes) / kMiB, rows_written_);
    return refuse(buf);
  }
  std::string why;
  if (!grow_pool(need, why))
    return refuse(why + ": " + e.path + " has no unwind table, its frames unwind by frame pointers only");
  // Rules new with this table, before any row that names them.
  for (; rules_written_ < rules_->rules().size(); ++rules_written_)
    std::memcpy(static_cast<char*>(rules_mem_) + rules_written_ * kRuleStride,
                &rules_->rules()[rules_written_], sizeof(stp_cfi_row));
  struct stp_cfi_file f{};
  f.answered = 1;
  f.base = e.table.base;
  f.delta = e.delta;
  f.page_first = used_;
  f.npages = (uint32_t)c.pages.size();
  f.page_shift = c.page_shift;
  f.first = used_ + f.npages;
  f.nr = (uint32_t)n;
  uint32_t at = used_;
  for (const stp_cfi_elem& p : c.pages) std::memcpy(pool_elem(at++), &p, sizeof p);
  for (size_t i = 0; i < n; i += 2) {  // two rows to an element
    stp_cfi_elem el{};
    el.rows[0] = c.rows[i];
    if (i + 1 < n) el.rows[1] = c.rows[i + 1];
    std::memcpy(pool_elem(at++), &el, sizeof el);
  }
  if (bpf_map_update_elem(files_fd_, &e.file_id, &f, BPF_ANY) != 0) {
    warnings.push_back("cannot register the unwind table of " + e.path + ": " + std::strerror(errno));
    return false;
  }
  register_inode_key(e.dev, e.ino, e.page, e.file_id, BPF_ANY);
  e.first = f.first;
  used_ = (uint32_t)need;
  rows_written_ += n;
  e.written = true;
  write_ms_ += ms_since(t0);
  return true;
}

bool UnwindTables::attach(struct bpf_object* obj, std::string& why) {
  struct bpf_map* pool = bpf_object__find_map_by_name(obj, "stp_cfi_pool");
  struct bpf_map* rules = bpf_object__find_map_by_name(obj, "stp_cfi_rules");
  struct bpf_map* files = bpf_object__find_map_by_name(obj, "stp_cfi_files");
  if (!pool || !rules || !files) {
    why = "the module has no unwind-table maps";
    return false;
  }
  pool_fd_ = bpf_map__fd(pool);
  slots_ = std::min(pool_slots(), bpf_map__max_entries(pool));
  rules_ = std::make_unique<unwind::RuleDict>(bpf_map__max_entries(rules));
  rules_len_ = ((size_t)bpf_map__max_entries(rules) * kRuleStride + 4095) & ~size_t(4095);
  rules_mem_ = ::mmap(nullptr, rules_len_, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(rules), 0);
  if (rules_mem_ == MAP_FAILED) {
    rules_mem_ = nullptr;
    why = std::string("cannot map the unwind-rule dictionary: ") + std::strerror(errno);
    return false;
  }
  files_fd_ = bpf_map__fd(files);
  if (struct bpf_map* inodes = bpf_object__find_map_by_name(obj, "stp_cfi_inodes"))
    inodes_fd_ = bpf_map__fd(inodes);
  if (struct bpf_program* p = bpf_object__find_program_by_name(obj, "stp_cfi_inode_prog"))
    inode_prog_fd_ = bpf_program__fd(p);
  attached_ = true;
  // The chunks the preloaded tables take, at most (rows two to an element, pages at most one
  // per 8 rows or per 64 KiB), in one go; within the budget (write refuses what is beyond it).
  uint64_t need = 0;
  for (auto& [id, e] : files_) {
    size_t n = e->table.rows.size();
    if (n == 0) continue;  // a file sharing its twin's table (same_as) has no rows of its own
    uint64_t pages = std::max<uint64_t>(n / 8, (e->table.rows.back().pc >> STP_CFI_PAGE_SHIFT_MAX) + 1);
    need += (n + 1) / 2 + pages;
  }
  std::string gwhy;
  auto t0 = std::chrono::steady_clock::now();
  grow_pool(std::min<uint64_t>(need, (uint64_t)slots_ * STP_CFI_CHUNK), gwhy);  // else per table
  write_ms_ += ms_since(t0);
  for (auto& [id, e] : files_) write(*e);
  for (NoTable& n : no_table_before_load_) mark_no_table(n.file_id, n.dev, n.ino, std::move(n.page));
  no_table_before_load_.clear();
  return true;
}

void UnwindTables::mark_no_table(uint32_t file_id, uint64_t dev, uint64_t ino, FilePage page) {
  if (!file_id) return;
  if (files_fd_ < 0) {
    no_table_before_load_.push_back({file_id, dev, ino, std::move(page)});
    return;
  }
  // nr 0: no rows. The file map is an array (every entry exists, zeroed): only an entry the
  // loader has not written yet is marked, never one that holds a table.
  struct stp_cfi_file f{};
  if (bpf_map_lookup_elem(files_fd_, &file_id, &f) == 0 && !f.answered) {
    f = stp_cfi_file{};
    f.answered = 1;
    bpf_map_update_elem(files_fd_, &file_id, &f, BPF_ANY);
  }
  register_inode_key(dev, ino, page, file_id, BPF_NOEXIST);
}

void UnwindTables::register_inode_key(uint64_t dev, uint64_t ino, FilePage& page,
                                      uint32_t file_id, uint64_t flags) {
  // The walk reads the mapping's own inode; stat()'s key stands in for it only when the kernel
  // cannot be asked (the program not loaded, the file not mappable).
  // A file keyed by stat() on a stacked filesystem is missed by a first event's walk ("unwind
  // table not loaded yet"), so each such file is counted for the -v report.
  struct stp_cfi_inode k {};
  KernelInode said = inodes_fd_ >= 0 ? kernel_inode_of(inode_prog_fd_, page, k) : KernelInode::kUnasked;
  if (said == KernelInode::kNamed) {
    bpf_map_update_elem(inodes_fd_, &k, &file_id, flags);
  } else {
    register_inode(inodes_fd_, dev, ino, file_id, flags);
    if (inodes_fd_ >= 0) (said == KernelInode::kBusy ? inode_busy_ : inode_unasked_)++;
  }
  page.reset();  // asked once: the mapping is not kept for the run
}

const unwind::CfiTable* UnwindTables::table_for(const vma::Mapping& m) {
  on_mapping(m);
  auto it = files_.find(m.file_id);
  if (it == files_.end()) return nullptr;
  // A file sharing its twin's table (same content, table_sharing.h) has no rows of its own.
  if (it->second->same_as) return &files_.at(it->second->same_as)->table;
  return &it->second->table;
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

std::string UnwindTables::inode_fallback_line() const {
  if (!(inode_busy_ + inode_unasked_)) return "";
  return std::to_string(inode_busy_ + inode_unasked_) +
         " file(s) keyed by stat()'s inode, not the kernel's (" + std::to_string(inode_busy_) +
         " with the mmap lock busy, " + std::to_string(inode_unasked_) +
         " not asked: no inode program or not mappable); on a stacked filesystem a first "
         "event's walk misses them";
}

std::vector<std::string> UnwindTables::report() const {
  std::vector<std::string> out;
  for (auto& [id, e] : files_) {
    if (e->same_as) {
      out.push_back(e->path + ": the table of " + files_.at(e->same_as)->path + " (same content)" +
                    (e->written ? "" : " (not loaded)"));
      continue;
    }
    out.push_back(unwind::coverage_line(e->path, e->table) + (e->written ? "" : " (not loaded)"));
  }
  size_t rules = rules_ ? rules_->rules().size() : 0;
  // What the rows take: 4 bytes each, plus the page indexes and the rules they use.
  double bytes = (double)used_ * sizeof(stp_cfi_elem) + (double)rules * kRuleStride;
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "unwind tables: %zu files, %zu rows in the kernel (%.1f bytes/row with the page "
                "index and %zu distinct rules; %zu chunks of %zu MiB of a %" PRIu64 " MiB budget), "
                "%zu compiled + %zu from the cache in %.1f ms, written in %.1f ms",
                files_.size(), rows_written_, rows_written_ ? bytes / (double)rows_written_ : 0.0,
                rules, chunks_.size(), kChunkBytes / kMiB, budget_mb_, compiled_, from_cache_,
                compile_ms_, write_ms_);
  out.push_back(buf);
  if (shared_)
    out.push_back("unwind tables: " + std::to_string(shared_) +
                  " more file(s) share the table of a file of the same content");
  return out;
}

}  // namespace ukstap::loader
