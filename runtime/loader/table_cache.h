// On-disk cache of compiled unwind tables, keyed by the file's GNU build-id:
//   $XDG_CACHE_HOME/ukstap/cfi/<first 2 hex digits>/<rest>.v<format>.cfi
// A build-id names the exact bytes the linker produced, so the table of /usr/lib/.../libc.so.6
// compiled once serves every later run (and every path or container that maps the same build).
// Files without a build-id are compiled every time. A cache file that is short, from another
// format, or for another build is ignored (and rewritten); it is never trusted blindly: its
// header must repeat the build-id and its size must match its row count.
#pragma once

#include <string>

namespace ukstap::unwind {
struct CfiTable;
}

namespace ukstap::loader {

// The GNU build-id of the ELF file at `path`, lowercase hex; "" when it has none or cannot be
// read.
std::string elf_build_id(const std::string& path);
// The same from an open descriptor (kept open).
std::string elf_build_id(int fd);

class TableCache {
 public:
  // `dir`: the cache root (loader::cache_dir()); "" disables the cache.
  explicit TableCache(std::string dir) : dir_(std::move(dir)) {}
  // The cached table of build `build_id`; false when there is none (or it is unusable).
  bool load(const std::string& build_id, unwind::CfiTable& out) const;
  // Store `t` for `build_id` (atomically: a temporary file renamed into place). False when the
  // cache cannot be written; the run goes on without it.
  bool store(const std::string& build_id, const unwind::CfiTable& t) const;
  // Where the table of `build_id` lives.
  std::string path_for(const std::string& build_id) const;

 private:
  std::string dir_;
};

}  // namespace ukstap::loader
