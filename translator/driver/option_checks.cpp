#include "driver/option_checks.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace ukstap {

namespace {

struct LimitRange {
  const char* name;
  long lo, hi;
  bool power_of_two;
  const char* why;  // where the bounds come from
};

// Ranges measured against the runtime (see docs/DESIGN.md "What ukstap promises"):
//  - MAXSTRINGLEN: runtime/common/stp_limits.h masks string indexes, so a power of two >= 16;
//    above 8192 clang cannot compile the BPF string copies (memset of a map value).
//  - MAXMAPENTRIES: BPF hash maps are preallocated; 4194304 entries of the default string
//    key load, the kernel refuses sizes far beyond.
//  - MAXBACKTRACE: runtime/common/stp_limits.h accepts 1..1024.
const LimitRange kLimits[] = {
    {"MAXSTRINGLEN", 16, 8192, true, "a power of two from 16 to 8192"},
    {"MAXMAPENTRIES", 1, 4194304, false, "1 to 4194304"},
    {"MAXACTION", 1, INT_MAX, false, "1 to 2147483647"},
    {"MAXBACKTRACE", 1, 1024, false, "1 to 1024"},
    {"MAXERRORS", 0, INT_MAX, false, "0 to 2147483647"},
    {"MAXNESTING", 0, INT_MAX, false, "0 to 2147483647"},
    {"MAXSKIPPED", 0, INT_MAX, false, "0 to 2147483647"},
    {"MAXTRYLOCK", 0, INT_MAX, false, "0 to 2147483647"},
};

bool whole_decimal(const std::string& text, long& out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

}  // namespace

std::string check_define(const std::string& name, const std::string& value, bool has_value) {
  std::string nv = "'" + name + (has_value ? "=" + value : "") + "'";
  for (const LimitRange& l : kLimits) {
    if (name != l.name) continue;
    long v = 0;
    bool ok = has_value && whole_decimal(value, v) && v >= l.lo && v <= l.hi &&
              (!l.power_of_two || (v & (v - 1)) == 0);
    if (!ok) return "Invalid -D " + nv + ": " + name + " must be " + l.why + ".";
    return "";
  }
  if (name == "STP_SYSCALL_DISPATCH") {
    if (has_value && value != "0" && value != "1")
      return "Invalid -D " + nv + ": STP_SYSCALL_DISPATCH must be 0 or 1.";
    return "";
  }
  if (value.find_first_of("\n\r") != std::string::npos ||
      (!value.empty() && value.back() == '\\'))
    return "Invalid -D '" + name + "=...': the value must be one line (no newline or final '\\').";
  return "";
}

std::string check_elf_object(const std::string& path) {
  // O_NONBLOCK: a FIFO at the path (someone else's, or a user's mistake) must not block the
  // open; only a regular file is read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::strerror(errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode)) return std::strerror(EISDIR);
    return S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file" : "not a regular file";
  }
  std::string why;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr eh;
  size_t nsec = 0, shstr = 0;
  if (!elf || elf_kind(elf) != ELF_K_ELF) {
    why = "not an ELF file";
  } else if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &nsec) != 0 ||
             elf_getshdrstrndx(elf, &shstr) != 0) {
    why = std::string("corrupt ELF file (") + elf_errmsg(-1) + ")";
  } else if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN && eh.e_type != ET_REL) {
    why = "not an executable, shared library or object (ELF type " + std::to_string(eh.e_type) + ")";
  } else {
    // Headers and section contents must lie inside the file (a truncated copy does not).
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (eh.e_phoff > size || eh.e_shoff > size ||
        eh.e_phoff + uint64_t(eh.e_phnum) * eh.e_phentsize > size)
      why = "corrupt ELF file (headers beyond the end of the file)";
    for (Elf_Scn* scn = nullptr; why.empty() && (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh))
        why = std::string("corrupt ELF file (") + elf_errmsg(-1) + ")";
      else if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
        why = "corrupt ELF file (a section beyond the end of the file)";
    }
  }
  if (elf) elf_end(elf);
  ::close(fd);
  return why;
}

std::string check_compatible_version(const std::string& version) {
  bool ok = !version.empty() && version.front() != '.' && version.back() != '.' &&
            version.find("..") == std::string::npos &&
            version.find_first_not_of("0123456789.") == std::string::npos;
  if (!ok)
    return "Invalid --compatible version '" + version + "' (numbers separated by dots, e.g. 4.8).";
  return "";
}

std::string check_prologue_searching(const std::string& when) {
  if (when == "never" || when == "always" || when == "auto") return "";
  return "Invalid --prologue-searching '" + when + "' (never, always or auto).";
}

std::string check_runtime(const std::string& mode) {
  if (mode == "bpf") return "";
  if (mode == "kernel" || mode == "dyninst")
    return "--runtime=" + mode + " is not available: ukstap has only the bpf runtime (BPF "
           "programs and a user-space consumer), not SystemTap's " +
           (mode == "kernel" ? "kernel-module" : "Dyninst") + " runtime.";
  return "Invalid --runtime '" + mode + "' (ukstap has only the bpf runtime).";
}

std::string check_tapset_dir(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return std::strerror(ENOTDIR);
  if (::access(path.c_str(), R_OK | X_OK) != 0) return std::strerror(errno);
  return "";
}

}  // namespace ukstap
