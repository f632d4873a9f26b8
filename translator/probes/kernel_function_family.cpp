// kernel.function("F")[.call|.return], kprobe.function("F")[.return] and
// module("M").function("F")[.call|.return]: functions the kernel's BTF declares (a FUNC record
// with its prototype: parameter names and types), without debuginfo. F may be a glob
// ("vfs_*"). A function is attachable when the kernel has it as a text symbol
// (/proc/kallsyms: not inlined away) and, where ftrace says (available_filter_functions,
// readable), ftrace can patch it: what fentry needs and kprobes on function entry use.
// Functions whose arguments do not all sit in the six argument registers (more than six, a
// struct passed by value, varargs) are left out of a wildcard and refused by name.
// `.call` is SystemTap's "not an inline instance": BTF lists only real functions, so it is
// the same as the plain point. F@FILE:LINE needs line tables (debuginfo): refused.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>

#include "btf/kernel_btf.h"
#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/internal.h"
#include "probes/kernel_function_support.h"
#include "probes/tracefs.h"

namespace ukstap::probes {

namespace {

// The functions one BTF object (vmlinux or a module's split BTF) declares, by name.
struct FunctionIndex {
  struct btf* btf = nullptr;  // owned for modules; vmlinux's is KernelBtf's
  bool owned = false;
  std::map<std::string, uint32_t> funcs;  // name -> FUNC id
  ~FunctionIndex() {
    if (owned) btf__free(btf);
  }
};

void index_functions(FunctionIndex& ix, uint32_t first) {
  uint32_t n = btf__type_cnt(ix.btf);
  for (uint32_t id = first; id < n; ++id) {
    const struct btf_type* t = btf__type_by_id(ix.btf, id);
    if (!btf_is_func(t)) continue;
    const char* nm = btf__name_by_offset(ix.btf, t->name_off);
    if (nm && *nm) ix.funcs.emplace(nm, id);
  }
}

const btf::KernelBtf& vmlinux_btf(const Token* tok) {
  std::string why;
  const btf::KernelBtf* k = btf::KernelBtf::get(why);
  if (!k) throw SemanticError("kernel.function probes are typed from the kernel's BTF: " + why, tok);
  return *k;
}

// "" is vmlinux; else the module's /sys/kernel/btf/<module>, split over vmlinux's.
const FunctionIndex& function_index(const std::string& module, const Token* tok) {
  static std::map<std::string, std::unique_ptr<FunctionIndex>> cache;
  auto it = cache.find(module);
  if (it != cache.end()) return *it->second;
  const btf::KernelBtf& k = vmlinux_btf(tok);
  auto ix = std::make_unique<FunctionIndex>();
  if (module.empty()) {
    ix->btf = k.raw();
    index_functions(*ix, 1);
  } else {
    ix->btf = btf__parse_split(("/sys/kernel/btf/" + module).c_str(), k.raw());
    if (!ix->btf) throw SemanticError("module '" + module + "' has no BTF (/sys/kernel/btf/" + module + ")", tok);
    ix->owned = true;
    index_functions(*ix, btf__type_cnt(k.raw()));
  }
  return *(cache[module] = std::move(ix));
}

// The loaded modules that have BTF (/sys/kernel/btf/*), sorted.
std::vector<std::string> btf_modules() {
  std::vector<std::string> out;
  if (DIR* d = ::opendir("/sys/kernel/btf")) {
    while (struct dirent* e = ::readdir(d))
      if (e->d_name[0] != '.' && std::string(e->d_name) != "vmlinux") out.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Attachable names per module ("" vmlinux): ftrace's list when readable, else kallsyms' text
// symbols. `ftrace` says which one it is.
struct Attachable {
  std::map<std::string, std::unordered_set<std::string>> by_module;
  bool ftrace = false;
  bool known = false;  // neither file was readable: every BTF function is taken
};

// The module a "... [module]" line names after position `from` ("" for vmlinux).
std::string bracketed_module(const std::string& line, size_t from) {
  if (from == std::string::npos) return "";
  size_t lb = line.find('[', from), rb = line.find(']', from);
  return lb != std::string::npos && rb != std::string::npos ? line.substr(lb + 1, rb - lb - 1) : "";
}

const Attachable& attachable() {
  static Attachable a;
  static bool read = false;
  if (read) return a;
  read = true;
  // available_filter_functions: "name" or "name [module]"; kallsyms: "addr t name [module]".
  // The tracefs mount as every other family finds it (/sys/kernel/tracing or under debugfs).
  std::string why, root = find_tracefs(why);
  std::ifstream ff(root.empty() ? std::string() : root + "/available_filter_functions");
  std::string line;
  if (ff && std::getline(ff, line)) {
    a.ftrace = a.known = true;
    do {
      size_t sp = line.find(' ');
      a.by_module[bracketed_module(line, sp)].insert(line.substr(0, sp));
    } while (std::getline(ff, line));
    return a;
  }
  std::ifstream ks("/proc/kallsyms");
  while (std::getline(ks, line)) {
    size_t s1 = line.find(' ');
    if (s1 == std::string::npos || s1 + 3 > line.size()) continue;
    char type = line[s1 + 1];
    if (type != 't' && type != 'T') continue;
    size_t s2 = line.find_first_of(" \t", s1 + 3);
    std::string name = line.substr(s1 + 3, s2 == std::string::npos ? std::string::npos : s2 - s1 - 3);
    a.by_module[bracketed_module(line, s2)].insert(name);
    a.known = true;
  }
  return a;
}

bool is_attachable(const std::string& module, const std::string& name) {
  const Attachable& a = attachable();
  if (!a.known) return true;
  auto it = a.by_module.find(module);
  return it != a.by_module.end() && it->second.count(name);
}

// A module's type as vmlinux's BTF names it: the access machinery and the generated C
// (vmlinux.h) know only vmlinux's types. A type of the module's own reads as a number.
uint32_t vmlinux_type(const btf::KernelBtf& k, struct btf* b, uint32_t id) {
  uint32_t base = btf__type_cnt(k.raw());
  if (id < base) return id;
  static uint32_t ulong = 0;
  if (!ulong) {
    int u = btf__find_by_name_kind(k.raw(), "long unsigned int", BTF_KIND_INT);
    ulong = u > 0 ? u : 0;
  }
  (void)b;
  return ulong;
}

// The function's parameters and return type; "" or why it cannot be probed.
std::string read_prototype(const btf::KernelBtf& k, struct btf* b, uint32_t func_id,
                           KernelFunctionPoint& kf) {
  const struct btf_type* proto = btf__type_by_id(b, btf__type_by_id(b, func_id)->type);
  if (!proto || !btf_is_func_proto(proto)) return "its BTF has no prototype";
  const struct btf_param* p = btf_params(proto);
  int n = btf_vlen(proto);
  if (n > 0 && p[n - 1].type == 0 && p[n - 1].name_off == 0) return "it takes variable arguments";
  if (n > 6) return "it takes " + std::to_string(n) + " arguments (at most 6 are in registers)";
  for (int i = 0; i < n; ++i) {
    const char* nm = btf__name_by_offset(b, p[i].name_off);
    uint32_t t = btf__resolve_type(b, p[i].type) > 0 ? (uint32_t)btf__resolve_type(b, p[i].type) : p[i].type;
    const struct btf_type* tt = btf__type_by_id(b, t);
    if (tt && (btf_is_composite(tt) || btf_is_float(tt)))
      return std::string("its parameter '") + (nm ? nm : "?") + "' is passed by value as " +
             (btf_is_float(tt) ? "a float" : "a struct");
    if (tt && btf_is_int(tt) && tt->size > 8) return "a parameter is wider than a register";
    kf.params.push_back({nm && *nm ? nm : "arg" + std::to_string(i + 1), vmlinux_type(k, b, p[i].type)});
  }
  kf.return_type = proto->type ? vmlinux_type(k, b, proto->type) : 0;
  return "";
}

// -L: "$file:struct file*" per parameter, and $return in a .return probe.
void add_target_vars(const btf::KernelBtf& k, const KernelFunctionPoint& kf, ResolvedPoint& rp) {
  for (const auto& prm : kf.params) rp.target_vars.push_back({"$" + prm.name, k.describe(prm.type_id)});
  if (kf.is_return && kf.return_type) rp.target_vars.push_back({"$return", k.describe(kf.return_type)});
}

void build_kernel_function(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  std::string spec = m.str("function");
  const Token* tok = m.tok("function");
  if (spec.empty()) throw SemanticError("empty kernel function name", tok);
  if (spec.find('@') != std::string::npos)
    throw SemanticError("'" + spec + "': FUNCTION@FILE[:LINE] needs the kernel's debuginfo; ukstap "
                            "resolves kernel functions from BTF, which has no source locations "
                            "(write the function's name alone)",
                        tok);
  bool is_module = m.has("module");
  std::string mod_pat = is_module ? m.str("module") : "";
  const btf::KernelBtf& k = vmlinux_btf(tok);
  std::vector<std::string> modules;
  if (!is_module) {
    modules.push_back("");
  } else {
    if (mod_pat.empty()) throw SemanticError("empty module name", m.tok("module"));
    for (auto& mod : btf_modules())
      if (glob_match(mod_pat, mod)) modules.push_back(mod);
    if (modules.empty()) {
      if (has_glob(mod_pat)) return;
      std::string similar = suggest_similar(mod_pat, btf_modules());
      throw SemanticError("no module '" + mod_pat + "' with BTF is loaded (/sys/kernel/btf/" + mod_pat + ")" +
                              (similar.empty() ? "" : " (similar: " + similar + ")"),
                          m.tok("module"));
    }
  }
  bool wildcard = has_glob(spec);
  std::string refused;  // an exact name that exists but cannot be probed
  size_t before = out.size();
  for (const auto& mod : modules) {
    const FunctionIndex& ix = function_index(mod, tok);
    auto consider = [&](const std::string& name, uint32_t id) {
      if (!is_attachable(mod, name)) {
        if (!wildcard)
          refused = "kernel function '" + name + "' cannot be probed: it is not in " +
                    (attachable().ftrace ? "ftrace's available_filter_functions (notrace, or inlined)"
                                         : "/proc/kallsyms (inlined everywhere)");
        return;
      }
      KernelFunctionPoint kf;
      kf.function = name;
      kf.module = mod;
      kf.is_return = m.has("return");
      std::string why = read_prototype(k, ix.btf, id, kf);
      if (!why.empty()) {
        if (!wildcard) refused = "kernel function '" + name + "' cannot be probed: " + why;
        return;
      }
      // The kernel is asked at pass 3 (choose_kernel_function_mechanisms); a forced one now.
      if (std::string forced = forced_kernel_function_mechanism(s); !forced.empty()) {
        kf.mechanism = forced == "kprobe" ? KernelFunctionPoint::Mechanism::Kprobe
                                          : KernelFunctionPoint::Mechanism::Fentry;
        kf.mechanism_chosen = true;
      }
      auto comps = concrete_components(m);
      for (auto& c : comps)
        if (c.functor == "function") c.str = name;
        else if (c.functor == "module") c.str = mod;
      ResolvedPoint rp;
      rp.point = make_point(s, *m.pp, comps);
      add_target_vars(k, kf, rp);
      rp.family = std::move(kf);
      out.push_back(std::move(rp));
    };
    if (!wildcard) {
      auto it = ix.funcs.find(spec);
      if (it != ix.funcs.end()) consider(it->first, it->second);
      continue;
    }
    for (const auto& [name, id] : ix.funcs)
      if (glob_match(spec, name)) consider(name, id);
  }
  if (!refused.empty()) throw SemanticError(refused, tok);
  if (out.size() != before || wildcard) return;
  std::vector<std::string> names;
  for (const auto& mod : modules)
    for (const auto& [name, id] : function_index(mod, tok).funcs)
      if (name.size() + 7 >= spec.size() && spec.size() + 7 >= name.size()) names.push_back(name);
  std::string similar = suggest_similar(spec, names);
  throw SemanticError("no kernel function '" + spec + "' in " +
                          (is_module ? "module " + mod_pat + "'s" : std::string("the kernel's")) +
                          " BTF" + (similar.empty() ? "" : " (similar: " + similar + ")"),
                      tok);
}

}  // namespace

void add_kernel_function_patterns(std::vector<Pattern>& out) {
  using A = ArgKind;
  for (const char* tail : {"", "call", "return"}) {
    std::vector<PatternComponent> kernel = {{"kernel", A::None}, {"function", A::String}};
    std::vector<PatternComponent> module = {{"module", A::String}, {"function", A::String}};
    std::vector<PatternComponent> kprobe = {{"kprobe", A::None}, {"function", A::String}};
    if (*tail) {
      kernel.push_back({tail, A::None});
      module.push_back({tail, A::None});
      kprobe.push_back({tail, A::None});
    }
    out.push_back({kernel, build_kernel_function});
    out.push_back({module, build_kernel_function});
    if (std::string(tail) != "call") out.push_back({kprobe, build_kernel_function});
  }
}

}  // namespace ukstap::probes
