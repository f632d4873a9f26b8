// Pass 5's unwind tables: compiles files' CFI (unwind-tables/table_compiler) and loads the rows
// into the BPF module's row pool (stp_cfi_rows, mmapped) and file map (stp_cfi_files), keyed by
// the VMA tracker's file ids, so the in-kernel walk finds them through stp_vmas.
//
// Order (docs/DESIGN.md "Unwind tables"): -d files, their --ldd dependencies, the vDSO and the
// -c/process() binaries are compiled (or read from the on-disk cache, by build-id: table_cache.h)
// before the module loads (the pool is sized for them plus
// headroom) and written right after; files a target maps later (dlopen, exec) are compiled when
// the tracker reports them. A table never replaces another and nothing is evicted: when the pool
// is full, a file goes without a table (its frames fall back to frame pointers) and -v says so.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

struct bpf_object;

namespace ukstap::vma {
class Tracker;
struct Mapping;
}
namespace ukstap::unwind {
struct CfiTable;
}
namespace ukstap::sym {
class Symbolizer;
}

namespace ukstap::loader {

class TableCache;

class UnwindTables {
 public:
  UnwindTables(vma::Tracker& tracker, sym::Symbolizer& symbolizer, int verbose);
  ~UnwindTables();

  // Before load: compile the tables of `paths` (missing files: a warning naming them, as stap's
  // pass 3 does). Returns the rows the pool must hold.
  size_t preload(const std::vector<std::string>& paths);
  // Files a binary needs at run time, as `ld.so --list` resolves them (for --ldd).
  static std::vector<std::string> ldd(const std::string& path);
  // The pool size to give stp_cfi_rows before load.
  uint32_t pool_rows() const;

  // After load: map the pool and write every preloaded table. False + why when the maps are
  // missing or cannot be mapped.
  bool attach(struct bpf_object* obj, std::string& why);
  // A target mapped an executable file (tracker callback): load its table if it has none yet.
  void on_mapping(const vma::Mapping& m);
  // The table of the file mapped at `m`, loaded now if the tracker has not reported it yet;
  // nullptr when it has none (deferred_unwind.h: walks the kernel could not finish).
  const unwind::CfiTable* table_for(const vma::Mapping& m);

  // -v lines: per-file coverage, totals, time spent.
  std::vector<std::string> report() const;
  std::vector<std::string> warnings;  // printed by the caller as WARNING: lines

 private:
  struct Entry;
  bool load_file(const std::string& path, uint64_t dev, uint64_t ino, uint32_t file_id);
  bool write(Entry& e);
  // A file that gets no table (none, unreadable, the pool full): an empty entry, so the kernel's
  // walk stops waiting for it and uses frame pointers there (bpf/stp_bpf_frame_row.h).
  void mark_no_table(uint32_t file_id, uint64_t dev, uint64_t ino);
  struct NoTable {
    uint32_t file_id;
    uint64_t dev, ino;
  };
  std::vector<NoTable> no_table_before_load_;  // written by attach()

  vma::Tracker& tracker_;
  sym::Symbolizer& sym_;
  int verbose_;
  std::map<uint32_t, std::unique_ptr<Entry>> files_;  // by file id
  std::set<uint32_t> failed_;                          // ids whose table could not be built
  size_t preload_rows_ = 0;
  uint32_t capacity_ = 0, used_ = 0;
  void* pool_ = nullptr;
  size_t pool_len_ = 0;
  int files_fd_ = -1, inodes_fd_ = -1;
  void* pages_ = nullptr;  // the page index pool (stp_cfi_pages), mmapped
  size_t pages_len_ = 0;
  uint32_t pages_cap_ = 0, pages_used_ = 0;
  double compile_ms_ = 0;
  std::unique_ptr<TableCache> cache_;  // compiled tables on disk, by content (table_cache.h)
  size_t from_cache_ = 0, compiled_ = 0;
  bool pool_full_warned_ = false;
  bool cache_warned_ = false;  // one warning for a cached table that is not ours and private
};

}  // namespace ukstap::loader
