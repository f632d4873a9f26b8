// On-disk cache of compiled unwind tables, keyed by the file's content (elf_table_key):
//   $XDG_CACHE_HOME/ukstap/cfi/<first 2 hex digits>/<rest of the key>.v<format>.cfi
// The table of /usr/lib/.../libc.so.6 compiled once serves every later run (and every path or
// container that maps the same file). The key is the GNU build-id plus a hash of what the table
// compiler reads (.eh_frame, .debug_frame, the executable segments, the file's size): a build-id
// alone is whatever the linker was told (`-Wl,--build-id=0x<libc's id>`), and a table cached
// under libc's id from another file would cut every later libc stack short. Files without a
// build-id are compiled every time. A cache file that is short, from another format, for another
// key, or not ours and private (owned_files.h) is ignored (and rewritten): its header must
// repeat the key and its size must match its row count.
#pragma once

#include <string>

namespace ukstap::unwind {
struct CfiTable;
}

namespace ukstap::loader {

// The GNU build-id of the ELF file at `path`, lowercase hex; "" when it has none or cannot be
// read.
std::string elf_build_id(const std::string& path);

// The cache key of the unwind table compiled from the ELF file at `path`: "<build-id>-<hash>",
// the hash (SHA-256, content_hash.h: the file may be another user's) over the file's size, its executable PT_LOAD headers, its .eh_frame and .debug_frame
// (address, size, bytes) and, when it has no .debug_frame, the .debug_frame of the build-id debug
// file the table compiler then reads. "" when it has no build-id or cannot be read.
std::string elf_table_key(const std::string& path);
// The same from an open descriptor (kept open).
std::string elf_table_key(int fd);
// The content identity of the table compiled from the file open on `fd`: its elf_table_key
// when it has a build-id, else "-<the same hash>" (not a cache key: without a build-id nothing
// is cached). Files of equal identity compile to the same table, whatever their path or inode
// (/usr/bin/git and /usr/lib/git-core/git, copies, hard links): the loader keeps one table for
// them (loader/table_sharing.h). "" when it cannot be read.
std::string elf_table_identity(int fd);
// Whether `identity` is also a cache key (the file has a build-id).
inline bool identity_is_cache_key(const std::string& identity) {
  return !identity.empty() && identity[0] != '-';
}

class TableCache {
 public:
  // `dir`: the cache root (loader::cache_dir()); "" disables the cache.
  explicit TableCache(std::string dir) : dir_(std::move(dir)) {}
  // The cached table of `key` (elf_table_key); false when there is none (or it is unusable).
  // `why` (when given) names a cache file or directory refused as not ours and private.
  bool load(const std::string& key, unwind::CfiTable& out, std::string* why = nullptr) const;
  // Store `t` for `key` (a private file, written under a temporary name and renamed into place).
  // False when the cache cannot be written; the run goes on without it.
  bool store(const std::string& key, const unwind::CfiTable& t) const;
  // Where the table of `key` lives.
  std::string path_for(const std::string& key) const;

 private:
  std::string dir_;
};

}  // namespace ukstap::loader
