// Small helpers shared by pass 4 (compile.cpp) and pass 5 (run.cpp and friends).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ukstap::loader {

// Runs argv (no shell), collecting stdout+stderr into `output`. Returns the exit status, or -1
// when it could not be started (output then says why).
int run_command(const std::vector<std::string>& argv, std::string& output);

// The argv as a shell-quoted line, for -v messages.
std::string quote_command(const std::vector<std::string>& argv);

// execvp's search: the regular executable file NAME runs as (NAME itself when it has a '/',
// else the first in $PATH); false when there is none.
bool find_program(const std::string& name, std::string& found);

// For files ukstap did not write (/proc, /sys, the runtime headers). What it writes then reads
// back goes through owned_files.h.
// The rest of `fd`'s content, read(2) from its current offset to the end.
bool read_all(int fd, std::string& out);
bool read_file(const std::string& path, std::string& out);
// Creates or truncates `path` (0600, not through a symlink).
bool write_file(const std::string& path, const std::string& data);
bool file_exists(const std::string& path);
// "dev:ino:size:mtime:ctime" (nanoseconds): names a memo kept for one version of a file (the
// compilers/ and kernels/ memos of the cache): a file replaced or rewritten gets another name.
std::string file_identity(const struct stat& st);
// mkdir -p (new levels 0700); false (errno set) on failure.
bool make_dirs(const std::string& path);
// rm -rf.
void remove_tree(const std::string& path);

// 128-bit content hash (two FNV-1a 64 lanes), as 32 hex digits. Not cryptographic: cache key.
class Hasher {
 public:
  void add(const std::string& s);
  void add(const void* p, size_t n);
  std::string hex() const;

 private:
  uint64_t a_ = 0xcbf29ce484222325ULL, b_ = 0x84222325cbf29ce4ULL;
};

// $XDG_CACHE_HOME/ukstap, else $HOME/.cache/ukstap, resolved and checked (owned_files.h: its
// ancestors root's or ours and not writable by others, itself ours and private; created 0700);
// "" with `why` (naming the path) when there is none or it is not to be trusted.
std::string cache_dir(std::string& why);

// --disable-cache: from now on cache_dir() returns "" (why: the option), so nothing is read
// from or written to the cache.
void disable_cache();
bool cache_disabled();

}  // namespace ukstap::loader
