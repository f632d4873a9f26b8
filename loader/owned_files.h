// Files ukstap writes, then reads back (the module cache, the compiler-version memo, vmlinux.h,
// the unwind-table cache): ukstap runs as root, so such a file is only trusted when nobody but
// the effective user can have put it there. The rules (docs/DESIGN.md, "Files ukstap trusts"):
//
//  - the cache root's ancestors (after realpath) are owned by root or the effective user and not
//    writable by group or others, unless sticky (/tmp): nobody else can rename them away;
//  - every directory ukstap uses at or below the cache root is a real directory (no symlink),
//    owned by the effective user, not writable by group or others; ukstap creates them 0700;
//  - every file is opened with O_NOFOLLOW, and fstat of the open file says: a regular file, owned
//    by the effective user, not writable by group or others; ukstap creates them 0600
//    under a unique name (O_EXCL) and renames them into place.
//
// A check that fails says why in `why` (naming the path); the caller then bypasses the file or
// directory with one warning, it never uses it.
#pragma once

#include <string>

namespace ukstap::loader {

// `path` resolved (realpath) when it and all its ancestors pass the ancestor rule above; "" with
// `why` otherwise.
std::string trusted_real_path(const std::string& path, std::string& why);

// `path` is a private directory: a directory (not a symlink), owned by the effective user, not
// writable by group or others.
bool private_dir(const std::string& path, std::string& why);

// mkdir -p of `root`/`rel` with mode 0700, each level below `root` checked with private_dir.
// `root` must exist and be trusted already (trusted_real_path or make_private_dirs).
bool make_private_dirs(const std::string& root, const std::string& rel, std::string& why);

// Opens `path` read-only (O_NOFOLLOW) when it is a private file (above); -1 otherwise, `why`
// empty when it simply does not exist.
int open_private_file(const std::string& path, std::string& why);

// A private file's whole content; false (`why` empty when it does not exist) otherwise.
bool read_private_file(const std::string& path, std::string& out, std::string& why);

// Writes `data` to `path` as a 0600 file: written under a unique name beside it (O_EXCL), then
// renamed over `path` (a symlink there is replaced, never followed).
bool write_private_file(const std::string& path, const std::string& data, std::string& why);

// A private temporary directory (mkdtemp, 0700) under $TMPDIR when that passes the ancestor rule,
// else under /tmp (`passed_over` then says why $TMPDIR was not used); "" with `why` on failure.
std::string make_private_tmpdir(const std::string& prefix, std::string& why,
                                std::string& passed_over);

// A file with no name in any directory (memfd_create, close-on-exec): gone with ukstap however
// it ends, even kill -9. `proc_path` gets "/proc/self/fd/N", a name this process may open it by
// (not with O_NOFOLLOW: it is a /proc magic link). The fd, or -1 with `why`.
int make_anonymous_file(const char* name, std::string& proc_path, std::string& why);

}  // namespace ukstap::loader
