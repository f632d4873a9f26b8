#include "loader/stack_sources.h"
#include "loader/interrupt.h"

#include <sys/mman.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "codegen/module_info.h"
#include "loader/attach.h"
#include "driver/session.h"
#include "loader/kstack_output.h"
#include "loader/ksym.h"
#include "loader/native_abi.h"
#include "loader/output.h"
#include "loader/stack_ids.h"
#include "loader/deferred_unwind.h"
#include "loader/unwind_tables.h"
#include "loader/ustack_output.h"
#include "loader/util.h"
#include "vma-tracker/symbolizer.h"
#include "vma-tracker/tracker.h"

namespace ukstap::loader {

StackSources::StackSources(Session& s, const codegen::ModuleInfo& m) : s_(s), m_(m) {}
StackSources::~StackSources() { release_ring(); }

// The task finder and VMA tracker start before anything is attached and before the -c command
// execs, so every mapping a stack can land in is seen (docs/DESIGN.md "VMA tracker").
bool StackSources::start_user(pid_t target_pid, const std::string& target_path, Output& out,
                              std::string& why) {
  tracker_ = std::make_unique<vma::Tracker>();
  vma::TargetSpec spec;
  spec.system_wide = target_pid == 0;
  system_wide_ = spec.system_wide;
  spec.target_pid = target_pid;
  for (auto& p : m_.probes) {  // processes running a process("PATH") probe's binary
    if (!p.family.binary_path().empty()) spec.binaries.push_back(p.family.binary_path());
  }
  tracker_->set_targets(spec);
  if (!tracker_->start(why)) {
    why = "cannot follow process mappings: " + why;
    return false;
  }
  tracker_->snapshot_existing();
  // Symbols come from local files only: libdwfl would otherwise ask debuginfod servers (Debian
  // sets DEBUGINFOD_URLS in /etc/profile.d) and block the output on the network.
  if (!std::getenv("UKSTAP_DEBUGINFOD")) ::unsetenv("DEBUGINFOD_URLS");
  symbolizer_ = std::make_unique<sym::Symbolizer>();
  // Load biases in the kernel's mirror come from the ELF program headers, as the symbolizer's.
  tracker_->set_bias_fn([this](const vma::Mapping& m) -> uint64_t {
    const sym::ElfFile* f = m.path == "[vdso]" ? symbolizer_->vdso() : symbolizer_->file(m.path, m.dev, m.ino);
    return f ? f->bias_for(m.start, m.pgoff) : m.start - m.pgoff;
  });
  // Unwind tables (issue 5): -d files, --ldd dependencies, the vDSO, the -c and process()
  // binaries before load; files targets map later as the tracker reports them.
  // UKSTAP_NO_UNWIND_TABLES=1: frame pointers only (tests of the fallback, benchmarks).
  const char* no_tables = std::getenv("UKSTAP_NO_UNWIND_TABLES");
  if (!no_tables || std::string(no_tables) != "1") {
    tables_ = std::make_unique<UnwindTables>(*tracker_, *symbolizer_, s_.opts.verbose);
    // Not after a stop signal: a table loaded now would serve no kernel walk (the probes are
    // being detached), and a cold cache's backlog of newly mapped files took seconds to compile.
    // A deferred walk still gets the tables it needs (UnwindTables::table_for).
    tracker_->set_new_mapping_fn([this](const vma::Mapping& m) {
      if (!interrupted()) tables_->on_mapping(m);
    });
    // -d files (and with --ldd their libraries); the -c program and process() binaries always
    // with their libraries: they are certain to run, and their first events come before the
    // tracker could report their mappings.
    std::vector<std::string> files = s_.opts.d_objects, own;
    if (!target_path.empty()) own.push_back(target_path);
    for (auto& p : m_.probes) {
      if (!p.family.binary_path().empty()) own.push_back(p.family.binary_path());
    }
    std::vector<std::string> deps;
    for (const std::string& f : s_.opts.ldd ? files : std::vector<std::string>{})
      for (const std::string& d : UnwindTables::ldd(f)) deps.push_back(d);
    for (const std::string& f : own) {
      files.push_back(f);
      for (const std::string& d : UnwindTables::ldd(f)) deps.push_back(d);
    }
    files.insert(files.end(), deps.begin(), deps.end());
    // -x PID: the files its code runs from now (a running process maps nothing new for its
    // first events, so waiting for the tracker would leave them without tables).
    if (s_.opts.target_pid > 0) {
      std::ifstream maps("/proc/" + std::to_string(s_.opts.target_pid) + "/maps");
      std::string line;
      while (std::getline(maps, line)) {
        std::istringstream in(line);
        std::string range, perms, off, dev, inode, path;
        in >> range >> perms >> off >> dev >> inode;
        std::getline(in >> std::ws, path);
        if (perms.size() > 2 && perms[2] == 'x' && !path.empty() && path[0] == '/' &&
            std::find(files.begin(), files.end(), path) == files.end())
          files.push_back(path);
      }
    }
    files.push_back("[vdso]");
    tables_->preload(files);
  }
  ustacks_ = std::make_unique<UserStacks>(*tracker_, *symbolizer_);
  if (tables_) {
    deferred_ = std::make_unique<DeferredUnwind>(*tracker_, *symbolizer_, *tables_);
    // -D MAXBACKTRACE=N: the walks finished in user space stop where the BPF walk does (they
    // stopped at the runtime's default 128: "depth limit" for a 512-deep stack under =600).
    deferred_->set_max_frames(
        static_cast<uint32_t>(std::strtoul(s_.define("MAXBACKTRACE", "0").c_str(), nullptr, 0)));
    ustacks_->set_deferred(deferred_.get());
  }
  ustacks_->set_target(target_pid);
  // C++ names are demangled for the person reading them (issue 17), in a script's texts and in
  // a profile alike; --no-demangle prints the ELF symbol table's names, as SystemTap does.
  ustacks_->set_demangle(s_.opts.demangle != 0);
  ustacks_->set_probe_points(probe_points());
  out.set_user_stacks(ustacks_.get());
  return true;
}

// Probe points by probe id (`<no user/kernel backtrace at PP>`).
std::vector<std::string> StackSources::probe_points() const {
  std::vector<std::string> pps;
  for (auto& p : m_.probes) {
    if (p.id < 0) continue;
    if ((size_t)p.id >= pps.size()) pps.resize(p.id + 1);
    pps[p.id] = p.pp;
  }
  return pps;
}

// Kernel symbols for kernel backtraces and symname()/symdata(): /proc/kallsyms, read once. When
// the kernel hides its addresses (kernel.kptr_restrict) or the file cannot be read, kernel frames
// print as bare addresses, after one warning. UKSTAP_KALLSYMS=FILE reads FILE instead (tests).
void StackSources::start_kernel(Output& out) {
  kallsyms_ = std::make_unique<ksym::Kallsyms>();
  std::string why;
  const char* file = std::getenv("UKSTAP_KALLSYMS");  // tests: a kallsyms-format file instead
  if (!kallsyms_->load(file && *file ? file : "/proc/kallsyms", why)) {
    s_.diag.stream() << "WARNING: no kernel symbols (" << why
                     << "): kernel addresses are printed in hex\n";
  } else if (kallsyms_->hidden()) {
    std::string kr;
    read_file("/proc/sys/kernel/kptr_restrict", kr);
    while (!kr.empty() && kr.back() == '\n') kr.pop_back();
    s_.diag.stream() << "WARNING: kernel symbol addresses are hidden (/proc/kallsyms shows zeros; "
                        "kernel.kptr_restrict = "
                     << (kr.empty() ? "?" : kr) << "): kernel addresses are printed in hex\n";
  }
  kstacks_ = std::make_unique<KernelStacks>(*kallsyms_);
  kstacks_->set_probe_points(probe_points());
  out.set_kernel_stacks(kstacks_.get());
}

// The maps ustack_id()/kstack_id() store stacks in (bpf/stp_bpf_stackid.h).
void StackSources::open_stack_ids(struct bpf_object* obj) {
  struct bpf_map* u = bpf_object__find_map_by_name(obj, "stp_ustacks");
  struct bpf_map* k = bpf_object__find_map_by_name(obj, "stp_kstacks");
  struct bpf_map* h = bpf_object__find_map_by_name(obj, "stp_ubtstacks");
  if (u && ustacks_) {
    ustack_ids_ = std::make_unique<StackIds>(bpf_map__fd(u), bpf_map__value_size(u));
    ustacks_->set_stack_ids(ustack_ids_.get());
  }
  if (h && ustacks_) {  // ubacktrace() keys kept as ids (stack_hex_tokens.h)
    ubt_ids_ = std::make_unique<StackIds>(bpf_map__fd(h), bpf_map__value_size(h));
    ustacks_->set_hex_stack_ids(ubt_ids_.get());
  }
  if (k && kstacks_) {
    kstack_ids_ = std::make_unique<StackIds>(bpf_map__fd(k), bpf_map__value_size(k));
    kstacks_->set_stack_ids(kstack_ids_.get());
  }
}

// An exited process's mappings are freed only once the event ring's reader has passed every
// record written before the process exited (vma::Retention): the ring's producer and consumer
// positions, read from the pages the kernel shares with every reader (read-only here).
void StackSources::retain_exited_until_read(struct bpf_object* obj) {
  struct bpf_map* rb = bpf_object__find_map_by_name(obj, kRingBufMap);
  if (!rb) return;
  const size_t page = (size_t)::sysconf(_SC_PAGESIZE);
  void* p = ::mmap(nullptr, 2 * page, PROT_READ, MAP_SHARED, bpf_map__fd(rb), 0);
  if (p == MAP_FAILED) return;  // then only the count bounds them
  ring_pages_ = {p, 2 * page};
  auto* consumer = static_cast<const uint64_t*>(p);
  auto* producer = reinterpret_cast<const uint64_t*>(static_cast<const char*>(p) + page);
  vma::Retention r;
  r.fence = [producer] { return __atomic_load_n(producer, __ATOMIC_ACQUIRE); };
  r.consumed = [consumer] { return __atomic_load_n(consumer, __ATOMIC_ACQUIRE); };
  tracker_->set_retention(std::move(r));
}

void StackSources::size_row_pool(struct bpf_object* obj) {
  if (!tables_) return;  // the row pool grows by chunks up to the memory budget's slots
  std::string mb = s_.define("STP_UNWIND_TABLE_MB", "512");
  char* end = nullptr;
  unsigned long long v = std::strtoull(mb.c_str(), &end, 10);
  if (mb.empty() || *end || v == 0) {
    tables_->warnings.push_back("-D STP_UNWIND_TABLE_MB=" + mb + " is not a number of MiB > 0: using 512");
    v = 512;
  }
  tables_->set_budget_mb(v);
  if (struct bpf_map* pool = bpf_object__find_map_by_name(obj, "stp_cfi_pool"))
    bpf_map__set_max_entries(pool, std::max<uint32_t>(1, tables_->pool_slots()));
}

// The frames between a dispatched syscall probe and syscall_trace_enter (or the exit path) are
// recognised by their kallsyms ranges only (stp_bpf_kstack.h): without those (no readable
// /proc/kallsyms, or kptr_restrict hiding its addresses) they stay on top of every kernel
// backtrace of a syscall probe. Said once, when the script has such probes.
void StackSources::warn_unknown_syscall_glue(struct bpf_object* obj) {
  const ksym::Symbol* run2 = kallsyms_->find("bpf_trace_run2");
  if (run2 && run2->start && run2->size) return;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    if (syscall_dispatcher_tracepoint(bpf_program__name(prog))) {
      s_.diag.stream() << "WARNING: without kernel symbols the kernel's tracing frames cannot be "
                          "recognised: a syscall probe's kernel backtrace starts with them "
                          "(bpf_trace_run2, __bpf_trace_sys_enter/exit)\n";
      return;
    }
  }
}

void StackSources::attach(struct bpf_object* obj, volatile struct stp_session* session) {
  open_stack_ids(obj);
  if (kallsyms_) {  // the dispatched syscall probes' extra glue frame (stp_bpf_kstack.h)
    warn_unknown_syscall_glue(obj);
    const char* glue[2] = {"__traceiter_sys_enter", "__traceiter_sys_exit"};
    for (int i = 0; i < 2; ++i)
      if (const ksym::Symbol* g = kallsyms_->find(glue[i]); g && g->size) {
        session->syscall_glue[2 * i] = g->start;
        session->syscall_glue[2 * i + 1] = g->start + g->size;
      }
    const char* fixed[3] = {"bpf_trace_run2", "__bpf_trace_sys_enter", "__bpf_trace_sys_exit"};
    for (int i = 0; i < 3; ++i)
      if (const ksym::Symbol* g = kallsyms_->find(fixed[i]); g && g->size) {
        session->syscall_glue_fixed[2 * i] = g->start;
        session->syscall_glue_fixed[2 * i + 1] = g->start + g->size;
      }
  }
  // The in-kernel unwinder's tables and view of the targets' executable mappings.
  if (tables_) {
    std::string twhy;
    if (!tables_->attach(obj, twhy)) tables_->warnings.push_back(twhy);
    for (const std::string& w : tables_->warnings) s_.diag.stream() << "WARNING: " << w << "\n";
    tables_->warnings.clear();
    if (s_.opts.verbose > 0)
      for (const std::string& l : tables_->report()) s_.diag.stream() << "Pass 5: " << l << "\n";
  }
  if (tracker_) {
    if (struct bpf_map* vm = bpf_object__find_map_by_name(obj, "stp_vmas")) {
      struct bpf_map* ep = bpf_object__find_map_by_name(obj, "stp_vmas_epoch");
      if (!tracker_->mirror_to(bpf_map__fd(vm), ep ? bpf_map__fd(ep) : -1))
        s_.diag.stream() << "WARNING: cannot map stp_vmas_epoch: user stacks walk without the "
                            "VMA mirror\n";
    }
    retain_exited_until_read(obj);
  }
}

uint32_t StackSources::vdso_file_id() {
  return tracker_ ? tracker_->file_id_for("[vdso]", 0, 0) : 0;
}

uint32_t StackSources::tables_loading() const {
  if (!tables_) return STP_TABLES_OFF;
  return system_wide_ ? STP_TABLES_ALL : STP_TABLES_TARGET_TREE;
}

void StackSources::drain() {
  if (tracker_) tracker_->drain();
}

void StackSources::release_ring() {
  if (tracker_) tracker_->set_retention({});  // its fences read the ring's pages, unmapped here
  if (ring_pages_.first) ::munmap(ring_pages_.first, ring_pages_.second);
  ring_pages_ = {nullptr, 0};
}

}  // namespace ukstap::loader
