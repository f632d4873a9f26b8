// Syscall numbers from the kernel headers' asm/unistd_64.h (`#define __NR_openat 257`): the
// table the C library is built against, installed with the headers ukstap compiles modules
// with (linux-libc-dev). Read once per run.
#include "probes/syscall_numbers.h"

#include <sys/utsname.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace ukstap::probes {

namespace {

std::map<std::string, int> read_table() {
  std::map<std::string, int> t;
  struct utsname u;
  if (::uname(&u) != 0 || std::strcmp(u.machine, "x86_64") != 0) return t;
  for (const char* path : {"/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"}) {
    std::ifstream in(path);
    if (!in) continue;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string def, name;
      long nr = -1;
      if (!(ls >> def >> name >> nr) || def != "#define" || name.rfind("__NR_", 0) != 0) continue;
      if (nr >= 0 && nr < 512) t[name.substr(5)] = (int)nr;
    }
    break;
  }
  return t;
}

}  // namespace

int syscall_number(const std::string& name) {
  static const std::map<std::string, int> table = read_table();
  auto it = table.find(name);
  return it == table.end() ? -1 : it->second;
}

}  // namespace ukstap::probes
