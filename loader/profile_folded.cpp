// Folded stacks (profile.h): one "root;...;leaf COUNT" line per distinct stack, the format
// FlameGraph's stackcollapse scripts produce and flamegraph.pl, inferno and speedscope read.
#include <map>
#include <string>

#include "loader/profile.h"

namespace ukstap::profile {

std::string frame_label(const Frame& f) {
  return f.kernel ? frame_name(f) + "_[k]" : frame_name(f);
}

std::string frame_name(const Frame& f) {
  std::string s;
  if (!f.name.empty()) {
    s = f.name;
  } else if (!f.module.empty()) {
    size_t slash = f.module.rfind('/');
    s = "[" + (slash == std::string::npos ? f.module : f.module.substr(slash + 1)) + "]";
  } else {
    s = "[unknown]";
  }
  // ';' separates frames and a line is one stack: neither may appear inside. Spaces may (a
  // demangled C++ name has them): the count is what follows the line's last space, as
  // flamegraph.pl, inferno and speedscope read it and stackcollapse-perf.pl writes it.
  for (char& c : s)
    if (c == ';' || c == '\n') c = '_';
  return s;
}

std::string to_folded(const Profile& p) {
  std::map<std::string, uint64_t> stacks;  // sorted, as stackcollapse output is
  for (const Sample& s : p.samples) {
    std::string line = s.comm.empty() ? "[unknown]" : s.comm;
    for (char& c : line)
      if (c == ';' || c == ' ' || c == '\n') c = '_';
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it) line += ";" + frame_label(*it);
    stacks[line] += s.count;
  }
  std::string out;
  for (const auto& [stack, n] : stacks) out += stack + " " + std::to_string(n) + "\n";
  return out;
}

}  // namespace ukstap::profile
