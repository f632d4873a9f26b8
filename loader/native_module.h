// The native half of a module at pass 5: module.so (begin, end, error and interval-timer probes,
// run in ukstap's own process) dlopened from the file pass 4 verified, bound through its ABI
// (native_abi.h), given the run configuration, the BPF maps it shares with the kernel side and
// its output sink; then its probes are run on the loader's thread.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/stp_records.h"
#include "loader/native_abi.h"
#include "probes/probe_kind.h"

struct bpf_object;

namespace ukstap {
namespace codegen {
struct ModuleInfo;
struct ProbeInfo;
}  // namespace codegen

namespace loader {

class NativeModule {
 public:
  NativeModule() = default;
  NativeModule(const NativeModule&) = delete;
  NativeModule& operator=(const NativeModule&) = delete;
  ~NativeModule() { close(); }

  // dlopens `path` (through the descriptor whose bytes module.sum vouches for) and binds its
  // ABI. False with the whole error message in `why`.
  bool open(const std::string& path, std::string& why);
  bool is_open() const { return so_ != nullptr; }
  // Records the module writes go to `sink(ctx, data, len)`.
  void set_output(stp_native_output_fn sink, void* ctx) { api_.set_output(sink, ctx); }
  // The module's copy of the run configuration (run_config.h): the same struct the BPF side got.
  void configure(const struct stp_config& config) { api_.configure(&config); }
  // Every map of `obj` by name and fd, with its shared memory when it is mmapable: the session
  // page `session` (already mapped), libbpf's own mapping of .data/.bss, else a new mapping,
  // appended to `mmaps` (the caller unmaps them after close()).
  void share_maps(struct bpf_object* obj, void* session,
                  std::vector<std::pair<void*, size_t>>& mmaps);
  // Key layouts for sorted foreach, then the global initializers (global x = 5).
  void initialize(const codegen::ModuleInfo& m);
  // Runs native probe `p`.
  void call(const codegen::ProbeInfo& p);
  // Runs native timer probe `p` (probefunc() is "" for a timer).
  void call_timer(const codegen::ProbeInfo& p);
  // Runs procfs probe `p` (loader/procfs_files.h) with $value = `written`; its $value after.
  std::string call_procfs(const codegen::ProbeInfo& p, const std::string& written);
  // Runs native input probe `p` with `text` (a character or a line read from stdin).
  void call_input(const codegen::ProbeInfo& p, const char* text);
  void close();
  // Run before every native probe, which may read the shared maps (symbol_key_merge.h).
  void set_before_read(std::function<void()> f) { before_read_ = std::move(f); }

 private:
  void before_read() { if (before_read_) before_read_(); }
  std::function<void()> before_read_;
  void* so_ = nullptr;
  NativeApi api_;
};

// The native probes of a kind (begin, end, error) in the order they run: by priority, then as
// written.
std::vector<const codegen::ProbeInfo*> native_probes(const codegen::ModuleInfo& m,
                                                     probes::ProbeKind kind);

}  // namespace loader
}  // namespace ukstap
