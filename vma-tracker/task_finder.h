// The task finder: which processes a script is about (TargetSpec, SystemTap's -c/-x and
// process("PATH") probes). Parentage comes from the side-band FORK records; for processes forked
// before ukstap started, from the /proc/PID/stat ppid chain.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vma-tracker/tracker.h"

namespace ukstap::vma {

// A process's main executable: the first file mapping after its exec, or /proc/PID/exe.
struct ExeId {
  bool known = false;
  std::string path;
  uint64_t dev = 0, ino = 0;
};

class TaskFinder {
 public:
  void set_spec(const TargetSpec& spec);
  // Process `child` was forked by process `parent` (tgids).
  void note_fork(int child, int parent);
  // `exe`: the process's main executable when the caller knows it; else /proc/PID/exe is read.
  bool is_target(int tgid, const ExeId* exe) const;

  // /proc helpers (0 / unknown when the task is gone).
  static int tgid_of(int pid);
  static int ppid_of(int pid);
  static ExeId exe_of(int pid);

 private:
  bool descends_from_target(int tgid) const;
  bool runs_target_binary(const ExeId& exe) const;

  TargetSpec spec_;
  int target_tgid_ = 0;
  std::vector<std::string> bin_paths_;                 // realpath of each binary
  std::vector<std::pair<uint64_t, uint64_t>> bin_ids_; // (dev, ino) of each binary
  mutable std::unordered_map<int, int> parent_;        // tgid -> parent tgid
};

}  // namespace ukstap::vma
