// The generated BPF object at pass 5: opened from the file pass 4 verified (module_sum.h), its
// read-only globals written (the run configuration, the probe strings), the programs this run
// needs chosen, loaded, and — when the kernel refuses it — the verifier's answer turned into one
// line naming the probe. Every write into the object before load goes through this class; the
// attach code and the runtime's helpers (unwind tables, stack ids, the VMA mirror) look its maps
// up by name afterwards.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/stp_records.h"

struct bpf_object;
struct bpf_map;

namespace ukstap {
namespace codegen {
struct ProbeInfo;
}

namespace loader {

// ------------------------------------------------------------------------------ libbpf's messages
// libbpf's warnings and errors of this run, kept whole (a verifier log is one message of up to
// megabytes, and its last lines say why): quoted by the load and attach errors under -v. With
// -vvv its debug messages are kept too, and everything is also copied to stderr as it comes.
void capture_libbpf_messages(int verbose);
extern std::string g_libbpf_log;

// ------------------------------------------------------------------------- a load that failed
// What libbpf's messages say about a failed bpf_object__load.
struct LoadFailure {
  std::string program;  // the program libbpf names as failing to load ("stp_probe_3"), or ""
  std::string reason;   // the verifier's last complaint in that program's log, or ""
};

// Reads libbpf's messages of a failed load (libbpf 1.x wording):
//   libbpf: prog 'NAME': BPF program load failed: Permission denied
//   libbpf: prog 'NAME': -- BEGIN PROG LOAD LOG --
//   ...the verifier's log...
//   -- END PROG LOAD LOG --
//   libbpf: prog 'NAME': failed to load: -13
// Only a "load failed"/"failed to load" line names the program: other lines mention other
// programs first (under -vvv every program is named while it is prepared). The reason is the
// last line of the failing program's log that is not the verifier's summary (processed N insns,
// verification time, stack depth) nor an instruction dump line without a colon or space.
LoadFailure parse_load_failure(const std::string& libbpf_log);

// ------------------------------------------------------------------------------- the object
class BpfModule {
 public:
  BpfModule() = default;
  BpfModule(const BpfModule&) = delete;
  BpfModule& operator=(const BpfModule&) = delete;
  ~BpfModule() { close(); }

  // Opens `path` (through the descriptor whose bytes module.sum vouches for) under the object
  // name `name`. False with the whole error message in `why`.
  bool open(const std::string& path, const std::string& name, bool verbose, std::string& why);
  // A global variable of .rodata/.data/.bss, writable before load (libbpf's initial value
  // image); null when the object has no such variable.
  void* global(const char* var, size_t* size) const;
  // The run configuration into `stp_config` (run_config.h).
  void write_config(const struct stp_config& config);
  // pp(), pn() and probefunc() of each probe into `stp_probe_table` (entries of 3 * maxstr).
  void write_probe_table(const std::vector<codegen::ProbeInfo>& probes, size_t maxstr);
  // Chooses the programs to load: the kernel probes of `by_id`, the syscall dispatchers, and
  // the runtime's stack helpers when `user_stacks` (stp_cfi_inode_prog also only when
  // `inode_query`: run.cpp loads again without it when the kernel refuses it). Returns the
  // first kernel probe that is marked unavailable (a perf event this machine lacks:
  // PerfPoint::unavailable_reason), else null.
  const codegen::ProbeInfo* choose_programs(const std::map<int, const codegen::ProbeInfo*>& by_id,
                                            bool user_stacks, bool inode_query = true);
  // bpf_object__load; false with errno's value in `err` and libbpf's messages of the load in
  // g_libbpf_log.
  bool load(int& err);

  struct bpf_object* object() const { return obj_; }
  struct bpf_map* map(const char* name) const;
  void close();

 private:
  struct bpf_object* obj_ = nullptr;
};

// probefunc() of a probe: the function a uprobe is on, else "".
std::string probe_func(const codegen::ProbeInfo& p);

}  // namespace loader
}  // namespace ukstap
