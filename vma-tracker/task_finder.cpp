// Target selection (see task_finder.h).
#include "vma-tracker/task_finder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace ukstap::vma {

void TaskFinder::set_spec(const TargetSpec& spec) {
  spec_ = spec;
  target_tgid_ = 0;
  if (spec.target_pid > 0) {
    int t = tgid_of(spec.target_pid);
    target_tgid_ = t > 0 ? t : spec.target_pid;  // a tid stands for its process
  }
  bin_paths_.clear();
  bin_ids_.clear();
  // Both identities: the kernel names a mapped file by its resolved path, and a path may reach
  // the same file through a symlink (/bin -> /usr/bin) or a bind mount (then dev+ino match).
  for (const std::string& b : spec.binaries) {
    char buf[PATH_MAX];
    bin_paths_.push_back(realpath(b.c_str(), buf) ? std::string(buf) : b);
    struct stat st;
    if (stat(b.c_str(), &st) == 0)
      bin_ids_.emplace_back(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
  }
}

void TaskFinder::note_fork(int child, int parent) { parent_[child] = parent; }

bool TaskFinder::is_target(int tgid, const ExeId* exe) const {
  if (spec_.system_wide) return true;
  if (target_tgid_ > 0 && descends_from_target(tgid)) return true;
  if (!bin_paths_.empty()) {
    if (exe && exe->known) return runs_target_binary(*exe);
    ExeId e = exe_of(tgid);
    return e.known && runs_target_binary(e);
  }
  return false;
}

bool TaskFinder::descends_from_target(int tgid) const {
  int p = tgid;
  for (int depth = 0; p > 0 && depth < 4096; ++depth) {  // bound: a cycle from pid reuse
    if (p == target_tgid_) return true;
    auto it = parent_.find(p);
    int pp;
    if (it != parent_.end()) {
      pp = it->second;
    } else {
      pp = ppid_of(p);  // forked before we started
      if (pp > 0) parent_[p] = pp;
    }
    if (pp <= 0 || pp == p) break;
    p = pp;
  }
  return false;
}

bool TaskFinder::runs_target_binary(const ExeId& exe) const {
  for (const std::string& p : bin_paths_)
    if (exe.path == p) return true;
  for (const auto& [dev, ino] : bin_ids_)
    if (exe.ino != 0 && exe.dev == dev && exe.ino == ino) return true;
  return false;
}

int TaskFinder::tgid_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Tgid:", 0) == 0) return std::atoi(line.c_str() + 5);
  return 0;
}

int TaskFinder::ppid_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return 0;
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, the last ')' ends it.
  size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  char state = 0;
  int ppid = 0;
  if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) != 2) return 0;
  return ppid;
}

ExeId TaskFinder::exe_of(int pid) {
  ExeId e;
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  char buf[PATH_MAX];
  ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return e;  // gone, or a kernel thread
  e.path.assign(buf, static_cast<size_t>(n));
  struct stat st;
  if (stat(link.c_str(), &st) == 0) {
    e.dev = static_cast<uint64_t>(st.st_dev);
    e.ino = static_cast<uint64_t>(st.st_ino);
  }
  e.known = true;
  return e;
}

}  // namespace ukstap::vma
