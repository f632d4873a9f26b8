// Names SystemTap's own tapsets (4.8, /usr/share/systemtap/tapset) define that ukstap's tapsets
// do not: probe alias families and global arrays. A script written for SystemTap that uses one
// of them gets an error naming the SystemTap tapset it expected, instead of stap's generic
// "probe point mismatch" or "array locals not supported" (which read as a typo in the script).
#pragma once

#include <string>

namespace ukstap::passes {

// The SystemTap tapset file (relative to its tapset directory) that defines probe aliases whose
// first component is `family` ("vfs" -> "linux/vfs.stp"), or nullptr.
const char* stap_alias_tapset(const std::string& family);

// The SystemTap tapset file that declares the global `name` ("argv" -> "argv.stp"), or nullptr.
const char* stap_global_tapset(const std::string& name);

// Why a SystemTap tapset probe point ukstap knows of cannot be served on this kernel
// ("vm.pagefault.return": a kprobe on a function's return, no tracepoint marks it), or nullptr.
const char* stap_point_unavailable(const std::string& point);

}  // namespace ukstap::passes
