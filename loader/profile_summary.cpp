// The closing summary of `ukstap --profile` (profile_summary.h).
#include "loader/profile_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace ukstap::profile {

namespace {

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "burn [split]", "do_syscall_64 [kernel]", "[libc.so.6]" (no symbol), "[unknown]".
std::string where(const Frame& f) {
  std::string mod = f.kernel ? (f.module.empty() ? "kernel" : f.module) : base_name(f.module);
  if (f.name.empty()) return "[" + (mod.empty() ? "unknown" : mod) + "]";
  std::string name = f.name;
  if (name.size() > 100) name = name.substr(0, 98) + "..";  // a C++ signature can be long
  return mod.empty() ? name : name + " [" + mod + "]";
}

}  // namespace

std::string summary(const Profile& p, const std::string& format, const std::string& dest,
                    double seconds, size_t top) {
  uint64_t total = 0;
  std::map<std::string, uint64_t> self;
  for (const Sample& s : p.samples) {
    total += s.count;
    self[s.frames.empty() ? "[no stack: " + (s.comm.empty() ? "unknown" : s.comm) + "]"
                          : where(s.frames.front())] += s.count;
  }
  const char* what = format == "svg"     ? "an SVG flame graph"
                     : format == "pprof" ? "pprof (gzipped profile.proto)"
                                         : "folded stacks";
  char head[256];
  std::snprintf(head, sizeof head, "ukstap: wrote %llu sample%s (%d Hz, a %.1f s run) as %s to ",
                (unsigned long long)total, total == 1 ? "" : "s", p.hz, seconds, what);
  std::string out = head;
  out += (dest.empty() || dest == "-" ? std::string("standard output") : dest) + "\n";
  if (!total) return out;
  std::vector<std::pair<uint64_t, std::string>> by_count;
  for (auto& [name, n] : self) by_count.push_back({n, name});
  std::sort(by_count.begin(), by_count.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  out += "ukstap: running in most samples (self):\n";
  for (size_t i = 0; i < by_count.size() && i < top; ++i) {
    char line[64];
    std::snprintf(line, sizeof line, "  %6.2f%%  ", 100.0 * by_count[i].first / total);
    out += line + by_count[i].second + "\n";
  }
  return out;
}

}  // namespace ukstap::profile
