// Pass 5: load module.bpf.o with libbpf, dlopen module.so, start/follow the target, run begin
// probes, attach the kernel probes, run the event loop (ring buffer, native interval timers,
// signals, target exit, exit()), then detach, drain, run end (or error) probes and report.
// This file is the order of those steps; each step's work is in its own file:
//   run_config.h     the configuration both sides get (HZ, cpus, target, clocks)
//   bpf_module.h     open, write .rodata, choose programs, load, read a verifier refusal
//   native_module.h  dlopen module.so, share the maps, run native probes
//   event_loop.h     epoll over the ring buffer, the signal pipe, the output reader; timers
//   stack_sources.h  VMA tracker, symbolizer, unwind tables, kallsyms (when stacks are used)
//   exit_report.h    -v/-vv statistics, loss warnings, the -c command's exit
//   event_closer.h   detaching without waiting for the kernel; interrupt.h signals
//
// Nothing is pinned: every attachment is a BPF link or perf event fd owned by this process, so
// however ukstap ends (SIGKILL included) the kernel detaches everything.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "codegen/module_info.h"
#include "loader/passes.h"
#include "driver/session.h"
#include "loader/attach.h"
#include "loader/bpf_module.h"
#include "loader/event_closer.h"
#include "loader/event_loop.h"
#include "loader/exit_report.h"
#include "loader/input_reader.h"
#include "loader/interrupt.h"
#include "loader/native_abi.h"
#include "loader/native_module.h"
#include "loader/symbol_key_merge.h"
#include "loader/procfs_files.h"
#include "loader/run_config.h"
#include "loader/stack_sources.h"
#include "loader/ctf_output.h"
#include "loader/lttng_output.h"
#include "loader/output.h"
#include "loader/target.h"
#include "loader/util.h"
#include "probes/tracefs.h"

namespace ukstap {
namespace {

using codegen::ProbeInfo;
using loader::g_libbpf_log;  // libbpf's messages, quoted by load and attach errors under -v
using loader::kernel_hz;     // timer.profile's period (run_config.h)

// -------------------------------------------------------------------------------- the run
size_t maxstringlen(const codegen::ModuleInfo& m) {
  auto it = m.limits.find("MAXSTRINGLEN");
  size_t n = it == m.limits.end() ? 0 : std::strtoul(it->second.c_str(), nullptr, 0);
  return n ? n : 512;  // the default of runtime/common/stp_limits.h
}

class Runner {
 public:
  explicit Runner(Session& s)
      : s_(s), m_(*s.module), stacks_(s, *s.module), out_(s, *s.module),
        input_(s.module->probes, maxstringlen(*s.module)) {}
  ~Runner() { cleanup(); }
  int run();
  void collect_samples(std::vector<loader::Sample>* samples) { out_.collect_samples(samples); }

 private:
  int fail(const std::string& msg);
  bool load_bpf();
  bool open_bpf(bool inode_query);  // open, configure, choose programs (before load)
  bool open_native();
  bool attach_all();
  void run_native(const std::vector<const ProbeInfo*>& probes, bool even_in_error = false);
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
  bool errored() const {
    return out_.errors > max_errors_ || session_->state == STP_SESSION_ERROR;
  }

  Session& s_;
  const codegen::ModuleInfo& m_;
  loader::StackSources stacks_;  // trackers, symbols and unwind tables, as the script needs
  // --ctf=DIR's events (ctf_output.h; its trace() takes extra event kinds). Declared before
  // out_, which sends to it until out_ is destroyed.
  std::unique_ptr<loader::CtfOutput> ctf_;
  loader::Output out_;
  loader::InputReader input_;  // stdin for input.char/input.line
  loader::TargetCommand target_;
  pid_t target_pid_ = 0;
  bool have_cmd_ = false;
  loader::BpfModule bpf_;
  struct bpf_object* obj_ = nullptr;  // bpf_.object() once opened (what the attach code reads)
  std::vector<struct bpf_link*> links_;
  std::vector<int> perf_fds_;
  std::vector<int> event_refs_;  // one more reference to each linked perf event (event_closer.h)
  std::vector<int> link_fds_;    // BPF links made with bpf(2) (attach_netfilter.cpp)
  std::string tracefs_;
  loader::BpfRunStats bpf_stats_;  // -vv
  struct ring_buffer* rb_ = nullptr;
  loader::NativeModule native_;
  loader::ProcfsFiles procfs_;  // procfs("NAME").read probes' FIFOs
  std::vector<std::pair<void*, size_t>> mmaps_;
  loader::EventLoop loop_;
  bool stop_ = false;
  int max_errors_ = 0;
  std::map<int, const ProbeInfo*> by_id_;
  std::multimap<int, const ProbeInfo*> sharers_;  // program id -> the other probes it runs
  struct stp_config config_ {};  // made once (run_config.h), given to both sides
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

bool Runner::open_bpf(bool inode_query) {
  std::string name = s_.opts.module_name.empty() ? "ukstap" : s_.opts.module_name;
  std::string why;
  if (!bpf_.open(s_.bpf_object_path, name, s_.opts.verbose, why)) {
    fail(why);
    return false;
  }
  obj_ = bpf_.object();
  stacks_.size_row_pool(obj_);
  // Read-only configuration (common/stp_records.h): stp_config and the probe strings table.
  bpf_.write_config(config_);
  size_t maxstr = std::strtoul(s_.define("MAXSTRINGLEN", "0").c_str(), nullptr, 0);
  if (auto it = m_.limits.find("MAXSTRINGLEN"); it != m_.limits.end()) maxstr = std::strtoul(it->second.c_str(), nullptr, 0);
  if (!maxstr) maxstr = 512;  // the default of runtime/common/stp_limits.h
  bpf_.write_probe_table(m_.probes, maxstr);
  max_errors_ = std::atoi(s_.define("MAXERRORS", "0").c_str());

  if (const ProbeInfo* p = bpf_.choose_programs(by_id_, m_.uses_user_stacks, inode_query)) {
    fail(std::string("cannot run ") + probe_where(*p) + ": " + p->family.unavailable_reason());
    return false;
  }
  return true;
}

// While the event loop runs, a stop signal ends a ring read after the record in hand (a
// negative return: libbpf stops there, the record consumed). ring_buffer__consume reads on as
// long as the probes add records, and a record's decode can compile an unwind table (a deferred
// walk); what is left is read after the detach, when nothing adds to it.
std::atomic<bool> g_ring_stops_on_signal{false};

int ring_cb(void* ctx, void* data, size_t len) {
  static_cast<loader::Output*>(ctx)->record(data, len);
  return g_ring_stops_on_signal.load(std::memory_order_relaxed) && loader::interrupted() ? -EINTR : 0;
}

void native_sink(void* ctx, const void* data, unsigned long len) {
  static_cast<loader::Output*>(ctx)->record(data, len);
}

bool Runner::load_bpf() {
  loader::capture_libbpf_messages(s_.opts.verbose);
  // stp_cfi_inode_prog only improves the inode map's fallback (kernel_inode.h): a kernel whose
  // verifier refuses it (it was verified on 6.1 and 6.18 only) loses that, not the module. A
  // libbpf object is loaded once, so the second try opens it again.
  for (bool inode_query = true;; inode_query = false) {
    int err = 0;
    if (!open_bpf(inode_query)) return false;
    if (bpf_.load(err)) break;
    // Which program did the verifier reject, and its last complaint (bpf_module.h).
    loader::LoadFailure lf = loader::parse_load_failure(g_libbpf_log);
    if (inode_query && lf.program == "stp_cfi_inode_prog") {
      if (s_.opts.verbose > 0)
        s_.diag.stream() << "Pass 5: the kernel refused stp_cfi_inode_prog"
                         << (lf.reason.empty() ? "" : ": " + lf.reason)
                         << "; loading the module without it (files keyed by stat()'s inode)\n";
      bpf_.close();
      obj_ = nullptr;
      continue;
    }
    std::string who;
    int id = -1;
    if (std::sscanf(lf.program.c_str(), "stp_probe_%d", &id) == 1 && by_id_.count(id))
      who = probe_where(*by_id_[id]);
    std::string msg = who.empty() ? "the kernel refused the BPF module: " + std::string(std::strerror(err))
                                  : "the BPF verifier rejected " + who;
    if (!lf.reason.empty()) msg += ": " + lf.reason;
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
  std::string why;
  if (!native_.open(s_.native_object_path, why)) {
    fail(why);
    return false;
  }
  native_.set_output(native_sink, &out_);
  native_.configure(config_);  // the struct the BPF side got
  if (obj_) native_.share_maps(obj_, const_cast<stp_session*>(session_), mmaps_);
  native_.initialize(m_);
  // Arrays keyed by symbol placeholders: one entry per text before user space reads them.
  // Only with nothing attached (begin, end, error): a fold writes entries back, and a BPF
  // program's read-then-write of one entry straddling that write would lose the folded counts
  // (pass 2 refuses reading such an array in timer.s, procfs and input probes).
  native_.set_before_read([this] {
    if (!links_.empty() || !perf_fds_.empty() || !link_fds_.empty()) return;
    loader::merge_text_keys(m_, obj_, [this](const std::string& t) { return out_.expand(t); });
  });
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
  cx.link_fds = &link_fds_;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj_) {
    int id = -1;
    if (std::sscanf(bpf_program__name(prog), "stp_probe_%d", &id) != 1 || !by_id_.count(id)) continue;
    if (by_id_[id]->native) continue;
    // The probe, then the syscall probes its program runs too (codegen/shared_programs.h).
    auto sharers = sharers_.equal_range(id);
    std::vector<const ProbeInfo*> runs{by_id_[id]};
    for (auto it = sharers.first; it != sharers.second; ++it) runs.push_back(it->second);
    for (const ProbeInfo* pi : runs) {
      const ProbeInfo& p = *pi;
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
    const char* tp = loader::syscall_dispatcher_tracepoint(name);
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


void Runner::run_native(const std::vector<const ProbeInfo*>& probes, bool even_in_error) {
  for (const ProbeInfo* p : probes) {
    if (!even_in_error && errored()) break;
    native_.call(*p);
  }
  out_.flush();
}

void Runner::set_run_state(uint32_t state) {
  session_->state = state;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void Runner::event_loop() {
  loop_.set_timers(loader::native_timers(m_.probes, kernel_hz(), loader::now_ns()));
  auto run_input = [this](const ProbeInfo& p, const char* text) { native_.call_input(p, text); };
  loader::EventLoop::Round round;
  round.stopping = [this] { return stopping(); };
  round.woken = [this, run_input] {
    if (have_cmd_ && target_.reap()) stop_ = true;  // SIGCHLD woke us, or the 20 ms tick
    // A stop signal: straight to the detach. The side-band and event rings are read after it
    // (drain(); a record's decode reads the side-band records it needs), when no probe adds to
    // them. Read here, a cold cache's backlog (an unwind table compiled for each file newly
    // mapped on the machine) held the loop 13 s after a SIGINT, deaf to a second one.
    if (loader::interrupted()) {
      stop_ = true;
      return;
    }
    stacks_.drain();  // keep the side-band rings from overflowing
    if (rb_) ring_buffer__consume(rb_);
    // kill -USR2: what the probes printed before it stays in the old file
    for (int n = loader::take_switch_requests(); n > 0; --n) out_.switch_file();
    if (!input_.eof()) {
      input_.read_available([this] { return stopping(); }, run_input);
      if (input_.eof()) loop_.unwatch(STDIN_FILENO);
    }
  };
  round.fire = [this](const loader::NativeTimer& t) { native_.call_timer(*t.probe); };
  round.done = [this] {
    if (have_cmd_ && !stop_ && target_.reap()) stop_ = true;
    if (!stopping())
      procfs_.serve([this](const ProbeInfo& p, const std::string& w) {
        return native_.call_procfs(p, w);
      });
    out_.flush();
  };
  loop_.run(round);
}

// Detaching a syscall tracepoint's program waits for an RCU tasks-trace grace period (syscall
// tracepoints are faultable on this kernel): ~75 ms per link, so one link after another
// `probe syscall.* { }` took 30 s to exit. Destroyed from many threads at once, the waits
// overlap (bench/compare.py item 3, docs/BENCHMARKS.md).
void Runner::detach() {
  for (int fd : link_fds_) ::close(fd);  // netfilter links: unregistered at once
  link_fds_.clear();
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
  stacks_.release_ring();  // the VMA tracker read the ring's positions
  detach();
  if (have_cmd_) target_.end_tree();
  if (rb_) ring_buffer__free(rb_);
  rb_ = nullptr;
  procfs_.remove();
  native_.close();
  for (auto& [p, len] : mmaps_) ::munmap(p, len);
  mmaps_.clear();
  bpf_.close();
  obj_ = nullptr;
  loop_.close();
}

int Runner::run() {
  for (auto& p : m_.probes) {
    by_id_[p.id] = &p;
    if (p.program >= 0) sharers_.emplace(p.program, &p);
  }

  // Signals are never blocked (loader/interrupt.h): until the probes are being attached a
  // SIGINT/SIGTERM ends the process from its handler (nothing is attached, the kernel frees
  // what ukstap held); from then on the attach loop and the event loop look at interrupted().
  loader::install_interrupt_handlers();
  loader::exit_on_interrupt(true);
  ::signal(SIGPIPE, SIG_IGN);

  std::string why;
  if (s_.opts.output_as_events()) {
    ctf_ = std::make_unique<loader::CtfOutput>(s_, m_);
    if (!(s_.opts.lttng ? loader::open_lttng(*ctf_, why) : ctf_->open(s_.opts.ctf_dir, why))) {
      s_.diag.fatal(why);  // one line, exit 1 (nothing was loaded)
      return 1;
    }
    out_.set_ctf(ctf_.get());
  }
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
  // Each perf-event probe holds four descriptors (program, event, link, the closer's reference):
  // `probe syscall.*` as 361 tracepoints needs ~1,500, over the usual soft limit of 1,024. The
  // soft limit goes up to the hard one, for ukstap only: the -c command was forked above and
  // keeps the limit it was given.
  struct rlimit nofile;
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &nofile);
  }

  // -v: where pass 5's start-up goes (bench/startup.sh; docs/DESIGN.md "Start-up").
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  auto t_start = std::chrono::steady_clock::now();
  double ms_stacks = 0, ms_bpf = 0, ms_native = 0, ms_attach = 0;
  if (m_.uses_user_stacks && !stacks_.start_user(target_pid_, target_.path(), out_, why))
    return fail(why);
  if (m_.uses_kernel_stacks) stacks_.start_kernel(out_);
  if (ctf_ && !s_.opts.lttng && stacks_.tracker()) ctf_->enable_statedump(*stacks_.tracker());  // --ctf: symbols for the tools
  ms_stacks = ms_since(t_start);
  // One configuration for both sides, made before either is loaded (run_config.h).
  loader::RunConfigInput cin;
  cin.target_pid = target_pid_;
  cin.vdso_file_id = stacks_.vdso_file_id();
  cin.tables_loading = stacks_.tables_loading();
  config_ = loader::make_run_config(cin);
  auto t_step = std::chrono::steady_clock::now();
  if (!s_.bpf_object_path.empty()) {
    if (!load_bpf()) return 1;
    stacks_.attach(obj_, session_);
    if (ctf_) ctf_->watch_drops(&session_->drop_events);  // --ctf: ring losses as discarded events
  }
  ms_bpf = ms_since(t_step);
  t_step = std::chrono::steady_clock::now();
  if (!open_native()) return 1;
  ms_native = ms_since(t_step);
  if (s_.opts.verbose > 0) s_.diag.stream() << "Pass 5: starting run.\n";

  // Kernel probes are attached while the runtime is "starting" (their handlers return at once),
  // begin probes run, then the state turns "running": stap's order without a window where a
  // kernel probe fires before begin.
  // -vv: the kernel's per-program run counts and run time (BPF_ENABLE_STATS; on only while
  // ukstap holds the fd, so other tracers are not slowed after it exits).
  if (s_.opts.verbose > 1) bpf_stats_.start();
  loader::exit_on_interrupt(false);  // from here on, detach before exiting
  t_step = std::chrono::steady_clock::now();
  bool attached = attach_all();
  ms_attach = ms_since(t_step);
  if (attached && s_.opts.verbose > 0) {
    int programs = 0;
    struct bpf_program* prog;
    if (obj_)
      bpf_object__for_each_program(prog, obj_) programs += bpf_program__fd(prog) >= 0;
    char line[256];
    std::snprintf(line, sizeof line,
                  "Pass 5: started in %.0f ms: stack sources %.0f, BPF load %.0f (%d programs), "
                  "native module %.0f, attach %.0f (%zu kernel probes).\n",
                  ms_since(t_start), ms_stacks, ms_bpf, programs, ms_native, ms_attach,
                  (size_t)std::count_if(m_.probes.begin(), m_.probes.end(),
                                        [](const ProbeInfo& p) { return !p.native; }));
    s_.diag.stream() << line;
  }
  if (!attached) {
    if (!loader::interrupted()) return 1;
    // SIGINT/SIGTERM while attaching: no begin probe ran, so no end probe runs; what is
    // attached is detached, the parked target let go.
    detach();
    if (have_cmd_) target_.end_tree();
    return 1;
  }

  loop_.open();
  if (rb_) loop_.watch_readable(ring_buffer__epoll_fd(rb_));
  loop_.watch_output_reader(out_.fd(), [this] { out_.reader_gone(); });
  // stdin for input probes: a terminal leaves line mode before begin runs (begin's prompt, then
  // each key as typed, not echoed); it is read in the event loop.
  if (int fd = input_.start(); fd >= 0) loop_.watch_readable(fd);

  std::string module = s_.opts.module_name.empty() ? "ukstap_" + std::to_string(::getpid())
                                                   : s_.opts.module_name;
  if (!procfs_.create(m_, module, why)) {
    detach();
    if (have_cmd_) target_.end_tree();
    return fail(why);
  }
  if (!procfs_.empty() && s_.opts.verbose > 0)
    s_.diag.stream() << "procfs files in " << procfs_.dir() << "\n";
  run_native(loader::native_probes(m_, probes::ProbeKind::Begin));
  if (!errored()) {
    set_run_state(STP_SESSION_RUNNING);
    if (have_cmd_) target_.release();
    g_ring_stops_on_signal = true;
    event_loop();
    g_ring_stops_on_signal = false;
  }
  input_.stop();  // the terminal's mode back (also when begin failed)
  set_run_state(errored() ? STP_SESSION_ERROR : STP_SESSION_STOPPING);

  bpf_stats_.report(obj_, s_.diag.stream());
  detach();
  drain();
  if (have_cmd_) target_.abandon();  // still parked (begin failed or exited): let it go quietly

  procfs_.remove();
  if (!errored()) {
    run_native(loader::native_probes(m_, probes::ProbeKind::End));
  }
  if (errored()) {
    // probe error handlers; they may print, their own errors are reported as usual
    run_native(loader::native_probes(m_, probes::ProbeKind::Error), true);
  }
  drain();
  out_.close();
  if (ctf_ && !ctf_->close(why)) {
    s_.diag.stream() << "ERROR: " << why << "\n";
    out_.errors++;
  }
  uint64_t errors = std::max<uint64_t>((uint64_t)out_.errors, (uint64_t)session_->errors);

  loader::RunTotals totals{session_, &out_};
  totals.tracker = stacks_.tracker();
  totals.tables = stacks_.tables();
  totals.deferred = stacks_.deferred();
  totals.ustacks = stacks_.user_stacks();
  totals.kstacks = stacks_.kernel_stacks();
  totals.kallsyms = stacks_.kallsyms();
  // The programs have been detached (detach() above): their counts are final. The object is
  // still open until cleanup().
  totals.kernel_skips = loader::read_kernel_skips(obj_);
  loader::ExitReport report(s_.diag, s_.opts.verbose, totals);
  report.user_stacks();
  report.kernel_stacks();
  int rc = report.losses();
  if (errors > 0) rc = 1;

  if (have_cmd_) {
    bool by_itself = target_.exited();  // it ended before the run did
    target_.end_tree();                 // what is left of its process tree goes
    if (by_itself && loader::report_child_exit(target_.status(), s_.diag.stream())) rc = 1;
  }
  cleanup();
  if (errors > 0) s_.diag.pass_failed(5, "run");
  return rc;
}

}  // namespace

int pass5_run(Session& s, std::vector<loader::Sample>* samples) {
  if (::geteuid() != 0) {
    s.diag.fatal("pass 5 must run as root: loading BPF programs needs root privileges");
    return 1;
  }
  if (!s.module) {
    s.diag.fatal("internal error: pass 5 has no module");
    return 1;
  }
  Runner r(s);
  if (samples) r.collect_samples(samples);
  return r.run();
}

}  // namespace ukstap
