// vmlinux.h precompiled for pass 4's BPF compiles (vmlinux_pch.h).
#include "loader/vmlinux_pch.h"
#include "driver/text_lines.h"

#include <dirent.h>
#include <unistd.h>

#include <string_view>

#include "driver/session.h"
#include "loader/owned_files.h"
#include "loader/util.h"

namespace ukstap::loader {

bool pch_fits(const std::string& source) {
  size_t inc = source.find("#include \"stp_runtime.h\"");
  if (inc == std::string::npos || (inc > 0 && source[inc - 1] != '\n')) return false;
  for (std::string_view line : text_lines(std::string_view(source.data(), inc))) {
    if (line.empty()) continue;
    bool comment = line.rfind("/*", 0) == 0 && line.size() >= 4 && line.substr(line.size() - 2) == "*/" &&
                   line.find("*/") == line.size() - 2;
    if (comment || line.rfind("#define STP_", 0) == 0) continue;
    return false;
  }
  return true;
}

bool pch_worth(const std::string& cache) {
  DIR* d = ::opendir(cache.c_str());
  if (!d) return false;
  int modules = 0;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;  // a module's directory: its key, 32 hex digits
    if (n.size() == 32 && n.find_first_not_of("0123456789abcdef") == std::string_view::npos &&
        ++modules == 3)
      break;
  }
  ::closedir(d);
  return modules >= 3;
}

std::string vmlinux_pch(Session& s, const std::string& clang, const std::string& clang_version,
                        const std::vector<std::string>& flags, const std::string& vmlinux_dir,
                        const std::string& cache, const std::string& tmp) {
  Hasher h;
  h.add("vmlinux-pch-v1");
  h.add(clang_version);
  for (auto& f : flags) h.add(f);
  std::string path = vmlinux_dir + "/vmlinux-" + h.hex().substr(0, 16) + ".pch";
  // clang reads it by name: it must be ours and private (its directory is).
  std::string why;
  int fd = open_private_file(path, why);
  if (fd >= 0) {
    ::close(fd);
    return path;
  }
  if (!why.empty()) s.diag.warning("not using the precompiled vmlinux.h: " + why + "; making it again");
  else if (!pch_worth(cache)) return "";
  // -fno-pch-timestamp: the PCH checks vmlinux.h by size, not by mtime. Two runs that made
  // vmlinux.h at once both renamed theirs into place (the same bytes, another mtime).
  std::vector<std::string> argv = {clang};
  argv.insert(argv.end(), flags.begin(), flags.end());
  std::string built = tmp + "/vmlinux.pch";
  argv.insert(argv.end(), {"-Xclang", "-fno-pch-timestamp", "-x", "c-header", vmlinux_dir + "/vmlinux.h",
                           "-o", built});
  if (s.opts.verbose > 1) s.diag.stream() << "Running " << quote_command(argv) << "\n";
  std::string out, data;
  if (run_command(argv, out) != 0) {
    if (s.opts.verbose > 0) s.diag.stream() << "Pass 4: no precompiled vmlinux.h:\n" << out;
    return "";
  }
  // Written under a unique name and renamed into place: a concurrent run that made it too
  // renames an equivalent file over it, a run reading it keeps the one it opened.
  if (!read_private_file(built, data, why) || !write_private_file(path, data, why)) {
    if (s.opts.verbose > 0) s.diag.stream() << "Pass 4: no precompiled vmlinux.h: " << why << "\n";
    return "";
  }
  return path;
}

void drop_vmlinux_pch(Session& s, const std::string& pch) {
  if (s.opts.verbose > 0)
    s.diag.stream() << "Pass 4: " << pch << " failed where vmlinux.h did not: removed\n";
  ::unlink(pch.c_str());
}

void drop_vmlinux_pchs(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n.rfind("vmlinux-", 0) == 0 && n.size() > 4 && n.substr(n.size() - 4) == ".pch")
      ::unlinkat(::dirfd(d), e->d_name, 0);
  }
  ::closedir(d);
}

}  // namespace ukstap::loader
