// Pass 5's unwind tables: compiles files' CFI (unwind-tables/table_compiler) and loads the rows
// into the BPF module's row pool (stp_cfi_pool: chunks created as tables arrive, mmapped) and file map (stp_cfi_files), keyed by
// the VMA tracker's file ids, so the in-kernel walk finds them through stp_vmas.
//
// Order (docs/DESIGN.md "Unwind tables"): -d files, their --ldd dependencies, the vDSO and the
// -c/process() binaries are compiled (or read from the on-disk cache, by build-id: table_cache.h)
// before the module loads (the pool is sized for them plus
// written right after load; files a target maps later (dlopen, exec) are compiled when the
// tracker reports them. Rows go into the kernel as 4-byte rows plus a shared rule dictionary
// (unwind-tables/compact_table.h); the pool grows by 1 MiB chunks as tables arrive, up to the
// memory budget (-D STP_UNWIND_TABLE_MB, default 512). A table never replaces another and
// nothing is evicted: a file whose table would pass the budget goes without one (its frames
// fall back to frame pointers) and a warning names it and the budget.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "loader/kernel_inode.h"

struct bpf_object;

namespace ukstap::vma {
class Tracker;
struct Mapping;
}
namespace ukstap::unwind {
struct CfiTable;
class RuleDict;
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
  // The memory budget of the kernel's tables (pool chunks + rule dictionary), in MiB; before
  // pool_slots().
  void set_budget_mb(uint64_t mb) { budget_mb_ = mb; }
  // The chunk slots to give stp_cfi_pool before load: as many as the budget allows.
  uint32_t pool_slots() const;

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
  // The files so far whose inode key is stat()'s, not the kernel's (register_inode_key), and
  // why; "" when none (the exit report's -v line).
  std::string inode_fallback_line() const;
  std::vector<std::string> warnings;  // printed by the caller as WARNING: lines

 private:
  struct Entry;
  bool load_file(const std::string& path, uint64_t dev, uint64_t ino, uint32_t file_id);
  bool write(Entry& e);
  bool grow_pool(uint64_t elements, std::string& why);  // chunks up to `elements`
  char* pool_elem(uint32_t i);                         // element i's bytes (chunk mmapped)
  // A file that gets no table (none, unreadable, over the budget): an empty entry, so the kernel's
  // walk stops waiting for it and uses frame pointers there (bpf/stp_bpf_frame_row.h).
  // `page`: the file mapped (kernel_inode.h), for the inode key the kernel's walk sees.
  void mark_no_table(uint32_t file_id, uint64_t dev, uint64_t ino, FilePage page = FilePage());
  // Maps the file's inode to `file_id` in the inode map: the key the kernel's walk sees for the
  // file at `page` (kernel_inode.h: stat()'s, dev/ino, differs on a stacked filesystem), else
  // stat()'s; then unmaps the page. After the file-map entry is written.
  void register_inode_key(uint64_t dev, uint64_t ino, FilePage& page, uint32_t file_id,
                          uint64_t flags);
  struct NoTable {
    uint32_t file_id;
    uint64_t dev, ino;
    FilePage page;
  };
  std::vector<NoTable> no_table_before_load_;  // written by attach()

  vma::Tracker& tracker_;
  sym::Symbolizer& sym_;
  int verbose_;
  std::map<uint32_t, std::unique_ptr<Entry>> files_;  // by file id
  std::set<uint32_t> failed_;                          // ids whose table could not be built
  size_t preload_rows_ = 0;
  uint64_t budget_mb_ = 512;
  struct Chunk {
    int fd = -1;
    void* mem = nullptr;  // STP_CFI_CHUNK elements, mmapped
  };
  std::vector<Chunk> chunks_;  // slot i of stp_cfi_pool
  uint32_t slots_ = 0;         // stp_cfi_pool's max_entries
  uint32_t used_ = 0;          // pool elements taken (page indexes and rows)
  size_t rows_written_ = 0;
  int pool_fd_ = -1, files_fd_ = -1, inodes_fd_ = -1;
  int inode_prog_fd_ = -1;  // stp_cfi_inode_prog (kernel_inode.h)
  std::unique_ptr<unwind::RuleDict> rules_;
  void* rules_mem_ = nullptr;  // stp_cfi_rules, mmapped
  size_t rules_len_ = 0, rules_written_ = 0;
  bool attached_ = false;
  double write_ms_ = 0;
  double compile_ms_ = 0;
  std::unique_ptr<TableCache> cache_;  // compiled tables on disk, by content (table_cache.h)
  size_t from_cache_ = 0, compiled_ = 0;
  size_t shared_ = 0;  // files given the table of a file of the same content (table_sharing.h)
  // Files whose inode key is stat()'s because the kernel did not name theirs (kernel_inode.h).
  size_t inode_busy_ = 0, inode_unasked_ = 0;
  bool cache_warned_ = false;  // one warning for a cached table that is not ours and private
};

}  // namespace ukstap::loader
