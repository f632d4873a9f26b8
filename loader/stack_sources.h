// Where pass 5's stacks and symbols come from, set up before anything is attached: for user
// stacks the task finder and VMA tracker (vma-tracker/), the libdwfl symbolizer, the CFI unwind
// tables (unwind_tables.h) and their printer; for kernel stacks /proc/kallsyms and its printer;
// once the BPF object is loaded, the maps they share with it (the tables, the VMA mirror, the
// ustack_id()/kstack_id() stores) and the ring-buffer positions that bound how long an exited
// process's mappings are kept. Only what the script uses is started.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/stp_records.h"

struct bpf_object;

namespace ukstap {
class Session;
namespace codegen {
struct ModuleInfo;
}
namespace vma {
class Tracker;
}
namespace sym {
class Symbolizer;
}
namespace ksym {
class Kallsyms;
}

namespace loader {

class Output;
class UserStacks;
class KernelStacks;
class UnwindTables;
class DeferredUnwind;
class StackIds;

class StackSources {
 public:
  StackSources(Session& s, const codegen::ModuleInfo& m);
  StackSources(const StackSources&) = delete;
  StackSources& operator=(const StackSources&) = delete;
  ~StackSources();

  // The task finder and VMA tracker start before anything is attached and before the -c command
  // execs (`target_path`, "" for none), so every mapping a stack can land in is seen; the
  // unwind tables of the files known to run are built now. False with one line in `why`.
  bool start_user(pid_t target_pid, const std::string& target_path, Output& out, std::string& why);
  // /proc/kallsyms; warnings on stderr when it cannot be read or hides its addresses.
  void start_kernel(Output& out);
  // Before the object is loaded: the CFI row pool's slots, from the memory budget.
  void size_row_pool(struct bpf_object* obj);
  // After the object is loaded: the stack-id maps, the syscall glue frame's range in `session`,
  // the unwind tables and the VMA mirror.
  void attach(struct bpf_object* obj, volatile struct stp_session* session);
  // The VMA tracker's id of the [vdso] (0 without user stacks): run_config.h.
  uint32_t vdso_file_id();
  // Whose files get unwind tables (STP_TABLES_*, common/stp_records.h): the in-kernel walk
  // waits for those (a USNAP copy) instead of guessing by frame pointers.
  uint32_t tables_loading() const;
  // Reads the tracker's side-band rings (they must not overflow): each event-loop round.
  void drain();
  // Before the ring buffer goes: the tracker stops reading its positions.
  void release_ring();

  vma::Tracker* tracker() const { return tracker_.get(); }
  UnwindTables* tables() const { return tables_.get(); }
  DeferredUnwind* deferred() const { return deferred_.get(); }
  UserStacks* user_stacks() const { return ustacks_.get(); }
  KernelStacks* kernel_stacks() const { return kstacks_.get(); }
  const ksym::Kallsyms* kallsyms() const { return kallsyms_.get(); }

 private:
  std::vector<std::string> probe_points() const;
  void open_stack_ids(struct bpf_object* obj);
  void retain_exited_until_read(struct bpf_object* obj);
  void warn_unknown_syscall_glue(struct bpf_object* obj);

  Session& s_;
  const codegen::ModuleInfo& m_;
  std::unique_ptr<vma::Tracker> tracker_;       // only for scripts using user stacks/symbols
  std::unique_ptr<sym::Symbolizer> symbolizer_;
  std::unique_ptr<UserStacks> ustacks_;
  std::unique_ptr<UnwindTables> tables_;
  std::unique_ptr<DeferredUnwind> deferred_;    // walks finished over a stack copy
  bool system_wide_ = false;                    // the tracker follows every process
  std::unique_ptr<ksym::Kallsyms> kallsyms_;     // only for scripts using kernel stacks/symbols
  std::unique_ptr<KernelStacks> kstacks_;
  std::unique_ptr<StackIds> ustack_ids_, kstack_ids_;  // ustack_id()/kstack_id() maps
  std::unique_ptr<StackIds> ubt_ids_;  // stp_ubtstacks: ubacktrace() keys kept as ids
  std::pair<void*, size_t> ring_pages_{nullptr, 0};    // the ring's positions (read-only)
};

}  // namespace loader
}  // namespace ukstap
