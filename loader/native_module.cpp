#include "loader/native_module.h"

#include <dlfcn.h>
#include <sys/mman.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cstring>

#include "codegen/module_info.h"
#include "loader/bpf_module.h"
#include "loader/module_sum.h"

namespace ukstap::loader {

bool NativeModule::open(const std::string& path, std::string& why) {
  VerifiedObject verified;  // as for the BPF object: dlopen loads the bytes just checked
  std::string vwhy;
  if (!verified.open(path, vwhy)) {
    why = "cannot load the native module: " + vwhy;
    return false;
  }
  so_ = ::dlopen(verified.proc_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!so_) {
    why = std::string("cannot load the native module: ") + ::dlerror();
    return false;
  }
  std::string bwhy;
  if (!api_.bind(so_, bwhy)) {
    why = "the native module " + path + " is not a ukstap module: " + bwhy;
    return false;
  }
  return true;
}

void NativeModule::share_maps(struct bpf_object* obj, void* session,
                              std::vector<std::pair<void*, size_t>>& mmaps) {
  struct bpf_map* map;
  bpf_object__for_each_map(map, obj) {
    void* shared = nullptr;
    size_t vsize = bpf_map__value_size(map);
    if (!(bpf_map__map_flags(map) & BPF_F_MMAPABLE)) {
      // not shared by mmap
    } else if (std::strcmp(bpf_map__name(map), kSessionMap) == 0) {
      shared = session;
    } else {
      size_t sz = 0;
      const char* mname = bpf_map__name(map);
      if (std::strchr(mname, '.')) {
        shared = const_cast<void*>(bpf_map__initial_value(map, &sz));  // libbpf's own mmap
      } else {
        size_t len = ((vsize * bpf_map__max_entries(map)) + 4095) & ~size_t(4095);
        void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
        if (p != MAP_FAILED) {
          shared = p;
          mmaps.push_back({p, len});
        }
      }
    }
    api_.register_map(bpf_map__name(map), bpf_map__fd(map), shared, vsize);
  }
  // the kernel reader of native probes (runtime/bpf/stp_bpf_kread.h): its fd, as a map's
  if (auto* kread = bpf_object__find_program_by_name(obj, "stp_kread_prog"))
    api_.register_map("stp_kread_prog", bpf_program__fd(kread), nullptr, 0);
}

void NativeModule::initialize(const codegen::ModuleInfo& m) {
  if (auto layout = reinterpret_cast<void (*)(const char*, const char*, int)>(::dlsym(so_, "stp_native_map_layout"))) {
    for (auto& mi : m.maps) {
      std::string kt;
      for (size_t i = 0; i < mi.key_types.size(); ++i)  // 't': a token-sized string key
        kt += i < mi.token_keys.size() && mi.token_keys[i] ? 't'
              : mi.key_types[i] == ast::Type::String     ? 's'
                                                         : 'l';
      layout(mi.bpf_name.c_str(), kt.c_str(), mi.value_type == ast::Type::String ? 1 : 0);
    }
  }
  if (auto init = reinterpret_cast<void (*)(void)>(::dlsym(so_, "stp_native_globals_init"))) init();
}

void NativeModule::call(const codegen::ProbeInfo& p) {
  before_read();
  api_.call(p.id, p.pp.c_str(), p.pn.c_str(), probe_func(p).c_str());
}

void NativeModule::call_timer(const codegen::ProbeInfo& p) {
  before_read();
  api_.call(p.id, p.pp.c_str(), p.pn.c_str());
}

std::string NativeModule::call_procfs(const codegen::ProbeInfo& p, const std::string& written) {
  // runtime/native/stp_native_procfs.h: in every module that has a procfs probe.
  using Begin = int (*)(unsigned long, const char*, unsigned long);
  using Value = const char* (*)(unsigned long*);
  auto begin = reinterpret_cast<Begin>(::dlsym(so_, "stp_native_procfs_begin"));
  auto value = reinterpret_cast<Value>(::dlsym(so_, "stp_native_procfs_value"));
  auto* pf = p.family.get<probes::ProcfsPoint>();
  if (!begin || !value || !pf || begin(static_cast<unsigned long>(pf->maxsize), written.data(), written.size()) != 0)
    return "";
  before_read();
  api_.call(p.id, p.pp.c_str(), p.pn.c_str());
  unsigned long len = 0;
  const char* v = value(&len);
  return std::string(v, len);
}

void NativeModule::call_input(const codegen::ProbeInfo& p, const char* text) {
  if (!api_.set_input(text)) return;
  before_read();
  api_.call(p.id, p.pp.c_str(), p.pn.c_str());
  api_.set_input("");
}

void NativeModule::close() {
  if (so_) ::dlclose(so_);
  so_ = nullptr;
}

std::vector<const codegen::ProbeInfo*> native_probes(const codegen::ModuleInfo& m,
                                                     probes::ProbeKind kind) {
  std::vector<const codegen::ProbeInfo*> v;
  for (auto& p : m.probes)
    if (p.native && p.family.is(kind)) v.push_back(&p);
  std::stable_sort(v.begin(), v.end(), [](const codegen::ProbeInfo* a, const codegen::ProbeInfo* b) {
    return a->priority < b->priority;
  });
  return v;
}

}  // namespace ukstap::loader
