// The loader's side of runtime/native/stp_native_abi.h: binds module.so's exports.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <string>

#include "common/stp_records.h"
#include "native/stp_native_abi.h"

namespace ukstap::loader {

constexpr const char* kRingBufMap = "stp_events";
constexpr const char* kSessionMap = "stp_session";
constexpr const char* kConfigVar = "stp_config";
constexpr const char* kProbeTableVar = "stp_probe_table";

class NativeApi {
 public:
  bool bind(void* so, std::string& why) {
    so_ = so;
    auto sym = [&](const char* name) -> void* {
      void* p = ::dlsym(so, name);
      if (!p) why = std::string("missing symbol ") + name;
      return p;
    };
    auto version = reinterpret_cast<stp_native_abi_version_fn>(sym("stp_native_abi_version"));
    set_output_ = reinterpret_cast<stp_native_set_output_fn>(sym("stp_native_set_output"));
    configure_ = reinterpret_cast<stp_native_configure_fn>(sym("stp_native_configure"));
    register_map_ = reinterpret_cast<stp_native_register_map_fn>(sym("stp_native_register_map"));
    set_probe_ = reinterpret_cast<stp_native_set_probe_fn>(sym("stp_native_set_probe"));
    if (!version || !set_output_ || !configure_ || !register_map_ || !set_probe_) return false;
    // Optional: looked for by the input probes' runner (input_reader.h), which needs it.
    set_input_ = reinterpret_cast<stp_native_set_input_fn>(::dlsym(so, "stp_native_set_input"));
    if (version() != STP_NATIVE_ABI_VERSION) {
      why = "ABI version " + std::to_string(version()) + ", expected " + std::to_string(STP_NATIVE_ABI_VERSION);
      return false;
    }
    return true;
  }
  void set_output(stp_native_output_fn fn, void* ctx) { set_output_(fn, ctx); }
  void configure(const struct stp_config* cfg) { configure_(cfg); }
  void register_map(const char* name, int fd, void* shared, unsigned long vsize) {
    register_map_(name, fd, shared, vsize);
  }
  // The text the next input probe delivers; false when the module cannot take it.
  bool set_input(const char* text) {
    if (!set_input_) return false;
    set_input_(text);
    return true;
  }
  // Runs native probe `id`; false when the module has no such probe.
  bool call(int id, const char* pp, const char* pn, const char* func = "") {
    auto it = probes_.find(id);
    if (it == probes_.end()) {
      std::string name = "stp_probe_" + std::to_string(id);
      it = probes_.emplace(id, reinterpret_cast<stp_native_probe_fn>(::dlsym(so_, name.c_str()))).first;
    }
    if (!it->second) return false;
    set_probe_(pp, pn, func);
    it->second(nullptr);
    return true;
  }

 private:
  void* so_ = nullptr;
  stp_native_set_output_fn set_output_ = nullptr;
  stp_native_configure_fn configure_ = nullptr;
  stp_native_register_map_fn register_map_ = nullptr;
  stp_native_set_probe_fn set_probe_ = nullptr;
  stp_native_set_input_fn set_input_ = nullptr;
  std::map<int, stp_native_probe_fn> probes_;
};

}  // namespace ukstap::loader
