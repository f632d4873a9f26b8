// process.library("PATTERN"): the shared libraries a program uses, found the way the dynamic
// linker finds them (DT_NEEDED, recursively, through DT_RUNPATH/DT_RPATH, /etc/ld.so.conf and
// the default directories), without running anything (ldd would run the program's own loader).
#pragma once

#include <string>
#include <vector>

namespace ukstap {
class Session;
}

namespace ukstap::probes {

// Canonical paths of the libraries `exe` (canonical) needs, directly or through other
// libraries, in breadth-first order; only libraries of the program's ELF class.
std::vector<std::string> needed_libraries(Session& s, const std::string& exe);

// The directories of /etc/ld.so.conf (its `include` globs followed) then the defaults.
std::vector<std::string> library_dirs();

}  // namespace ukstap::probes
