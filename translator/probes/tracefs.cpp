#include "probes/tracefs.h"

#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "probes/internal.h"

namespace ukstap::probes {

namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

std::vector<std::string> subdirs(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    bool dir_entry = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) dir_entry = is_dir(dir + "/" + e->d_name);
    if (dir_entry) out.push_back(e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

int field_int(const std::string& line, const char* key) {
  size_t p = line.find(key);
  if (p == std::string::npos) return 0;
  return std::atoi(line.c_str() + p + std::strlen(key));
}

}  // namespace

bool kernel_c_integer(const std::string& type, int& bytes, bool& is_signed) {
  // Type qualifiers do not change the value.
  std::string t;
  std::istringstream words(type);
  for (std::string w; words >> w;)
    if (w != "const" && w != "volatile") t += (t.empty() ? "" : " ") + w;
  if (t.rfind("enum ", 0) == 0) {  // GCC: an enum without negative enumerators is unsigned int
    bytes = 4;
    is_signed = false;
    return true;
  }
  // The kernel's types on its LP64 targets; `char` is unsigned (the kernel builds with
  // -funsigned-char since 6.2). Typedefs as include/linux/types.h and the uapi posix_types
  // define them.
  static const struct { const char* name; int bytes; bool is_signed; } kTypes[] = {
      {"char", 1, false},          {"unsigned char", 1, false}, {"signed char", 1, true},
      {"bool", 1, false},          {"_Bool", 1, false},         {"u8", 1, false},
      {"__u8", 1, false},          {"uint8_t", 1, false},       {"s8", 1, true},
      {"__s8", 1, true},           {"int8_t", 1, true},         {"short", 2, true},
      {"short int", 2, true},      {"signed short", 2, true},   {"unsigned short", 2, false},
      {"unsigned short int", 2, false}, {"u16", 2, false},      {"__u16", 2, false},
      {"uint16_t", 2, false},      {"s16", 2, true},            {"__s16", 2, true},
      {"int16_t", 2, true},        {"umode_t", 2, false},       {"int", 4, true},
      {"signed", 4, true},         {"signed int", 4, true},     {"unsigned", 4, false},
      {"unsigned int", 4, false},  {"uint", 4, false},          {"u32", 4, false},
      {"__u32", 4, false},         {"uint32_t", 4, false},      {"s32", 4, true},
      {"__s32", 4, true},          {"int32_t", 4, true},        {"pid_t", 4, true},
      {"uid_t", 4, false},         {"gid_t", 4, false},         {"qid_t", 4, false},
      {"dev_t", 4, false},         {"gfp_t", 4, false},         {"clockid_t", 4, true},
      {"timer_t", 4, true},        {"mqd_t", 4, true},          {"key_t", 4, true},
      {"key_serial_t", 4, true},   {"rwf_t", 4, true},          {"long", 8, true},
      {"long int", 8, true},       {"long long", 8, true},      {"unsigned long", 8, false},
      {"unsigned long long", 8, false}, {"u64", 8, false},      {"__u64", 8, false},
      {"uint64_t", 8, false},      {"s64", 8, true},            {"__s64", 8, true},
      {"int64_t", 8, true},        {"size_t", 8, false},        {"ssize_t", 8, true},
      {"loff_t", 8, true},         {"off_t", 8, true},          {"time64_t", 8, true},
  };
  for (const auto& k : kTypes)
    if (t == k.name) {
      bytes = k.bytes;
      is_signed = k.is_signed;
      return true;
    }
  return false;
}

bool parse_trace_format(const std::string& text, TraceEvent& ev) {
  std::istringstream in(text);
  std::string line;
  bool have_name = false;
  while (std::getline(in, line)) {
    if (line.rfind("name:", 0) == 0) {
      ev.event = trim(line.substr(5));
      have_name = true;
      continue;
    }
    if (line.rfind("ID:", 0) == 0) {
      ev.id = std::atol(line.c_str() + 3);
      continue;
    }
    size_t f = line.find("field:");
    if (f == std::string::npos) continue;
    size_t semi = line.find(';', f);
    if (semi == std::string::npos) continue;
    std::string decl = trim(line.substr(f + 6, semi - f - 6));
    TraceField fld;
    std::string arr;
    if (!decl.empty() && decl.back() == ']') {
      size_t lb = decl.rfind('[');
      if (lb != std::string::npos) {
        arr = decl.substr(lb);
        decl = trim(decl.substr(0, lb));
      }
    }
    size_t nb = decl.size();
    while (nb > 0 && (std::isalnum(static_cast<unsigned char>(decl[nb - 1])) || decl[nb - 1] == '_'))
      --nb;
    fld.name = decl.substr(nb);
    fld.type = trim(decl.substr(0, nb)) + arr;
    fld.offset = field_int(line, "offset:");
    fld.size = field_int(line, "size:");
    fld.is_signed = field_int(line, "signed:") != 0;
    fld.value_size = fld.size;
    fld.value_signed = fld.is_signed;
    int bytes = 0;
    bool c_signed = false;
    // Only a slot wider than its type is reinterpreted: otherwise the format's own signed:
    // is the kernel's truth (char is signed or not by the kernel's build).
    if (kernel_c_integer(fld.type, bytes, c_signed) && bytes < fld.size && fld.size <= 8) {
      fld.value_size = bytes;
      fld.value_signed = c_signed;
    }
    if (!fld.name.empty()) ev.fields.push_back(std::move(fld));
  }
  return have_name && ev.id >= 0;
}

bool trace_field_visible(const TraceField& f) {
  return f.name.rfind("common_", 0) != 0 && f.name != "__syscall_nr";
}

std::string trace_field_type_text(const TraceField& f) {
  std::string t = f.type;
  if (t.rfind("__data_loc ", 0) == 0 || t.rfind("__rel_loc ", 0) == 0) {
    std::string inner = trim(t.substr(t.find(' ') + 1));
    if (inner.rfind("char", 0) == 0) return "string";
    inner.erase(std::remove(inner.begin(), inner.end(), ' '), inner.end());
    return inner;
  }
  if (t.find('[') != std::string::npos) {
    std::string out;
    // "unsigned char[6]" -> "unsigned char[6]": drop only spaces before '['
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == ' ' && i + 1 < t.size() && t[i + 1] == '[') continue;
      out += t[i];
    }
    return out;
  }
  if (t.find('*') != std::string::npos) {
    // Split "const char *" into base and pointer stars; stap writes "char const*".
    size_t star = t.find('*');
    std::string base = trim(t.substr(0, star));
    std::string stars;
    for (char c : t.substr(star))
      if (c != ' ') stars += c;
    bool is_const = false;
    if (base.rfind("const ", 0) == 0) {
      is_const = true;
      base = trim(base.substr(6));
    }
    if (base.size() > 6 && base.compare(base.size() - 6, 6, " const") == 0) {
      is_const = true;
      base = trim(base.substr(0, base.size() - 6));
    }
    if (base.rfind("volatile ", 0) == 0) base = trim(base.substr(9)) + " volatile";
    return base + (is_const ? " const" : "") + stars;
  }
  return "long";
}

std::string find_tracefs(std::string& why) {
  if (const char* env = std::getenv("UKSTAP_TRACEFS"); env && *env) {
    if (is_dir(std::string(env) + "/events")) return env;
    why = std::string("UKSTAP_TRACEFS=") + env + " has no events/ directory";
    return "";
  }
  const char* candidates[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
  for (const char* c : candidates)
    if (is_dir(std::string(c) + "/events")) return c;
  if (geteuid() == 0) {
    if (is_dir("/sys/kernel/tracing") &&
        mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0 &&
        is_dir("/sys/kernel/tracing/events"))
      return "/sys/kernel/tracing";
    int err = errno;
    // Older layouts: tracefs appears under debugfs once debugfs is mounted.
    if (is_dir("/sys/kernel/debug") && !exists("/sys/kernel/debug/tracing") &&
        mount("nodev", "/sys/kernel/debug", "debugfs", 0, nullptr) == 0 &&
        is_dir("/sys/kernel/debug/tracing/events"))
      return "/sys/kernel/debug/tracing";
    why = std::string("tracefs is not mounted and mounting it on /sys/kernel/tracing failed (") +
          std::strerror(err) + ")";
  } else if (::access("/sys/kernel/tracing", F_OK) == 0 &&
             ::access("/sys/kernel/tracing", R_OK | X_OK) != 0) {
    // Mounted but closed to this user (mode 0700): tracepoints need root.
    why = "reading tracepoints needs root: /sys/kernel/tracing is not readable by uid " +
          std::to_string(::geteuid()) + " (" + std::strerror(errno) + ")";
  } else {
    why = "tracefs is not mounted (tried /sys/kernel/tracing and /sys/kernel/debug/tracing); "
          "run as root, or mount it: mount -t tracefs nodev /sys/kernel/tracing";
  }
  return "";
}

const std::vector<std::string>& Tracefs::systems() {
  if (!have_systems_) {
    have_systems_ = true;
    for (auto& d : subdirs(root_ + "/events"))
      if (d != "ftrace") systems_.push_back(d);  // ftrace's internal events cannot be attached
  }
  return systems_;
}

const std::vector<std::string>& Tracefs::events(const std::string& system) {
  auto it = events_.find(system);
  if (it != events_.end()) return it->second;
  return events_[system] = subdirs(root_ + "/events/" + system);
}

const TraceEvent* Tracefs::event(const std::string& system, const std::string& event) {
  auto key = std::make_pair(system, event);
  if (auto it = formats_.find(key); it != formats_.end()) return it->second.get();
  if (failed_.count(key)) return nullptr;
  std::ifstream in(root_ + "/events/" + system + "/" + event + "/format");
  std::stringstream ss;
  ss << in.rdbuf();
  auto ev = std::make_unique<TraceEvent>();
  ev->system = system;
  if (!in || !parse_trace_format(ss.str(), *ev)) {
    failed_[key] = true;
    return nullptr;
  }
  ev->event = event;
  return (formats_[key] = std::move(ev)).get();
}

bool kprobes_available() {
  if (exists("/sys/bus/event_source/devices/kprobe")) return true;
  std::string why;
  std::string root = find_tracefs(why);
  if (!root.empty() && exists(root + "/kprobe_events")) return true;
  // Without tracefs, /proc/kallsyms still tells: register_kprobe exists only with CONFIG_KPROBES.
  if (root.empty()) {
    std::ifstream in("/proc/kallsyms");
    std::string line;
    while (std::getline(in, line))
      if (line.size() > 17 && line.compare(line.size() - 16, 16, " register_kprobe") == 0)
        return true;
  }
  return false;
}

}  // namespace ukstap::probes
