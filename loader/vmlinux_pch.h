// vmlinux.h precompiled (a clang PCH) for pass 4's BPF compiles. Parsing vmlinux.h (2.8 MB of
// kernel types) was ~0.25 CPU s of every cold BPF compile, more than half of a one-probe
// module's clang time; loading its PCH takes a few ms, as clang reads only the declarations a
// module uses. The PCH is made once per kernel and compiler, beside vmlinux.h in the cache
// (vmlinux/<kernel key>/vmlinux-<key>.pch, the key hashing clang's version and the language
// flags: a PCH is only valid for the flags it was built with), private like everything there.
//
// The object is the same bytes with or without it (clang reads the same declarations, in the
// same order: vmlinux.h is the runtime's first include, and nothing the generated C defines
// before it is a name vmlinux.h uses), so a run that has no PCH (it could not be made, or the
// module does not fit, below) and one that has it install the same module into a shared cache.
// A compile with the PCH that fails is done again without it; if that one succeeds the PCH was
// at fault (a stale or damaged file) and is removed, to be made again by the next compile.
#pragma once

#include <string>
#include <vector>

namespace ukstap {
class Session;
}

namespace ukstap::loader {

// Whether the module `source` may start from the PCH: nothing but comments, blank lines and
// `#define STP_...` lines (the limits and the runtime's selections, names vmlinux.h does not
// use) before its `#include "stp_runtime.h"`. Anything else there (a user's -D NAME, which
// could be a name of vmlinux.h's) and the module is compiled without it.
bool pch_fits(const std::string& source);

// Whether the cache `cache` is used enough for the PCH to pay: making it costs ~0.6 CPU s (a
// parse of vmlinux.h and the writing of 15 MB) and each compile that uses it saves ~0.2 s. It is
// made when the cache holds two modules besides the one being compiled (their directories,
// named by their 32-hex-digit keys): a user's cache from the third script on, a test suite's
// shared one, not a fresh cache used for one or two scripts (a test of its own).
bool pch_worth(const std::string& cache);

// The path of the PCH of `vmlinux_dir`/vmlinux.h for `clang` (whose `--version` text is
// `clang_version`) with the language flags `flags` (target, -O, -g, -D: those of the compile
// that uses it), made into `vmlinux_dir` (through `tmp`) when it is not there and the cache
// `cache` is worth it (pch_worth); "" when there is none (the module is compiled without it).
std::string vmlinux_pch(Session& s, const std::string& clang, const std::string& clang_version,
                        const std::vector<std::string>& flags, const std::string& vmlinux_dir,
                        const std::string& cache, const std::string& tmp);

// A compile with `pch` failed and the same compile without it succeeded: the PCH goes.
void drop_vmlinux_pch(Session& s, const std::string& pch);

// Removes every precompiled vmlinux.h in DIR (vmlinux.h's directory in the cache): called when
// vmlinux.h is written anew, since clang checks a PCH against its header by size only. Also
// drops those of an older clang or other flags, which nothing else would remove.
void drop_vmlinux_pchs(const std::string& dir);

}  // namespace ukstap::loader
