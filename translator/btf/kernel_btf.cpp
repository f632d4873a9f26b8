#include "btf/kernel_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace ukstap::btf {

const KernelBtf* KernelBtf::get(std::string& why) {
  // Loaded once: the kernel's types do not change while ukstap runs, and parsing vmlinux BTF
  // (~6 MB) costs tens of milliseconds.
  static std::unique_ptr<KernelBtf> cached;
  static std::string cached_why;
  static bool tried = false;
  if (!tried) {
    tried = true;
    struct btf* b = btf__load_vmlinux_btf();
    if (b)
      cached.reset(new KernelBtf(b));
    else
      cached_why = std::string("no kernel BTF (/sys/kernel/btf/vmlinux): ") + std::strerror(errno);
  }
  why = cached_why;
  return cached.get();
}

KernelBtf::~KernelBtf() { btf__free(btf_); }

const struct btf_type* KernelBtf::type(uint32_t id) const { return btf__type_by_id(btf_, id); }

std::string KernelBtf::name(uint32_t id) const {
  const struct btf_type* t = type(id);
  if (!t || !t->name_off) return "";
  const char* n = btf__name_by_offset(btf_, t->name_off);
  return n ? n : "";
}

uint32_t KernelBtf::strip(uint32_t id) const {
  for (int guard = 0; guard < 32; ++guard) {
    const struct btf_type* t = type(id);
    if (!t) return id;
    if (btf_is_typedef(t) || btf_is_mod(t) || btf_is_type_tag(t))
      id = t->type;
    else
      return id;
  }
  return id;
}

uint32_t KernelBtf::find_type(const std::string& spelled) const {
  std::string n = spelled;
  while (!n.empty() && n.back() == ' ') n.pop_back();
  auto strip_prefix = [&](const char* p) {
    size_t len = std::strlen(p);
    if (n.compare(0, len, p) == 0) {
      n = n.substr(len);
      return true;
    }
    return false;
  };
  if (strip_prefix("struct ")) return std::max(0, btf__find_by_name_kind(btf_, n.c_str(), BTF_KIND_STRUCT));
  if (strip_prefix("union ")) return std::max(0, btf__find_by_name_kind(btf_, n.c_str(), BTF_KIND_UNION));
  // A bare name: SystemTap's @cast takes "task_struct" for struct task_struct.
  for (int kind : {BTF_KIND_STRUCT, BTF_KIND_UNION, BTF_KIND_TYPEDEF}) {
    int id = btf__find_by_name_kind(btf_, n.c_str(), kind);
    if (id > 0) return id;
  }
  return 0;
}

std::string KernelBtf::c_name(uint32_t id) const {
  if (id == 0) return "void";
  const struct btf_type* t = type(id);
  if (!t) return "";
  std::string n = name(id);
  switch (btf_kind(t)) {
    case BTF_KIND_INT:
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_FLOAT:
      return n;
    case BTF_KIND_STRUCT:
      return n.empty() ? "" : "struct " + n;
    case BTF_KIND_UNION:
      return n.empty() ? "" : "union " + n;
    case BTF_KIND_ENUM:
    case BTF_KIND_ENUM64:
      return n.empty() ? "" : "enum " + n;
    case BTF_KIND_PTR: {
      const struct btf_type* to = type(t->type);
      if (to && btf_is_func_proto(to)) return "void *";  // a function pointer reads as a number
      std::string inner = c_name(t->type);
      return inner.empty() ? "" : inner + " *";
    }
    case BTF_KIND_CONST:
    case BTF_KIND_VOLATILE:
    case BTF_KIND_RESTRICT:
    case BTF_KIND_TYPE_TAG:
      return c_name(t->type);
    default:
      return "";
  }
}

std::string KernelBtf::describe(uint32_t id) const {
  const struct btf_type* t = type(id);
  if (t && btf_is_array(t)) {
    const struct btf_array* a = btf_array(t);
    return describe(a->type) + "[" + std::to_string(a->nelems) + "]";
  }
  if (t && btf_is_ptr(t)) return describe(t->type) + "*";
  std::string c = c_name(id);
  if (!c.empty()) {
    // -L prints "struct task_struct*" as SystemTap does (no space before '*').
    while (c.size() > 2 && c.compare(c.size() - 2, 2, " *") == 0) c = c.substr(0, c.size() - 2) + "*";
    return c;
  }
  if (!t) return "?";
  if (btf_is_struct(t)) return "struct <anonymous>";
  if (btf_is_union(t)) return "union <anonymous>";
  if (btf_is_func_proto(t)) return "function";
  return "?";
}

uint32_t KernelBtf::trace_glue(const std::string& event) const {
  // One pass over the types, once: btf__find_by_name_kind is a linear search, and
  // kernel.trace("*") asks for some two thousand events. Per event the kernel has
  // __traceiter_<event> (5.10+) and __probestub_<event> (6.4+), both `(void *__data, args)`
  // with named parameters; __bpf_trace_<name> is per event class (block_rq for
  // block_rq_issue), so it serves only events that are their own class.
  if (!glue_indexed_) {
    glue_indexed_ = true;
    static const char* const prefixes[] = {"__traceiter_", "__probestub_", "__bpf_trace_"};
    std::unordered_map<std::string, uint32_t> by_prefix[3];
    uint32_t n = btf__type_cnt(btf_);
    for (uint32_t id = 1; id < n; ++id) {
      const struct btf_type* t = type(id);
      if (!btf_is_func(t)) continue;
      const char* nm = btf__name_by_offset(btf_, t->name_off);
      if (!nm || nm[0] != '_' || nm[1] != '_') continue;
      for (int i = 0; i < 3; ++i) {
        size_t len = std::strlen(prefixes[i]);
        if (std::strncmp(nm, prefixes[i], len) == 0) by_prefix[i].emplace(nm + len, id);
      }
    }
    for (auto& m : by_prefix)
      for (auto& [ev, id] : m) glue_.emplace(ev, id);  // the earlier prefix wins
  }
  auto it = glue_.find(event);
  return it == glue_.end() ? 0 : it->second;
}

std::vector<std::string> KernelBtf::member_names(uint32_t id) const {
  std::vector<std::string> out;
  const struct btf_type* t = type(strip(id));
  if (!t || !btf_is_composite(t)) return out;
  const struct btf_member* m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); ++i) {
    const char* n = btf__name_by_offset(btf_, m[i].name_off);
    if (n && *n) {
      out.push_back(n);
    } else {
      auto inner = member_names(m[i].type);
      out.insert(out.end(), inner.begin(), inner.end());
    }
  }
  return out;
}

std::vector<TraceArg> tracepoint_args(const KernelBtf& k, const std::string& event) {
  // The typedef btf_trace_<event> has the prototype too, but its parameters are anonymous;
  // the functions the kernel compiles for each event declare the same list with names.
  std::vector<TraceArg> out;
  uint32_t fn = k.trace_glue(event);
  if (!fn) return out;
  const struct btf_type* proto = k.type(k.type(fn)->type);
  if (!proto || !btf_is_func_proto(proto)) return out;
  const struct btf_param* p = btf_params(proto);
  for (int i = 1; i < btf_vlen(proto); ++i) {  // 0 is `void *__data`
    const char* n = btf__name_by_offset(k.raw(), p[i].name_off);
    if (!n || !*n) return {};
    out.push_back({n, i - 1, p[i].type});
  }
  return out;
}

}  // namespace ukstap::btf
