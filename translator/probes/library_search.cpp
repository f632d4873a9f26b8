// The libraries a program needs (library_search.h).
#include "probes/library_search.h"

#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <set>
#include <sstream>

#include "probes/cache.h"
#include "probes/internal.h"

namespace ukstap::probes {

namespace {

bool regular(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void read_conf(const std::string& file, std::vector<std::string>& dirs, int depth) {
  if (depth > 8) return;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (auto h = line.find('#'); h != std::string::npos) line.erase(h);
    std::istringstream ls(line);
    std::string word;
    if (!(ls >> word)) continue;
    if (word == "include") {
      std::string pat;
      while (ls >> pat) {
        if (pat[0] != '/') pat = file.substr(0, file.rfind('/') + 1) + pat;
        glob_t g{};
        if (glob(pat.c_str(), 0, nullptr, &g) == 0)
          for (size_t i = 0; i < g.gl_pathc; ++i) read_conf(g.gl_pathv[i], dirs, depth + 1);
        globfree(&g);
      }
      continue;
    }
    dirs.push_back(word);
  }
}

std::string dir_of(const std::string& p) { return p.substr(0, p.rfind('/')); }

}  // namespace

std::vector<std::string> library_dirs() {
  std::vector<std::string> dirs;
  read_conf("/etc/ld.so.conf", dirs, 0);
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                        "/usr/lib64", "/lib", "/usr/lib"})
    dirs.push_back(d);
  return dirs;
}

std::vector<std::string> needed_libraries(Session& s, const std::string& exe) {
  auto& elfs = session_cache(s).elfs;
  auto info_of = [&](const std::string& p) {
    auto it = elfs.find(p);
    if (it == elfs.end()) it = elfs.emplace(p, read_elf_info(p)).first;
    return it->second;
  };
  auto top = info_of(exe);
  if (!top->error.empty()) return {};
  const std::vector<std::string> system_dirs = library_dirs();
  std::vector<std::string> out;
  std::set<std::string> seen_names, seen_paths{exe};
  std::vector<std::string> queue{exe};
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    auto info = info_of(queue[qi]);
    // The object's own DT_RUNPATH/DT_RPATH ($ORIGIN: its directory), then the system's.
    std::vector<std::string> dirs;
    std::stringstream rp(info->runpath);
    std::string d;
    while (std::getline(rp, d, ':')) {
      for (const char* origin : {"$ORIGIN", "${ORIGIN}"})
        if (auto at = d.find(origin); at != std::string::npos)
          d.replace(at, std::string(origin).size(), dir_of(queue[qi]));
      if (!d.empty()) dirs.push_back(d);
    }
    dirs.insert(dirs.end(), system_dirs.begin(), system_dirs.end());
    for (const std::string& name : info->needed) {
      if (!seen_names.insert(name).second) continue;
      std::vector<std::string> candidates;
      if (name.find('/') != std::string::npos) candidates.push_back(name);
      else
        for (auto& dir : dirs) candidates.push_back(dir + "/" + name);
      for (auto& c : candidates) {
        if (!regular(c)) continue;
        char buf[PATH_MAX];
        std::string canon = realpath(c.c_str(), buf) ? buf : c;
        auto li = info_of(canon);
        if (!li->error.empty() || li->is64 != top->is64) continue;  // another ELF class
        if (seen_paths.insert(canon).second) {
          out.push_back(canon);
          queue.push_back(canon);
        }
        break;
      }
    }
  }
  return out;
}

}  // namespace ukstap::probes
