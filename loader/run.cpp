// Pass 5: load module.bpf.o with libbpf, dlopen module.so, start/follow the target, run begin
// probes, attach the kernel probes, run the event loop (ring buffer, native interval timers,
// signals, target exit, exit()), then detach, drain, run end (or error) probes and report.
//
// Nothing is pinned: every attachment is a BPF link or perf event fd owned by this process, so
// however ukstap ends (SIGKILL included) the kernel detaches everything.
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "codegen/module_info.h"
#include "loader/passes.h"
#include "loader/attach.h"
#include "driver/session.h"
#include "loader/event_closer.h"
#include "loader/interrupt.h"
#include "loader/kstack_output.h"
#include "loader/ksym.h"
#include "loader/native_abi.h"
#include "loader/stack_ids.h"
#include "loader/output.h"
#include "loader/target.h"
#include "loader/unwind_tables.h"
#include "loader/ustack_output.h"
#include "loader/module_sum.h"
#include "loader/util.h"
#include "common/stp_vma.h"
#include "probes/tracefs.h"
#include "unwind/stp_unwind.h"
#include "vma-tracker/symbolizer.h"
#include "vma-tracker/tracker.h"

namespace ukstap {
namespace {

using codegen::ProbeInfo;

// ------------------------------------------------------------------------------ libbpf logging
std::string g_libbpf_log;
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

int64_t now_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// CONFIG_HZ of the running kernel from /boot/config-RELEASE, 0 when unknown.
long kernel_hz_known() {
  std::string text, rel;
  if (loader::read_file("/proc/sys/kernel/osrelease", rel)) {
    while (!rel.empty() && (rel.back() == '\n')) rel.pop_back();
    if (loader::read_file("/boot/config-" + rel, text)) {
      size_t p = text.find("\nCONFIG_HZ=");
      if (p != std::string::npos) return std::max(1L, std::atol(text.c_str() + p + 11));
    }
  }
  return 0;
}

// CONFIG_HZ (timer.profile's rate, jiffies): 250 when unknown.
long kernel_hz() {
  long hz = kernel_hz_known();
  return hz > 0 ? hz : 250;
}

// A global variable of the BPF object's .rodata/.data/.bss, writable before load (libbpf's
// initial value image); null when the object has no such variable.
void* bpf_global(struct bpf_object* obj, const char* var, size_t* size) {
  struct btf* btf = bpf_object__btf(obj);
  if (!btf) return nullptr;
  struct bpf_map* map;
  bpf_object__for_each_map(map, obj) {
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

// probefunc() of a probe: the function a uprobe is on, else "".
std::string probe_func(const ProbeInfo& p) { return p.family.function(); }

// -------------------------------------------------------------------------------- the run
class Runner {
 public:
  explicit Runner(Session& s) : s_(s), m_(*s.module), out_(s, *s.module) {}
  ~Runner() { cleanup(); }
  int run();

 private:
  int fail(const std::string& msg);
  bool load_bpf();
  bool open_native();
  bool attach_all();
  void run_native(const std::vector<const ProbeInfo*>& probes, bool even_in_error = false);
  std::vector<const ProbeInfo*> native_probes(probes::ProbeKind kind);
  void set_run_state(uint32_t state);
  void event_loop();
  void detach();
  void drain();
  void cleanup();
  std::string probe_where(const ProbeInfo& p) const;
  bool stopping() const {
    return stop_ || loader::interrupted() || out_.exit_requested || session_->exit_requested || errored() ||
           out_.write_error();
  }
  bool start_tracker();
  void start_kernel_symbols();
  void open_stack_ids();
  std::vector<std::string> probe_points() const;
  void report_user_stacks();
  void report_bpf_stats();
  void watch_output_reader();
  void retain_exited_until_read();
  int report_losses();
  bool errored() const {
    return out_.errors > max_errors_ || session_->state == STP_SESSION_ERROR;
  }

  Session& s_;
  const codegen::ModuleInfo& m_;
  std::unique_ptr<vma::Tracker> tracker_;       // only for scripts using user stacks/symbols
  std::unique_ptr<sym::Symbolizer> symbolizer_;
  std::unique_ptr<loader::UserStacks> ustacks_;
  std::unique_ptr<loader::UnwindTables> tables_;
  std::unique_ptr<ksym::Kallsyms> kallsyms_;     // only for scripts using kernel stacks/symbols
  std::unique_ptr<loader::KernelStacks> kstacks_;
  std::unique_ptr<loader::StackIds> ustack_ids_, kstack_ids_;  // ustack_id()/kstack_id() maps
  loader::Output out_;
  loader::TargetCommand target_;
  pid_t target_pid_ = 0;
  bool have_cmd_ = false;
  struct bpf_object* obj_ = nullptr;
  std::vector<struct bpf_link*> links_;
  std::vector<int> perf_fds_;
  std::vector<int> event_refs_;  // one more reference to each linked perf event (event_closer.h)
  std::string tracefs_;
  int stats_fd_ = -1;  // -vv: BPF run-time statistics enabled while this fd is open
  struct ring_buffer* rb_ = nullptr;
  void* so_ = nullptr;
  loader::NativeApi api_;
  std::vector<std::pair<void*, size_t>> mmaps_;
  int epfd_ = -1;
  bool stop_ = false;
  int max_errors_ = 0;
  std::map<int, const ProbeInfo*> by_id_;
  struct stp_config config_ {};
  struct stp_session local_session_ {};
  volatile struct stp_session* session_ = &local_session_;  // the mmapped "stp_session" map
};

int Runner::fail(const std::string& msg) {
  if (!msg.empty()) s_.diag.fatal(msg);
  if (have_cmd_) target_.abandon();
  s_.diag.pass_failed(5, "run");
  return 1;
}

std::string Runner::probe_where(const ProbeInfo& p) const {
  std::string w = "probe " + (p.pp.empty() ? p.pn : p.pp);
  if (!p.pn.empty() && p.pn != p.pp) w += " (" + p.pn + ")";
  if (!p.location.empty()) w += " at " + p.location;  // where the script wrote the probe
  return w;
}

int ring_cb(void* ctx, void* data, size_t len) {
  static_cast<loader::Output*>(ctx)->record(data, len);
  return 0;
}

void native_sink(void* ctx, const void* data, unsigned long len) {
  static_cast<loader::Output*>(ctx)->record(data, len);
}

bool Runner::load_bpf() {
  libbpf_set_print(libbpf_print);
  g_libbpf_verbose = s_.opts.verbose;
  std::string name = s_.opts.module_name.empty() ? "ukstap" : s_.opts.module_name;
  LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = name.c_str());
  // From the file pass 4 recorded, through the descriptor whose bytes were checked (module_sum.h).
  loader::VerifiedObject verified;
  std::string vwhy;
  if (!verified.open(s_.bpf_object_path, vwhy)) {
    fail("cannot open the BPF module: " + vwhy);
    return false;
  }
  obj_ = bpf_object__open_file(verified.proc_path().c_str(), &oo);
  if (!obj_) {
    int err = errno;
    fail("cannot open the BPF module " + s_.bpf_object_path + ": " + std::strerror(err) +
         (s_.opts.verbose ? "\n" + g_libbpf_log : ""));
    return false;
  }
  if (tables_) {  // the row pool holds the preloaded tables plus room for later ones
    if (struct bpf_map* rows = bpf_object__find_map_by_name(obj_, "stp_cfi_rows"))
      bpf_map__set_max_entries(rows, tables_->pool_rows());
  }
  // Read-only configuration (common/stp_records.h): stp_config and the probe strings table.
  config_.nr_cpus = libbpf_num_possible_cpus();
  config_.config_hz = (uint32_t)kernel_hz_known();
  config_.target_pid = target_pid_;
  config_.runtime_pid = ::getpid();
  config_.runtime_uid = ::getuid();
  config_.vdso_file_id = tracker_ ? tracker_->file_id_for("[vdso]", 0, 0) : 0;
  {
    struct timespec rt, bt;
    ::clock_gettime(CLOCK_REALTIME, &rt);
    ::clock_gettime(CLOCK_BOOTTIME, &bt);
    config_.realtime_offset_ns = (rt.tv_sec - bt.tv_sec) * 1000000000LL + (rt.tv_nsec - bt.tv_nsec);
  }
  size_t csize = 0;
  if (void* cfg = bpf_global(obj_, loader::kConfigVar, &csize)) {
    std::memcpy(cfg, &config_, std::min(csize, sizeof config_));
  }
  size_t tsize = 0;
  if (char* table = static_cast<char*>(bpf_global(obj_, loader::kProbeTableVar, &tsize))) {
    size_t maxstr = std::strtoul(s_.define("MAXSTRINGLEN", "0").c_str(), nullptr, 0);
    if (auto it = m_.limits.find("MAXSTRINGLEN"); it != m_.limits.end()) maxstr = std::strtoul(it->second.c_str(), nullptr, 0);
    if (!maxstr) maxstr = 128;
    size_t entry = 3 * maxstr;
    for (auto& p : m_.probes) {
      if (p.id < 0 || (size_t)(p.id + 1) * entry > tsize) continue;
      char* e = table + p.id * entry;
      std::string func = probe_func(p);
      std::snprintf(e, maxstr, "%s", p.pp.c_str());
      std::snprintf(e + maxstr, maxstr, "%s", p.pn.c_str());
      std::snprintf(e + 2 * maxstr, maxstr, "%s", func.c_str());
    }
  }
  max_errors_ = std::atoi(s_.define("MAXERRORS", "0").c_str());

  // Programs: stp_probe_<id>, the syscall dispatchers (stp_sys_enter_<k>, stp_sys_exit_<k>)
  // and the runtime's own (stp_rt_*: user-stack helpers, loaded only when stacks are walked).
  // Kernel probes that the ModuleInfo does not know are not loaded.
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj_) {
    int id = -1;
    if (std::strncmp(bpf_program__name(prog), "stp_sys_", 8) == 0) continue;
    if (std::strncmp(bpf_program__name(prog), "stp_rt_", 7) == 0) {
      bpf_program__set_autoload(prog, m_.uses_user_stacks);
      continue;
    }
    if (std::sscanf(bpf_program__name(prog), "stp_probe_%d", &id) != 1 || !by_id_.count(id) ||
        by_id_[id]->native) {
      bpf_program__set_autoload(prog, false);
      continue;
    }
    const ProbeInfo& p = *by_id_[id];
    auto* perf = p.family.get<probes::PerfPoint>();
    if (perf && !perf->unavailable_reason.empty()) {
      fail(std::string("cannot run ") + probe_where(p) + ": " + perf->unavailable_reason);
      return false;
    }
  }

  g_libbpf_log.clear();
  if (bpf_object__load(obj_) != 0) {
    int err = errno;
    // Which program did the verifier reject? libbpf says "prog 'NAME': BPF program load failed".
    std::string log = g_libbpf_log, who;
    size_t p = log.find("prog '");
    while (p != std::string::npos) {
      size_t q = log.find('\'', p + 6);
      std::string pname = log.substr(p + 6, q - p - 6);
      if (log.compare(q, 30, "': BPF program load failed") == 0 || log.find("failed to load", q) != std::string::npos || true) {
        int id = -1;
        if (std::sscanf(pname.c_str(), "stp_probe_%d", &id) == 1 && by_id_.count(id)) {
          who = probe_where(*by_id_[id]);
          break;
        }
      }
      p = log.find("prog '", q);
    }
    // The verifier's last complaint: the line before "processed N insns" or the END marker.
    std::string reason;
    size_t b = log.find("-- BEGIN PROG LOAD LOG --");
    size_t e = log.find("-- END PROG LOAD LOG --");
    if (b != std::string::npos && e != std::string::npos && e > b) {
      std::string body = log.substr(b, e - b);
      std::vector<std::string> lines;
      size_t pos = 0;
      while (pos < body.size()) {
        size_t nl = body.find('\n', pos);
        lines.push_back(body.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
        if (nl == std::string::npos) break;
        pos = nl + 1;
      }
      for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        const std::string& l = *it;
        if (l.empty() || l.rfind("processed ", 0) == 0 || l.rfind("verification time", 0) == 0 ||
            l.rfind("stack depth", 0) == 0 || l.rfind("-- ", 0) == 0 || (l.find(':') == std::string::npos && l.find(' ') == std::string::npos))
          continue;
        reason = l;
        break;
      }
    }
    std::string msg = who.empty() ? "the kernel refused the BPF module: " + std::string(std::strerror(err))
                                  : "the BPF verifier rejected " + who;
    if (!reason.empty()) msg += ": " + reason;
    s_.diag.fatal(msg);
    if (s_.opts.verbose > 0) s_.diag.stream() << g_libbpf_log;
    else s_.diag.stream() << "Rerun with -v to see the verifier log.\n";
    fail("");
    return false;
  }

  // The session state, the ring buffer.
  struct bpf_map* map;
  bpf_object__for_each_map(map, obj_) {
    if (std::strcmp(bpf_map__name(map), loader::kSessionMap) == 0 &&
        (bpf_map__map_flags(map) & BPF_F_MMAPABLE)) {
      size_t len = (bpf_map__value_size(map) + 4095) & ~size_t(4095);
      void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
      if (p == MAP_FAILED) {
        fail(std::string("cannot map the session state: ") + std::strerror(errno));
        return false;
      }
      mmaps_.push_back({p, len});
      session_ = static_cast<struct stp_session*>(p);
    }
    if (std::strcmp(bpf_map__name(map), loader::kRingBufMap) == 0) {
      rb_ = ring_buffer__new(bpf_map__fd(map), ring_cb, &out_, nullptr);
      if (!rb_) {
        fail(std::string("cannot open the ring buffer: ") + std::strerror(errno));
        return false;
      }
    }
  }
  return true;
}

bool Runner::open_native() {
  if (s_.native_object_path.empty()) return true;
  loader::VerifiedObject verified;  // as in load_bpf: dlopen loads the bytes just checked
  std::string vwhy;
  if (!verified.open(s_.native_object_path, vwhy)) {
    fail("cannot load the native module: " + vwhy);
    return false;
  }
  so_ = ::dlopen(verified.proc_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!so_) {
    fail(std::string("cannot load the native module: ") + ::dlerror());
    return false;
  }
  std::string why;
  if (!api_.bind(so_, why)) {
    fail("the native module " + s_.native_object_path + " is not a ukstap module: " + why);
    return false;
  }
  api_.set_output(native_sink, &out_);
  if (!obj_) {
    config_.nr_cpus = libbpf_num_possible_cpus();
    config_.target_pid = target_pid_;
    config_.runtime_pid = ::getpid();
    config_.runtime_uid = ::getuid();
  config_.vdso_file_id = tracker_ ? tracker_->file_id_for("[vdso]", 0, 0) : 0;
  }
  api_.configure(&config_);
  if (obj_) {
    struct bpf_map* map;
    bpf_object__for_each_map(map, obj_) {
      void* shared = nullptr;
      size_t vsize = bpf_map__value_size(map);
      if (!(bpf_map__map_flags(map) & BPF_F_MMAPABLE)) {
        // not shared by mmap
      } else if (std::strcmp(bpf_map__name(map), loader::kSessionMap) == 0) {
        shared = const_cast<stp_session*>(session_);
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
            mmaps_.push_back({p, len});
          }
        }
      }
      api_.register_map(bpf_map__name(map), bpf_map__fd(map), shared, vsize);
    }
  }
  // Key layouts for sorted foreach, then the global initializers (global x = 5).
  if (auto layout = reinterpret_cast<void (*)(const char*, const char*, int)>(::dlsym(so_, "stp_native_map_layout"))) {
    for (auto& mi : m_.maps) {
      std::string kt;
      for (auto t : mi.key_types) kt += t == ast::Type::String ? 's' : 'l';
      layout(mi.bpf_name.c_str(), kt.c_str(), mi.value_type == ast::Type::String ? 1 : 0);
    }
  }
  if (auto init = reinterpret_cast<void (*)(void)>(::dlsym(so_, "stp_native_globals_init"))) init();
  return true;
}

bool Runner::attach_all() {
  if (!obj_) return true;
  // tracefs must be mounted for tracepoint attachment by name.
  bool need_tracefs = false;
  for (auto& p : m_.probes)
    if (!p.native && p.family.is(probes::ProbeKind::Tracepoint)) need_tracefs = true;
  if (need_tracefs) {
    std::string why;
    if ((tracefs_ = probes::find_tracefs(why)).empty()) {
      fail("tracefs is not available: " + why);
      return false;
    }
  }
  // Each family's attach (loader/attach_<family>.cpp) keeps what it makes in our vectors.
  loader::AttachContext cx;
  cx.obj = obj_;
  cx.tracefs = tracefs_;
  cx.target_pid = target_pid_;
  cx.kernel_hz = kernel_hz;
  cx.links = &links_;
  cx.perf_fds = &perf_fds_;
  cx.event_refs = &event_refs_;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj_) {
    int id = -1;
    if (std::sscanf(bpf_program__name(prog), "stp_probe_%d", &id) != 1 || !by_id_.count(id)) continue;
    const ProbeInfo& p = *by_id_[id];
    if (p.native) continue;
    if (loader::interrupted()) return false;  // SIGINT/SIGTERM: stop here, detach what is attached
    if (!loader::attach_probe(cx, p, prog)) {
      int err = errno ? errno : EINVAL;
      struct rlimit nofile{};
      std::string limit = err == EMFILE && ::getrlimit(RLIMIT_NOFILE, &nofile) == 0
                              ? " (ulimit -n is " + std::to_string(nofile.rlim_cur) + ")"
                              : "";
      fail("cannot attach " + probe_where(p) + ": " + std::strerror(err) + limit +
           (s_.opts.verbose > 0 ? "\n" + g_libbpf_log : ""));
      return false;
    }
    if (s_.opts.verbose > 1) s_.diag.stream() << "attached " << probe_where(p) << "\n";
  }
  // The syscall dispatchers (runtime/bpf/stp_bpf_probes.h), after every probe has its place;
  // the runtime's programs (their SEC names say where).
  auto keep = [this](struct bpf_link* l, const std::string& what) {
    if (!l) {
      int err = errno ? errno : EINVAL;
      fail("cannot attach " + what + ": " + std::strerror(err) +
           (s_.opts.verbose > 0 ? "\n" + g_libbpf_log : ""));
      return false;
    }
    links_.push_back(l);
    return true;
  };
  bpf_object__for_each_program(prog, obj_) {
    const char* name = bpf_program__name(prog);
    const char* tp = std::strncmp(name, "stp_sys_enter_", 14) == 0  ? "sys_enter"
                     : std::strncmp(name, "stp_sys_exit_", 13) == 0 ? "sys_exit"
                                                                     : nullptr;
    errno = 0;
    if (tp && !keep(bpf_program__attach_raw_tracepoint(prog, tp),
                    std::string("the syscall dispatcher to raw tracepoint ") + tp))
      return false;
    if (std::strncmp(name, "stp_rt_", 7) == 0 && bpf_program__autoload(prog) &&
        !keep(bpf_program__attach(prog), std::string("the runtime's ") + name))
      return false;
  }
  return true;
}

std::vector<const ProbeInfo*> Runner::native_probes(probes::ProbeKind kind) {
  std::vector<const ProbeInfo*> v;
  for (auto& p : m_.probes)
    if (p.native && p.family.is(kind)) v.push_back(&p);
  std::stable_sort(v.begin(), v.end(), [](const ProbeInfo* a, const ProbeInfo* b) { return a->priority < b->priority; });
  return v;
}

void Runner::run_native(const std::vector<const ProbeInfo*>& probes, bool even_in_error) {
  for (const ProbeInfo* p : probes) {
    if (!even_in_error && errored()) break;
    api_.call(p->id, p->pp.c_str(), p->pn.c_str(), probe_func(*p).c_str());
  }
  out_.flush();
}

void Runner::set_run_state(uint32_t state) {
  session_->state = state;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void Runner::event_loop() {
  struct Timer {
    const ProbeInfo* p;
    int64_t period, rand, next;
  };
  std::vector<Timer> timers;
  std::mt19937_64 rng(now_ns());
  long hz = 0;
  for (auto& p : m_.probes) {
    auto* timer = p.family.get<probes::TimerPoint>();
    if (!p.native || !timer) continue;
    int64_t period = 0, rand = 0;
    if (timer->kind == probes::TimerPoint::Kind::Hrtimer) {
      period = timer->period_ns;
      rand = timer->randomize_ns;
    } else if (timer->kind == probes::TimerPoint::Kind::Jiffies) {
      if (!hz) hz = kernel_hz();
      period = timer->jiffies * (1000000000LL / hz);
      rand = timer->randomize_jiffies * (1000000000LL / hz);
    } else {
      continue;
    }
    if (period <= 0) continue;
    timers.push_back({&p, period, rand, now_ns() + period});
  }
  auto jitter = [&](int64_t r) -> int64_t {
    if (r <= 0) return 0;
    return (int64_t)(rng() % (uint64_t)(2 * r + 1)) - r;
  };

  while (!stopping()) {
    int64_t now = now_ns();
    // exit() in a BPF probe only sets a flag in the shared session page (no record to wake us),
    // so look at it at least every 20 ms.
    int timeout = 20;
    for (auto& t : timers) {
      int64_t ms = (t.next - now + 999999) / 1000000;
      if (ms < 0) ms = 0;
      if (ms < timeout) timeout = (int)ms;
    }
    struct epoll_event evs[4];
    int n = ::epoll_wait(epfd_, evs, 4, timeout);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < n; i++) {
      if (evs[i].data.fd == out_.fd() && (evs[i].events & (EPOLLERR | EPOLLHUP))) out_.reader_gone();
      if (evs[i].data.fd == loader::wake_fd()) loader::drain_wake_fd();  // a signal: see below
    }
    if (loader::interrupted()) stop_ = true;
    if (have_cmd_ && target_.reap()) stop_ = true;  // SIGCHLD woke us, or the 20 ms tick
    if (tracker_) tracker_->drain();  // keep the side-band rings from overflowing
    if (rb_) ring_buffer__consume(rb_);
    now = now_ns();
    for (auto& t : timers) {
      if (stopping()) break;
      if (now >= t.next) {
        api_.call(t.p->id, t.p->pp.c_str(), t.p->pn.c_str());
        t.next += t.period + jitter(t.rand);
        if (t.next < now) t.next = now + t.period;  // never try to catch up on missed ticks
      }
    }
    if (have_cmd_ && !stop_ && target_.reap()) stop_ = true;
    out_.flush();
  }
}

// The task finder and VMA tracker start before anything is attached and before the -c command
// execs, so every mapping a stack can land in is seen (docs/DESIGN.md "VMA tracker").
bool Runner::start_tracker() {
  tracker_ = std::make_unique<vma::Tracker>();
  vma::TargetSpec spec;
  spec.system_wide = target_pid_ == 0;
  spec.target_pid = target_pid_;
  for (auto& p : m_.probes) {  // processes running a process("PATH") probe's binary
    if (!p.family.binary_path().empty()) spec.binaries.push_back(p.family.binary_path());
  }
  tracker_->set_targets(spec);
  std::string why;
  if (!tracker_->start(why)) {
    fail("cannot follow process mappings: " + why);
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
    tables_ = std::make_unique<loader::UnwindTables>(*tracker_, *symbolizer_, s_.opts.verbose);
    tracker_->set_new_mapping_fn([this](const vma::Mapping& m) { tables_->on_mapping(m); });
    // -d files (and with --ldd their libraries); the -c program and process() binaries always
    // with their libraries: they are certain to run, and their first events come before the
    // tracker could report their mappings.
    std::vector<std::string> files = s_.opts.d_objects, own;
    if (!target_.path().empty()) own.push_back(target_.path());
    for (auto& p : m_.probes) {
      if (!p.family.binary_path().empty()) own.push_back(p.family.binary_path());
    }
    std::vector<std::string> deps;
    for (const std::string& f : s_.opts.ldd ? files : std::vector<std::string>{})
      for (const std::string& d : loader::UnwindTables::ldd(f)) deps.push_back(d);
    for (const std::string& f : own) {
      files.push_back(f);
      for (const std::string& d : loader::UnwindTables::ldd(f)) deps.push_back(d);
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
  ustacks_ = std::make_unique<loader::UserStacks>(*tracker_, *symbolizer_);
  ustacks_->set_target(target_pid_);
  ustacks_->set_probe_points(probe_points());
  out_.set_user_stacks(ustacks_.get());
  return true;
}

// Probe points by probe id (`<no user/kernel backtrace at PP>`).
std::vector<std::string> Runner::probe_points() const {
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
void Runner::start_kernel_symbols() {
  kallsyms_ = std::make_unique<ksym::Kallsyms>();
  std::string why;
  const char* file = std::getenv("UKSTAP_KALLSYMS");  // tests: a kallsyms-format file instead
  if (!kallsyms_->load(file && *file ? file : "/proc/kallsyms", why)) {
    s_.diag.stream() << "WARNING: no kernel symbols (" << why
                     << "): kernel addresses are printed in hex\n";
  } else if (kallsyms_->hidden()) {
    std::string kr;
    loader::read_file("/proc/sys/kernel/kptr_restrict", kr);
    while (!kr.empty() && kr.back() == '\n') kr.pop_back();
    s_.diag.stream() << "WARNING: kernel symbol addresses are hidden (/proc/kallsyms shows zeros; "
                        "kernel.kptr_restrict = "
                     << (kr.empty() ? "?" : kr) << "): kernel addresses are printed in hex\n";
  }
  kstacks_ = std::make_unique<loader::KernelStacks>(*kallsyms_);
  kstacks_->set_probe_points(probe_points());
  out_.set_kernel_stacks(kstacks_.get());
}

// The maps ustack_id()/kstack_id() store stacks in (bpf/stp_bpf_stackid.h).
void Runner::open_stack_ids() {
  struct bpf_map* u = bpf_object__find_map_by_name(obj_, "stp_ustacks");
  struct bpf_map* k = bpf_object__find_map_by_name(obj_, "stp_kstacks");
  if (u && ustacks_) {
    ustack_ids_ = std::make_unique<loader::StackIds>(bpf_map__fd(u), bpf_map__value_size(u));
    ustacks_->set_stack_ids(ustack_ids_.get());
  }
  if (k && kstacks_) {
    kstack_ids_ = std::make_unique<loader::StackIds>(bpf_map__fd(k), bpf_map__value_size(k));
    kstacks_->set_stack_ids(kstack_ids_.get());
  }
}

// -v: how user-stack walks ended, and what the tracker saw.
void Runner::report_user_stacks() {
  if (!ustacks_) return;
  static const char* names[] = STP_UNWIND_STOP_NAMES;
  if (s_.opts.verbose <= 0) {
    // Without -v: one line when walks were cut short for want of something ukstap could give
    // (depth, a table, a rule, a register) — not for the ends of stacks or unreadable memory,
    // nor for "mappings unknown": a timer sample of a process that exec'd a moment ago, before
    // the mirror caught up (transient, nearly every profile of a new process has one; -v).
    uint64_t cut = 0, total = 0;
    std::string why;
    for (int i = 0; i < STP_STOP_NR; i++) {
      uint64_t n = session_->ustack_stops[i];
      total += n;
      if (i != STP_STOP_DEPTH && i != STP_STOP_NO_TABLE && i != STP_STOP_INVALID_ROW &&
          i != STP_STOP_UNTRUSTED)
        continue;
      if (!n) continue;
      cut += n;
      why += (why.empty() ? "" : ", ") + std::string(names[i]) + " " + std::to_string(n);
    }
    if (cut)
      s_.diag.stream() << "WARNING: " << cut << " of " << total
                       << " user stacks were cut short: " << why << " (rerun with -v)\n";
    return;
  }
  auto& d = s_.diag.stream();
  d << "User stacks: " << ustacks_->stacks << " printed, " << ustacks_->frames << " frames ("
    << ustacks_->unresolved_frames << " without a symbol); walks ended by:";
  bool any = false;
  for (int i = 0; i < STP_STOP_NR; i++) {
    uint64_t n = session_->ustack_stops[i];
    if (!n) continue;
    d << (any ? ", " : " ") << names[i] << " " << n;
    any = true;
  }
  d << (any ? "\n" : " none\n");
  if (session_->ustack_fp_frames)
    d << "User stacks: " << session_->ustack_fp_frames
      << " frames found by frame pointers (no unwind table for their code: marked inexact)\n";
  if (tables_)
    for (const std::string& w : tables_->warnings) d << "WARNING: " << w << "\n";
  const auto& st = tracker_->stats();
  d << "VMA tracker: " << st.mmap_records << " mmap, " << st.fork_records << " fork, "
    << st.exec_records << " exec, " << st.exit_records << " exit records, " << st.lost_records
    << " lost; " << st.proc_snapshots << " /proc maps read\n";
}

// -vv: per BPF program, how often it ran and its mean run time (the kernel's own accounting).
void Runner::report_bpf_stats() {
  if (stats_fd_ < 0 || !obj_) return;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj_) {
    int fd = bpf_program__fd(prog);
    struct bpf_prog_info info {};
    uint32_t len = sizeof info;
    if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || !info.run_cnt) continue;
    s_.diag.stream() << "BPF program " << bpf_program__name(prog) << ": " << info.run_cnt
                     << " runs, " << info.run_time_ns / info.run_cnt << " ns per run\n";
  }
  ::close(stats_fd_);
  stats_fd_ = -1;
}

// An exited process's mappings are freed only once the event ring's reader has passed every
// record written before the process exited (vma::Retention): the ring's producer and consumer
// positions, read from the pages the kernel shares with every reader (read-only here).
void Runner::retain_exited_until_read() {
  struct bpf_map* rb = bpf_object__find_map_by_name(obj_, loader::kRingBufMap);
  if (!rb) return;
  const size_t page = (size_t)::sysconf(_SC_PAGESIZE);
  void* p = ::mmap(nullptr, 2 * page, PROT_READ, MAP_SHARED, bpf_map__fd(rb), 0);
  if (p == MAP_FAILED) return;  // then only the count bounds them
  mmaps_.push_back({p, 2 * page});
  auto* consumer = static_cast<const uint64_t*>(p);
  auto* producer = reinterpret_cast<const uint64_t*>(static_cast<const char*>(p) + page);
  vma::Retention r;
  r.fence = [producer] { return __atomic_load_n(producer, __ATOMIC_ACQUIRE); };
  r.consumed = [consumer] { return __atomic_load_n(consumer, __ATOMIC_ACQUIRE); };
  tracker_->set_retention(std::move(r));
}

// A pipe's or socket's reader closing (`| head -1`) shows as EPOLLERR/EPOLLHUP on our end even
// when nothing is being written: polled with the signals, the run ends at once instead of at
// the next write. (Regular files and terminals cannot be polled that way: epoll refuses them
// or they never report it; their writes are checked.)
void Runner::watch_output_reader() {
  struct stat st {};
  int fd = out_.fd();
  if (fd < 0 || ::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return;
  struct epoll_event ev {};
  ev.events = 0;  // EPOLLERR and EPOLLHUP are always reported
  ev.data.fd = fd;
  ::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
}

// The end of the run: one WARNING line per counter of things lost on the way (records, stacks,
// side-band records, the kernel mirror), whatever -v says, then the output's write error if
// any (one "ukstap:" line: the output is incomplete). Returns the exit status these call for.
int Runner::report_losses() {
  auto& d = s_.diag.stream();
  const uint64_t dropped = std::max<uint64_t>(out_.dropped, (uint64_t)session_->drops);
  const uint64_t errors = std::max<uint64_t>((uint64_t)out_.errors, (uint64_t)session_->errors);
  const uint64_t skipped = session_->skipped;
  if (session_->stacks_lost)
    d << "WARNING: " << session_->stacks_lost
      << " stacks were not stored: a stack-id map is full (raise -D MAXSTACKS=N)\n";
  if (tracker_) {
    tracker_->drain();  // a LOST record comes with the first record after the ring had room
    const vma::TrackerStats& st = tracker_->stats();
    if (st.lost_records)
      d << "WARNING: Number of lost VMA side-band records: " << st.lost_records
        << " (mappings made then are unknown: their stacks may not symbolize)\n";
    if (st.mirror_errors)
      d << "WARNING: Number of failed updates of the kernel's VMA mirror: " << st.mirror_errors
        << " (user stacks of those processes may be cut short)\n";
    if (st.mirror_truncated)
      d << "WARNING: Number of VMA mirror updates cut at " << STP_VMA_MAX
        << " executable mappings: " << st.mirror_truncated
        << " (user stacks through the others may be cut short)\n";
  }
  if (tables_ && s_.opts.verbose <= 0)  // under -v report_user_stacks() printed them
    for (const std::string& w : tables_->warnings) d << "WARNING: " << w << "\n";
  if (out_.malformed)
    d << "WARNING: Number of records that could not be decoded: " << out_.malformed << "\n";
  if (dropped) d << "WARNING: Number of dropped records: " << dropped << "\n";
  if (errors > 0 || skipped > 0)
    d << "WARNING: Number of errors: " << errors << ", skipped probes: " << skipped << "\n";
  if (int err = out_.write_error()) {
    d.flush();
    s_.diag.fatal("cannot write output to " + out_.name() + ": " + std::strerror(err));
    return 1;
  }
  return 0;
}

// Detaching a syscall tracepoint's program waits for an RCU tasks-trace grace period (syscall
// tracepoints are faultable on this kernel): ~75 ms per link, so one link after another
// `probe syscall.* { }` took 30 s to exit. Destroyed from many threads at once, the waits
// overlap (bench/compare.py item 3, docs/BENCHMARKS.md).
void Runner::detach() {
  const size_t n = links_.size() + perf_fds_.size();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      if (i < links_.size())
        bpf_link__destroy(links_[i]);
      else
        ::close(perf_fds_[i - links_.size()]);
    }
  };
  std::vector<std::thread> pool;
  const size_t nthreads = std::min<size_t>(n > 1 ? n - 1 : 0, 63);
  try {
    for (size_t t = 0; t < nthreads; ++t) pool.emplace_back(work);
  } catch (const std::system_error&) {
    // no more threads: the ones started and this one share what is left
  }
  work();
  for (auto& t : pool) t.join();
  links_.clear();
  perf_fds_.clear();
  // The programs have left their events; the events' own tear-down goes on without us.
  loader::close_events_in_background(event_refs_);
}

void Runner::drain() {
  if (rb_) ring_buffer__consume(rb_);
  out_.flush();
}

void Runner::cleanup() {
  if (tracker_) tracker_->set_retention({});  // its fences read the ring's pages, unmapped below
  detach();
  if (have_cmd_) target_.end_tree();
  if (rb_) ring_buffer__free(rb_);
  rb_ = nullptr;
  if (so_) ::dlclose(so_);
  so_ = nullptr;
  for (auto& [p, len] : mmaps_) ::munmap(p, len);
  mmaps_.clear();
  if (obj_) bpf_object__close(obj_);
  obj_ = nullptr;
  if (epfd_ >= 0) ::close(epfd_);
  epfd_ = -1;
}

int Runner::run() {
  for (auto& p : m_.probes) by_id_[p.id] = &p;

  // Signals are never blocked (loader/interrupt.h): until the probes are being attached a
  // SIGINT/SIGTERM ends the process from its handler (nothing is attached, the kernel frees
  // what ukstap held); from then on the attach loop and the event loop look at interrupted().
  loader::install_interrupt_handlers();
  loader::exit_on_interrupt(true);
  ::signal(SIGPIPE, SIG_IGN);
  // Each perf-event probe holds four descriptors (program, event, link, the closer's reference):
  // `probe syscall.*` as 361 tracepoints needs ~1,500, over the usual soft limit of 1,024. As
  // perf does, the soft limit goes up to the hard one.
  struct rlimit nofile;
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &nofile);
  }

  std::string why;
  if (!out_.open(s_.opts.output_file, why)) {
    s_.diag.fatal(why);  // one line, exit 1 (nothing was loaded)
    return 1;
  }

  if (!s_.opts.target_cmd.empty()) {
    if (!target_.prepare(s_.opts.target_cmd, why)) {
      s_.diag.fatal(why);  // one line, exit 1 (nothing was loaded)
      return 1;
    }
    if (!target_.fork_parked(why)) return fail(why);
    have_cmd_ = true;
    target_pid_ = target_.pid();  // its group is killed on an emergency exit (target.cpp)
  } else if (s_.opts.target_pid > 0) {
    if (::kill(s_.opts.target_pid, 0) != 0 && errno == ESRCH) {
      s_.diag.fatal("cannot follow process " + std::to_string(s_.opts.target_pid) + " (-x): no such process");
      return 1;
    }
    target_pid_ = s_.opts.target_pid;
  }

  if (m_.uses_user_stacks && !start_tracker()) return 1;
  if (m_.uses_kernel_stacks) start_kernel_symbols();
  if (!s_.bpf_object_path.empty()) {
    if (!load_bpf()) return 1;
    open_stack_ids();
    if (kallsyms_) {  // the dispatched syscall probes' extra glue frame (stp_bpf_kstack.h)
      const char* glue[2] = {"__traceiter_sys_enter", "__traceiter_sys_exit"};
      for (int i = 0; i < 2; ++i)
        if (const ksym::Symbol* g = kallsyms_->find(glue[i]); g && g->size) {
          session_->syscall_glue[2 * i] = g->start;
          session_->syscall_glue[2 * i + 1] = g->start + g->size;
        }
    }
    // The in-kernel unwinder's tables and view of the targets' executable mappings.
    if (tables_) {
      std::string twhy;
      if (!tables_->attach(obj_, twhy)) tables_->warnings.push_back(twhy);
      for (const std::string& w : tables_->warnings) s_.diag.stream() << "WARNING: " << w << "\n";
      tables_->warnings.clear();
      if (s_.opts.verbose > 0)
        for (const std::string& l : tables_->report()) s_.diag.stream() << "Pass 5: " << l << "\n";
    }
    if (tracker_) {
      if (struct bpf_map* vm = bpf_object__find_map_by_name(obj_, "stp_vmas"))
        tracker_->mirror_to(bpf_map__fd(vm));
      retain_exited_until_read();
    }
  }
  if (!open_native()) return 1;
  if (s_.opts.verbose > 0) s_.diag.stream() << "Pass 5: starting run.\n";

  // Kernel probes are attached while the runtime is "starting" (their handlers return at once),
  // begin probes run, then the state turns "running": stap's order without a window where a
  // kernel probe fires before begin.
  // -vv: the kernel's per-program run counts and run time (BPF_ENABLE_STATS; on only while
  // ukstap holds the fd, so other tracers are not slowed after it exits).
  if (s_.opts.verbose > 1) stats_fd_ = bpf_enable_stats(BPF_STATS_RUN_TIME);
  loader::exit_on_interrupt(false);  // from here on, detach before exiting
  if (!attach_all()) {
    if (!loader::interrupted()) return 1;
    // SIGINT/SIGTERM while attaching: no begin probe ran, so no end probe runs; what is
    // attached is detached, the parked target let go.
    detach();
    if (have_cmd_) target_.end_tree();
    return 1;
  }

  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = loader::wake_fd();
  ::epoll_ctl(epfd_, EPOLL_CTL_ADD, loader::wake_fd(), &ev);
  if (rb_) {
    int rfd = ring_buffer__epoll_fd(rb_);
    ev.data.fd = rfd;
    ::epoll_ctl(epfd_, EPOLL_CTL_ADD, rfd, &ev);
  }
  watch_output_reader();

  run_native(native_probes(probes::ProbeKind::Begin));
  if (!errored()) {
    set_run_state(STP_SESSION_RUNNING);
    if (have_cmd_) target_.release();
    event_loop();
  }
  set_run_state(errored() ? STP_SESSION_ERROR : STP_SESSION_STOPPING);

  report_bpf_stats();
  detach();
  drain();
  if (have_cmd_) target_.abandon();  // still parked (begin failed or exited): let it go quietly

  if (!errored()) {
    run_native(native_probes(probes::ProbeKind::End));
  }
  if (errored()) {
    // probe error handlers; they may print, their own errors are reported as usual
    run_native(native_probes(probes::ProbeKind::Error), true);
  }
  drain();
  out_.close();
  uint64_t errors = std::max<uint64_t>((uint64_t)out_.errors, (uint64_t)session_->errors);

  report_user_stacks();
  if (kstacks_ && s_.opts.verbose > 0)
    s_.diag.stream() << "Kernel stacks: " << kstacks_->stacks << " printed, " << kstacks_->frames
                     << " frames (" << kstacks_->unresolved_frames << " without a symbol); "
                     << kallsyms_->size() << " kernel symbols\n";
  int rc = report_losses();
  if (errors > 0) rc = 1;

  if (have_cmd_) {
    bool by_itself = target_.exited();  // it ended before the run did
    target_.end_tree();                 // what is left of its process tree goes
    if (by_itself) {
      int st = target_.status();
      if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
        s_.diag.stream() << "WARNING: Child process exited with status " << WEXITSTATUS(st) << "\n";
        rc = 1;
      } else if (WIFSIGNALED(st)) {
        s_.diag.stream() << "WARNING: Child process exited with signal " << WTERMSIG(st) << " ("
                         << ::strsignal(WTERMSIG(st)) << ")\n";
        rc = 1;
      }
    }
  }
  cleanup();
  if (errors > 0) s_.diag.pass_failed(5, "run");
  return rc;
}

}  // namespace

int pass5_run(Session& s) {
  if (::geteuid() != 0) {
    s.diag.fatal("pass 5 must run as root: loading BPF programs needs root privileges");
    return 1;
  }
  if (!s.module) {
    s.diag.fatal("internal error: pass 5 has no module");
    return 1;
  }
  Runner r(s);
  return r.run();
}

}  // namespace ukstap
