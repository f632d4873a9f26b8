#include "loader/bpf_module.h"
#include "driver/text_lines.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "codegen/module_info.h"
#include "loader/attach.h"
#include "loader/module_sum.h"
#include "loader/native_abi.h"

namespace ukstap::loader {

std::string g_libbpf_log;

namespace {

int g_libbpf_verbose = 0;

int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list ap) {
  if (level == LIBBPF_DEBUG && g_libbpf_verbose < 3) return 0;
  // The whole text: a verifier log is one message of up to megabytes, and its last lines say why.
  va_list again;
  va_copy(again, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  if (n > 0) {
    std::string buf(static_cast<size_t>(n) + 1, '\0');
    std::vsnprintf(buf.data(), buf.size(), fmt, again);
    buf.resize(static_cast<size_t>(n));
    g_libbpf_log += buf;
    if (g_libbpf_verbose >= 3) std::fputs(buf.c_str(), stderr);
  }
  va_end(again);
  return 0;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::string_view line : text_lines(text)) lines.emplace_back(line);
  return lines;
}

bool starts_with(const std::string& s, size_t at, const char* prefix) {
  return s.compare(at, std::strlen(prefix), prefix) == 0;
}

}  // namespace

void capture_libbpf_messages(int verbose) {
  libbpf_set_print(libbpf_print);
  g_libbpf_verbose = verbose;
}

LoadFailure parse_load_failure(const std::string& log) {
  LoadFailure f;
  const std::vector<std::string> lines = split_lines(log);
  // The failing program: the first line "...prog 'NAME': BPF program load failed..." or
  // "...prog 'NAME': failed to load...".
  for (const std::string& l : lines) {
    size_t p = l.find("prog '");
    if (p == std::string::npos) continue;
    size_t q = l.find('\'', p + 6);
    if (q == std::string::npos) continue;
    if (starts_with(l, q, "': BPF program load failed") || starts_with(l, q, "': failed to load")) {
      f.program = l.substr(p + 6, q - p - 6);
      break;
    }
  }
  // The verifier's last complaint: the log between the markers (the failing program's when it
  // is named, else the first), read from its end.
  size_t from = f.program.empty() ? std::string::npos : log.find("prog '" + f.program + "': -- BEGIN");
  size_t b = log.find("-- BEGIN PROG LOAD LOG --", from == std::string::npos ? 0 : from);
  size_t e = b == std::string::npos ? b : log.find("-- END PROG LOAD LOG --", b);
  if (b == std::string::npos || e == std::string::npos) return f;
  const std::vector<std::string> body = split_lines(log.substr(b, e - b));
  for (auto it = body.rbegin(); it != body.rend(); ++it) {
    const std::string& l = *it;
    if (l.empty() || l.rfind("processed ", 0) == 0 || l.rfind("verification time", 0) == 0 ||
        l.rfind("stack depth", 0) == 0 || l.rfind("-- ", 0) == 0 ||
        (l.find(':') == std::string::npos && l.find(' ') == std::string::npos))
      continue;
    f.reason = l;
    break;
  }
  return f;
}

bool BpfModule::open(const std::string& path, const std::string& name, bool verbose,
                     std::string& why) {
  LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = name.c_str());
  // From the file pass 4 recorded, through the descriptor whose bytes were checked (module_sum.h).
  VerifiedObject verified;
  std::string vwhy;
  if (!verified.open(path, vwhy)) {
    why = "cannot open the BPF module: " + vwhy;
    return false;
  }
  obj_ = bpf_object__open_file(verified.proc_path().c_str(), &oo);
  if (!obj_) {
    int err = errno;
    why = "cannot open the BPF module " + path + ": " + std::strerror(err) +
          (verbose ? "\n" + g_libbpf_log : "");
    return false;
  }
  return true;
}

void* BpfModule::global(const char* var, size_t* size) const {
  struct btf* btf = bpf_object__btf(obj_);
  if (!btf) return nullptr;
  struct bpf_map* map;
  bpf_object__for_each_map(map, obj_) {
    const char* mname = bpf_map__name(map);
    const char* sec = std::strchr(mname, '.');
    if (!sec) continue;
    int id = btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC);
    if (id < 0) continue;
    const struct btf_type* t = btf__type_by_id(btf, id);
    const struct btf_var_secinfo* vs = btf_var_secinfos(t);
    for (int i = 0; i < btf_vlen(t); i++, vs++) {
      const struct btf_type* vt = btf__type_by_id(btf, vs->type);
      if (std::strcmp(btf__name_by_offset(btf, vt->name_off), var) != 0) continue;
      size_t msize = 0;
      void* data = const_cast<void*>(bpf_map__initial_value(map, &msize));
      if (!data || vs->offset + vs->size > msize) return nullptr;
      *size = vs->size;
      return static_cast<char*>(data) + vs->offset;
    }
  }
  return nullptr;
}

void BpfModule::write_config(const struct stp_config& config) {
  size_t csize = 0;
  if (void* cfg = global(kConfigVar, &csize)) std::memcpy(cfg, &config, std::min(csize, sizeof config));
}

void BpfModule::write_probe_table(const std::vector<codegen::ProbeInfo>& probes, size_t maxstr) {
  size_t tsize = 0;
  char* table = static_cast<char*>(global(kProbeTableVar, &tsize));
  if (!table) return;
  size_t entry = 3 * maxstr;
  for (auto& p : probes) {
    if (p.id < 0 || (size_t)(p.id + 1) * entry > tsize) continue;
    char* e = table + p.id * entry;
    std::string func = probe_func(p);
    std::snprintf(e, maxstr, "%s", p.pp.c_str());
    std::snprintf(e + maxstr, maxstr, "%s", p.pn.c_str());
    std::snprintf(e + 2 * maxstr, maxstr, "%s", func.c_str());
  }
}

const codegen::ProbeInfo* BpfModule::choose_programs(
    const std::map<int, const codegen::ProbeInfo*>& by_id, bool user_stacks, bool inode_query) {
  // Programs: stp_probe_<id>, the syscall dispatchers (stp_sys_enter_<k>, stp_sys_exit_<k>)
  // and the runtime's own (stp_rt_*: user-stack helpers, loaded only when stacks are walked;
  // stp_cfi_inode_prog too, which is never attached but run by the loader: kernel_inode.h).
  // Kernel probes that the ModuleInfo does not know are not loaded.
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj_) {
    int id = -1;
    if (std::strncmp(bpf_program__name(prog), "stp_sys_", 8) == 0) continue;
    if (std::strcmp(bpf_program__name(prog), "stp_kread_prog") == 0) continue;  // stp_bpf_kread.h
    if (std::strncmp(bpf_program__name(prog), "stp_rt_", 7) == 0) {
      bpf_program__set_autoload(prog, user_stacks);
      continue;
    }
    if (std::strcmp(bpf_program__name(prog), "stp_cfi_inode_prog") == 0) {
      bpf_program__set_autoload(prog, user_stacks && inode_query);
      continue;
    }
    auto it = by_id.end();
    if (std::sscanf(bpf_program__name(prog), "stp_probe_%d", &id) != 1 ||
        (it = by_id.find(id)) == by_id.end() || it->second->native) {
      bpf_program__set_autoload(prog, false);
      continue;
    }
    if (it->second->family.is(probes::ProbeKind::Netfilter)) loader::prepare_netfilter_program(prog);
    if (!it->second->family.unavailable_reason().empty()) return it->second;
  }
  return nullptr;
}

bool BpfModule::load(int& err) {
  g_libbpf_log.clear();
  if (bpf_object__load(obj_) == 0) return true;
  err = errno;
  return false;
}

struct bpf_map* BpfModule::map(const char* name) const {
  return obj_ ? bpf_object__find_map_by_name(obj_, name) : nullptr;
}

void BpfModule::close() {
  if (obj_) bpf_object__close(obj_);
  obj_ = nullptr;
}

std::string probe_func(const codegen::ProbeInfo& p) {
  return p.family.function();
}

}  // namespace ukstap::loader
