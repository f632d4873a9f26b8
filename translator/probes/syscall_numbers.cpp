// Syscall numbers: the tapsets' generated table (tapsets/syscalls/syscall_num.stp, written by
// scripts/gen-syscall-tapset from unistd_64.h plus the numbers newer than it, checked on this
// kernel), else the kernel headers' asm/unistd_64.h (`#define __NR_openat 257`). Read once.
#include "probes/syscall_numbers.h"

#include <sys/utsname.h>

#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace ukstap::probes {

namespace {

using Table = std::map<std::string, int>;

// `/* 257 */ "openat",` rows of syscall_num.stp.
bool read_tapset_table(const std::vector<std::string>& dirs, Table& t) {
  static const std::regex row(R"re(^\s*/\*\s*(\d+)\s*\*/\s*"([a-z0-9_]+)",)re");
  for (const auto& d : dirs) {
    std::ifstream in(d + "/syscalls/syscall_num.stp");
    if (!in) continue;
    std::string line;
    std::smatch m;
    while (std::getline(in, line))
      if (std::regex_search(line, m, row)) {
        int nr = std::stoi(m[1]);
        if (nr < 512) t.emplace(m[2], nr);
      }
    if (!t.empty()) return true;
  }
  return false;
}

void read_unistd(Table& t) {
  for (const char* path : {"/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"}) {
    std::ifstream in(path);
    if (!in) continue;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string def, name;
      long nr = -1;
      if (!(ls >> def >> name >> nr) || def != "#define" || name.rfind("__NR_", 0) != 0) continue;
      if (nr >= 0 && nr < 512) t.emplace(name.substr(5), (int)nr);
    }
    return;
  }
}

Table read_table(const std::vector<std::string>& dirs) {
  Table t;
  struct utsname u;
  if (::uname(&u) != 0 || std::strcmp(u.machine, "x86_64") != 0) return t;
  if (!read_tapset_table(dirs, t)) read_unistd(t);
  // Tracepoints are named after the kernel's SYSCALL_DEFINE, which differs from __NR_ for these.
  static const char* const kAlias[][2] = {{"newfstat", "fstat"},   {"newlstat", "lstat"},
                                          {"newstat", "stat"},     {"newuname", "uname"},
                                          {"sendfile64", "sendfile"}, {"umount", "umount2"}};
  for (auto& a : kAlias)
    if (t.count(a[1])) t.emplace(a[0], t[a[1]]);
  return t;
}

}  // namespace

std::map<std::string, int> syscall_table_from_tapsets(const std::vector<std::string>& tapset_dirs) {
  Table t;
  read_tapset_table(tapset_dirs, t);
  return t;
}

std::map<std::string, int> syscall_table_from_headers() {
  Table t;
  read_unistd(t);
  return t;
}

int syscall_number(const std::string& name, const std::vector<std::string>& tapset_dirs) {
  static const Table table = read_table(tapset_dirs);
  auto it = table.find(name);
  return it == table.end() ? -1 : it->second;
}

}  // namespace ukstap::probes
