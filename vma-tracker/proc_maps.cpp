// read_proc_maps: /proc/PID/maps as Mapping values. The tracker seeds processes that were
// running before its perf events opened from it, and the tests use it as the independent truth.
//
// Line format (fs/proc/task_mmu.c, show_map_vma):
//   START-END PERMS OFFSET MAJ:MIN INODE [padding] PATH
// all numbers hex except INODE (decimal). PATH is the rest of the line: it may contain spaces,
// may end in " (deleted)", may be a pseudo name ([vdso], [stack], [heap], [anon:NAME]) or absent
// (anonymous memory). The kernel escapes '\n' in names, so one line is one mapping.
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "vma-tracker/tracker.h"

namespace ukstap::vma {

namespace {

bool parse_line(const std::string& line, Mapping& m) {
  uint64_t start = 0, end = 0, pgoff = 0, ino = 0;
  char perms[8] = {};
  unsigned maj = 0, min = 0;
  int consumed = 0;
  if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 "%n",
                  &start, &end, perms, &pgoff, &maj, &min, &ino, &consumed) != 7)
    return false;
  m.start = start;
  m.end = end;
  m.pgoff = pgoff;
  m.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
           (perms[2] == 'x' ? PROT_EXEC : 0);
  m.dev = makedev(maj, min);
  m.ino = ino;
  // The path starts after the column padding; a file name cannot start with a space in
  // practice, and anything after the first non-blank character is the name, spaces included.
  size_t p = static_cast<size_t>(consumed);
  while (p < line.size() && line[p] == ' ') ++p;
  m.path = line.substr(p);
  return true;
}

}  // namespace

std::vector<Mapping> read_proc_maps(int pid) {
  std::vector<Mapping> out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in) return out;
  std::string line;
  while (std::getline(in, line)) {
    Mapping m;
    if (parse_line(line, m)) out.push_back(std::move(m));
  }
  return out;
}

}  // namespace ukstap::vma
