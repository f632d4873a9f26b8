// Replay tests: real register + stack snapshots of this process (and of a helper program built
// here) unwound natively by the portable stepper (runtime/unwind/stp_cfi_step.h, the code the BPF
// module runs) over tables from unwind-tables/ compile_cfi, with libunwind's unw_backtrace taken
// at the same spot as the independent truth. The walk below mirrors stp_uwalk_frame in
// runtime/bpf/stp_bpf_uwalk.h: frame 0 is the exact pc, later frames look up pc-1 unless the
// previous step came out of a signal frame, a pc without a table (no mapping, no FDE, a NO_FDE gap
// row) takes one frame-pointer step and marks the rest inexact, and any failure stops the walk.
//
// The unit tests build with the project's default -g -O2 (x86_64 gcc omits the frame pointer at
// -O2), so the chains below are unwound through their CFI, not through rbp; the walk asserts so by
// counting sp-based rows.
//
// Linking -lunwind has a side effect worth knowing: libunwind.so.8 exports _Unwind_RaiseException
// & co. without symbol versions and comes before libgcc_s in the link order, so in this binary it
// interposes on libgcc_s for every C++ throw (libstdc++'s __cxa_throw binds to it). The in-process
// exception case therefore has libunwind.so.8's _Unwind_* frames on the stack; the helper program
// (no -lunwind; it dlopens libunwind RTLD_LOCAL for the truth) covers libgcc_s's.
#include "test_util.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "vma-tracker/symbolizer.h"
#include "unwind-tables/table_compiler.h"

using ukstap::test::run;
using ukstap::test::sh;
using ukstap::test::TempDir;

namespace {

struct Snapshot {
  uint64_t rip = 0, rsp = 0, rbp = 0;
  std::vector<uint8_t> stack;   // the bytes [rsp, rsp + stack.size())
  std::vector<uint64_t> truth;  // unw_backtrace at the capture site
};

// The stepper reads memory only through STP_UNWIND_READ: here only the snapshot exists.
const Snapshot* g_snap;
int snap_read(void* dst, size_t n, uint64_t addr) {
  const Snapshot& s = *g_snap;
  if (addr < s.rsp || addr - s.rsp > s.stack.size() || n > s.stack.size() - (addr - s.rsp))
    return -14;
  std::memcpy(dst, s.stack.data() + (addr - s.rsp), n);
  return 0;
}

}  // namespace

#define STP_UNWIND_READ(dst, size, addr) snap_read((dst), (size), (uint64_t)(addr))
#include "unwind/stp_cfi_step.h"
#include "unwind/stp_fp_walk.h"

using ukstap::unwind::CfiTable;

namespace {

constexpr size_t kWalkLimit = 1024;  // the native walk's MAXBACKTRACE (BPF's default is 128)
const char* const kStopNames[] = STP_UNWIND_STOP_NAMES;

// ------------------------------------------------------------------------- mappings and tables
struct Mapping {
  uint64_t start, end, pgoff;
  std::string path;
};

// The executable file mappings of a /proc/PID/maps text ([vdso] and anonymous code: no table).
std::vector<Mapping> parse_maps(const std::string& text) {
  std::vector<Mapping> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long s, e, off;
    char perms[8], path[4096] = "";
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &off, path) < 4)
      continue;
    if (perms[2] == 'x') out.push_back({s, e, off, path});  // [vdso], anon code: no table
  }
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

ukstap::sym::Symbolizer& symbolizer() {
  static ukstap::sym::Symbolizer sz;
  return sz;
}

// Compiled once per path for the whole run: libstdc++ and this binary take a while.
struct FileTables {
  bool ok = false;
  CfiTable cfi;
  const ukstap::sym::ElfFile* elf = nullptr;  // load bias (bias_for) and symbols for the dumps
};
const FileTables& tables_for(const std::string& path) {
  static std::map<std::string, std::unique_ptr<FileTables>> cache;
  auto& slot = cache[path];
  if (slot) return *slot;
  slot = std::make_unique<FileTables>();
  std::string why;
  slot->elf = symbolizer().file(path);
  slot->ok = slot->elf && ukstap::unwind::compile_cfi(path, slot->cfi, why);
  return *slot;
}

const Mapping* mapping_of(const std::vector<Mapping>& maps, uint64_t pc) {
  for (const Mapping& m : maps)
    if (pc >= m.start && pc < m.end) return &m;
  return nullptr;
}

// The row for the frame in r, as stp__cfi_row finds it; nullptr = no table for this pc.
const stp_cfi_row* lookup_row(const std::vector<Mapping>& maps, const stp_uregs& r) {
  const Mapping* m = mapping_of(maps, r.pc);
  if (!m || m->path.empty() || m->path[0] != '/') return nullptr;
  const FileTables& ft = tables_for(m->path);
  if (!ft.ok) return nullptr;
  uint64_t bias = ft.elf->bias_for(m->start, m->pgoff);
  const stp_cfi_row* row = ukstap::unwind::find_row(ft.cfi, r.pc - bias - (r.exact_pc ? 0 : 1));
  if (row && row->cfa_kind == STP_CFA_INVALID && row->fp_off == STP_INV_NO_FDE) return nullptr;
  return row;
}

struct Walk {
  std::vector<uint64_t> pcs, sps;  // per frame; sps[i] = sp of frame i (its RA was at sps[i]-8)
  uint32_t stop = STP_STOP_END, exact = 0, fp_frames = 0;
  int last_kind = -1, last_reason = -1;  // the row the walk stopped on (-1: none / fp step)
  size_t by_kind[8] = {};                // successful CFI steps by row kind
};

Walk walk(const Snapshot& s, const std::vector<Mapping>& maps) {
  Walk w;
  g_snap = &s;
  stp_uregs r{};
  r.pc = s.rip;
  r.sp = r.sp0 = s.rsp;
  r.fp = s.rbp;
  r.fp_valid = 1;
  r.exact_pc = 1;
  w.pcs = {r.pc};
  w.sps = {r.sp};
  w.exact = 1;
  bool inexact = false;
  for (;;) {
    if (w.pcs.size() >= kWalkLimit) {
      w.stop = STP_STOP_DEPTH;
      break;
    }
    const stp_cfi_row* row = lookup_row(maps, r);
    uint32_t stop = STP_STOP_END;
    int ok;
    if (row) {
      ok = stp_cfi_step(row, &r, &stop);
      if (ok) w.by_kind[STP_ROW_CFA_KIND(row) & 7]++;
    } else if (!mapping_of(maps, r.pc)) {
      // As stp_uwalk_frame: a pc in no executable mapping stops the walk (no fp guess).
      w.stop = STP_STOP_BAD_FRAME;
      break;
    } else {
      ok = stp_fp_fallback_step(&r, &stop);
      inexact = true;
      w.fp_frames++;
    }
    if (!ok) {
      w.stop = stop;
      if (row) {
        w.last_kind = STP_ROW_CFA_KIND(row);
        w.last_reason = row->cfa_kind == STP_CFA_INVALID ? row->fp_off : -1;
      }
      break;
    }
    w.pcs.push_back(r.pc);
    w.sps.push_back(r.sp);
    if (!inexact) w.exact = (uint32_t)w.pcs.size();
  }
  return w;
}

// The per-case summaries and frame lists, with UKSTAP_REPLAY_VERBOSE=1 (quiet in the suite).
template <class... A>
void report(const char* fmt, A... a) {
  if (std::getenv("UKSTAP_REPLAY_VERBOSE")) std::fprintf(stderr, fmt, a...);
}

// "0xPC name+0xOFF (file)"; a return address is looked up at pc-1 (it may follow a last call).
std::string sym(const std::vector<Mapping>& maps, uint64_t pc, bool exact = false) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%#llx", (unsigned long long)pc);
  std::string out = buf;
  const Mapping* m = mapping_of(maps, pc);
  if (!m) return out;
  const FileTables& ft = tables_for(m->path);
  ukstap::sym::SymbolHit hit;
  if (ft.elf && ft.elf->lookup(pc - ft.elf->bias_for(m->start, m->pgoff) - !exact, hit)) {
    std::snprintf(buf, sizeof buf, "+%#llx", (unsigned long long)(hit.offset + !exact));
    out += " " + hit.name + buf;
  }
  return out + " (" + m->path.substr(m->path.rfind('/') + 1) + ")";
}

// Frame 0 differs by construction (our asm vs. libunwind's call site in the same function), so
// from frame 1 on every return address must be equal and both lists must end together. Returns
// the number of frames compared.
size_t compare_with_truth(const Walk& w, const Snapshot& s, const std::vector<Mapping>& maps,
                          const char* what) {
  std::ostringstream dump;
  dump << what << ": stop=" << kStopNames[w.stop & STP_STOP_MASK] << " exact=" << w.exact << "/" << w.pcs.size()
       << "\n  ours:";
  for (size_t i = 0; i < w.pcs.size(); i++) dump << "\n   " << i << " " << sym(maps, w.pcs[i]);
  dump << "\n  libunwind:";
  for (size_t i = 0; i < s.truth.size(); i++) dump << "\n   " << i << " " << sym(maps, s.truth[i]);
  INFO(dump.str());
  REQUIRE(w.pcs.size() >= 2);
  REQUIRE(s.truth.size() >= 2);
  std::vector<uint64_t> ours(w.pcs.begin() + 1, w.pcs.end());
  std::vector<uint64_t> theirs(s.truth.begin() + 1, s.truth.end());
  CHECK(ours == theirs);
  CHECK(w.exact == w.pcs.size());  // no frame-pointer guess anywhere
  CHECK(w.by_kind[STP_CFA_SP] > 0);
  report("%s\n", dump.str().c_str());
  report("[replay] %-28s %zu frames compared (ours %zu, libunwind %zu), stop: %s\n", what,
              std::min(ours.size(), theirs.size()), w.pcs.size(), s.truth.size(),
              kStopNames[w.stop & STP_STOP_MASK]);
  return std::min(ours.size(), theirs.size());
}

// ------------------------------------------------------------------------------------ capture
// Preallocated: the capture runs in a signal handler and in a terminate handler after fork.
constexpr size_t kMaxStack = 256 << 10;
constexpr int kMaxTruth = 1100;
struct Raw {
  uint64_t rip, rsp, rbp, len;
  int ntruth;
  void* truth[kMaxTruth];
  uint8_t stack[kMaxStack];
};
Raw g_raw;
thread_local uint64_t t_stack_top;  // the end of this thread's stack mapping

void note_stack_top() {
  pthread_attr_t a;
  void* addr;
  size_t size;
  pthread_getattr_np(pthread_self(), &a);
  pthread_attr_getstack(&a, &addr, &size);
  pthread_attr_destroy(&a);
  t_stack_top = (uint64_t)addr + size;
}

__attribute__((noinline, noclone)) void capture() {
  uint64_t rip, rsp, rbp;
  // One asm: rsp is the same at both instructions, so the row at rip describes this rsp.
  asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
               : "=r"(rip), "=r"(rsp), "=r"(rbp));
  g_raw.rip = rip;
  g_raw.rsp = rsp;
  g_raw.rbp = rbp;
  g_raw.len = std::min<uint64_t>(t_stack_top - rsp, kMaxStack);
  std::memcpy(g_raw.stack, (const void*)rsp, g_raw.len);
  g_raw.ntruth = unw_backtrace(g_raw.truth, kMaxTruth);
}

Snapshot from_raw(const Raw& r) {
  Snapshot s;
  s.rip = r.rip;
  s.rsp = r.rsp;
  s.rbp = r.rbp;
  s.stack.assign(r.stack, r.stack + r.len);
  for (int i = 0; i < r.ntruth; i++) s.truth.push_back((uint64_t)r.truth[i]);
  return s;
}

// A chain of distinct frames (different frame sizes, so different CFA offsets), each doing
// volatile work after its call so the call is never a tail call.
volatile int g_sink;
using Leaf = void (*)();

#define CHAIN_FN(name, next, bytes)                                 \
  __attribute__((noinline, noclone)) void name(Leaf leaf) {         \
    volatile char pad[bytes];                                       \
    pad[0] = 1;                                                     \
    next(leaf);                                                     \
    g_sink = g_sink + pad[0];                                       \
  }
__attribute__((noinline, noclone)) void chain_leaf(Leaf leaf) {
  leaf();
  g_sink = g_sink + 1;
}
CHAIN_FN(chain_d, chain_leaf, 8)
CHAIN_FN(chain_c, chain_d, 40)
CHAIN_FN(chain_b, chain_c, 200)
CHAIN_FN(chain_a, chain_b, 1000)

__attribute__((noinline, noclone)) void recurse(int n, Leaf leaf) {
  if (n > 0)
    recurse(n - 1, leaf);
  else
    leaf();
  g_sink = g_sink + n;
}

Snapshot capture_chain(Leaf leaf) {
  note_stack_top();
  chain_a(leaf);
  return from_raw(g_raw);
}

std::vector<Mapping> self_maps() { return parse_maps(slurp("/proc/self/maps")); }

// ---------------------------------------------------------------------- exceptions in flight
__attribute__((noinline, noclone)) void thrower() {
  g_sink = g_sink + 1;
  throw std::runtime_error("replay");
}

struct CaptureOnUnwind {
  ~CaptureOnUnwind() {
    if (std::uncaught_exceptions()) capture();
  }
};

__attribute__((noinline, noclone)) void throw_through() {
  CaptureOnUnwind g;
  thrower();
  g_sink = g_sink + 1;
}

// A noexcept frame the exception cannot leave: the personality routine calls std::terminate
// from inside phase 2 of _Unwind_RaiseException, so __cxa_throw and the unwinder are still on
// the stack when the terminate handler runs.
__attribute__((noinline, noclone)) void noexcept_frame() noexcept {
  thrower();
  g_sink = g_sink + 1;
}

int g_pipe = -1;
[[noreturn]] void capture_and_exit() {
  capture();
  const char* p = (const char*)&g_raw;
  for (size_t left = sizeof g_raw; left;) {
    ssize_t n = write(g_pipe, p, left);
    if (n <= 0) _exit(1);
    p += n;
    left -= (size_t)n;
  }
  _exit(0);
}

// ---------------------------------------------------------------------- the helper program
// Built with -O2 -fomit-frame-pointer and without -lunwind, so C++ exceptions go through
// libgcc_s's _Unwind_RaiseException; the same noexcept/terminate capture as above. Output:
// "regs RIP RSP RBP", "truth N pcs...", "stack LEN" + hex bytes, then its /proc/self/maps.
const char* const kHelperSrc = R"(
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <exception>
#include <stdexcept>
typedef int (*bt_fn)(void**, int);
static bt_fn bt;
static unsigned long top;
volatile int sink;
static unsigned char stk[256 << 10];
static void* truth[256];
__attribute__((noinline, noclone)) static void capture() {
  unsigned long rip, rsp, rbp;
  asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(rip), "=r"(rsp), "=r"(rbp));
  unsigned long len = top - rsp < sizeof stk ? top - rsp : sizeof stk;
  memcpy(stk, (void*)rsp, len);
  int n = bt(truth, 256);
  printf("regs %lx %lx %lx\ntruth %d", rip, rsp, rbp, n);
  for (int i = 0; i < n; i++) printf(" %lx", (unsigned long)truth[i]);
  printf("\nstack %lu\n", len);
  for (unsigned long i = 0; i < len; i++) printf("%02x", stk[i]);
  printf("\n");
  FILE* m = fopen("/proc/self/maps", "r");
  char line[4096];
  while (fgets(line, sizeof line, m)) fputs(line, stdout);
  fflush(stdout);
  _exit(0);
}
__attribute__((noinline, noclone)) void thrower() { sink = sink + 1; throw std::runtime_error("x"); }
__attribute__((noinline, noclone)) void nothrow() noexcept { thrower(); sink = sink + 1; }
__attribute__((noinline, noclone)) void c(int n) { volatile char p[56]; p[0] = n; nothrow(); sink = sink + p[0]; }
__attribute__((noinline, noclone)) void b(int n) { volatile char p[300]; p[0] = n; c(n); sink = sink + p[0]; }
int main() {
  void* h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (!h || !(bt = (bt_fn)dlsym(h, "unw_backtrace"))) return 2;
  FILE* m = fopen("/proc/self/maps", "r");
  char line[4096];
  unsigned long s, e;
  while (fgets(line, sizeof line, m))
    if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &s, &e) == 2) top = e;
  fclose(m);
  std::set_terminate(capture);
  b(3);
  return 1;
}
)";

Snapshot parse_helper(const std::string& out, std::vector<Mapping>& maps) {
  Snapshot s;
  std::istringstream in(out);
  std::string tag, hex;
  size_t n = 0;
  in >> tag >> std::hex >> s.rip >> s.rsp >> s.rbp;
  in >> tag >> std::dec >> n;
  for (size_t i = 0; i < n; i++) {
    uint64_t pc;
    in >> std::hex >> pc;
    s.truth.push_back(pc);
  }
  in >> tag >> std::dec >> n >> hex;
  for (size_t i = 0; i + 1 < hex.size() && s.stack.size() < n; i += 2)
    s.stack.push_back((uint8_t)std::stoul(hex.substr(i, 2), nullptr, 16));
  std::string rest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  maps = parse_maps(rest);
  return s;
}

}  // namespace

// ------------------------------------------------------------------------------------- tests

TEST_CASE("replay: a call chain on the main thread, down to _start", "[replay]") {
  Snapshot s = capture_chain(capture);
  auto maps = self_maps();
  Walk w = walk(s, maps);
  CHECK(w.stop == STP_STOP_END);
  CHECK(w.last_kind == STP_CFA_STOP);  // _start's `cfi_undefined rip`
  CHECK(compare_with_truth(w, s, maps, "main thread chain") >= 8);
}

TEST_CASE("replay: a call chain on a second thread, down to clone3", "[replay]") {
  Snapshot s;
  std::thread t([&] { s = capture_chain(capture); });
  t.join();
  auto maps = self_maps();
  Walk w = walk(s, maps);
  CHECK(w.stop == STP_STOP_END);
  CHECK(w.last_kind == STP_CFA_STOP);  // clone3's `cfi_undefined rip`
  CHECK(compare_with_truth(w, s, maps, "second thread chain") >= 6);
}

namespace {
void on_usr1(int) { capture(); }
void raise_usr1() { raise(SIGUSR1); }
}  // namespace

TEST_CASE("replay: through a signal frame (__restore_rt) into the interrupted chain", "[replay]") {
  struct sigaction sa{}, old{};
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  REQUIRE(sigaction(SIGUSR1, &sa, &old) == 0);
  Snapshot s = capture_chain(raise_usr1);
  sigaction(SIGUSR1, &old, nullptr);
  auto maps = self_maps();
  Walk w = walk(s, maps);
  CHECK(w.stop == STP_STOP_END);
  CHECK(w.by_kind[STP_CFA_SIGNAL] == 1);
  CHECK(compare_with_truth(w, s, maps, "signal handler") >= 12);
}

TEST_CASE("replay: 512-deep recursion, every frame", "[replay]") {
  note_stack_top();
  recurse(512, capture);
  Snapshot s = from_raw(g_raw);
  auto maps = self_maps();
  Walk w = walk(s, maps);
  CHECK(w.stop == STP_STOP_END);
  CHECK(compare_with_truth(w, s, maps, "512-deep recursion") >= 513);
}

TEST_CASE("replay: in a destructor run by an exception in flight", "[replay]") {
  // The destructor runs in throw_through's landing pad (its .cold part): the unwinder has already
  // installed that frame, so __cxa_throw and _Unwind_* are no longer on the stack (the next two
  // cases capture inside the unwinder).
  note_stack_top();
  Snapshot s;
  try {
    chain_a([] { throw_through(); });
  } catch (const std::runtime_error&) {
    s = from_raw(g_raw);
  }
  REQUIRE(!s.truth.empty());
  auto maps = self_maps();
  Walk w = walk(s, maps);
  CHECK(w.stop == STP_STOP_END);
  CHECK(compare_with_truth(w, s, maps, "dtor during unwinding") >= 8);
}

TEST_CASE("replay: inside the unwinder (terminate from a noexcept frame)", "[replay]") {
  // In a child: the terminate handler cannot return. The child's code mappings are the parent's.
  // The unwinder here is libunwind.so.8's _Unwind_RaiseException (see the top of the file).
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    g_pipe = fds[1];
    std::set_terminate(capture_and_exit);
    note_stack_top();
    chain_a([] { noexcept_frame(); });
    _exit(2);
  }
  close(fds[1]);
  static Raw raw;
  size_t got = 0;
  for (ssize_t n; got < sizeof raw && (n = read(fds[0], (char*)&raw + got, sizeof raw - got)) > 0;)
    got += (size_t)n;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(got == sizeof raw);
  Snapshot s = from_raw(raw);
  auto maps = self_maps();
  Walk w = walk(s, maps);
  CHECK(w.stop == STP_STOP_END);
  CHECK(compare_with_truth(w, s, maps, "terminate in _Unwind_*") >= 12);
}

TEST_CASE("replay: inside libgcc_s's unwinder, -fomit-frame-pointer helper", "[replay]") {
  TempDir dir;
  std::string src = dir.path + "/helper.cpp", exe = dir.path + "/helper";
  { std::ofstream(src) << kHelperSrc; }
  REQUIRE(run("g++ -O2 -fomit-frame-pointer -o " + exe + " " + src + " -ldl 2>&1") == "");
  std::vector<Mapping> maps;
  Snapshot s = parse_helper(run(exe), maps);
  REQUIRE(s.truth.size() > 5);
  const Mapping* libgcc = nullptr;
  for (const Mapping& m : maps)
    if (m.path.find("/libgcc_s.so") != std::string::npos) libgcc = &m;
  REQUIRE(libgcc);
  Walk w = walk(s, maps);
  CHECK(w.stop == STP_STOP_END);
  size_t in_libgcc = 0;
  for (uint64_t pc : w.pcs) in_libgcc += pc >= libgcc->start && pc < libgcc->end;
  CHECK(in_libgcc >= 2);  // _Unwind_RaiseException and its phase-2 helper
  CHECK(compare_with_truth(w, s, maps, "helper: libgcc_s unwinder") >= 10);

  // libgcc_s does have rows the compiler cannot express: the __builtin_eh_return tails of
  // _Unwind_RaiseException & co. (`mov %rcx,%rsp; pop %rcx; jmp *%rcx`: CFA in rcx, then an RA
  // rule). No return address lies there, only a sampled pc can: the walk must stop at once.
  const FileTables& ft = tables_for(libgcc->path);
  const stp_cfi_row* bad = nullptr;
  for (const stp_cfi_row& r : ft.cfi.rows)
    if (r.cfa_kind == STP_CFA_INVALID && r.fp_off != STP_INV_NO_FDE) {
      bad = &r;
      break;
    }
  REQUIRE(bad);
  Snapshot leaf = s;
  leaf.rip = ft.cfi.base + bad->pc + ft.elf->bias_for(libgcc->start, libgcc->pgoff);
  Walk stopped = walk(leaf, maps);
  CHECK(stopped.pcs.size() == 1);
  CHECK(stopped.stop == STP_STOP_INVALID_ROW);
  CHECK(stopped.last_reason == bad->fp_off);
  report("[replay] libgcc_s: a pc in %s stops with: %s (%s)\n", sym(maps, leaf.rip, true).c_str(),
              kStopNames[stopped.stop & STP_STOP_MASK], ukstap::unwind::invalid_reason_name(bad->fp_off));
}

namespace {
// The plain chain's snapshot with frame k's return address (read at sps[k] - 8) pointed at a page
// nothing maps; `good` is the walk of the intact snapshot.
constexpr size_t kCorrupt = 3;  // the return address into chain_c
constexpr uint64_t kBogus = 0x1230;
Snapshot corrupted(Walk& good, const std::vector<Mapping>& maps) {
  Snapshot s = capture_chain(capture);
  good = walk(s, maps);
  REQUIRE(good.pcs.size() > 8);
  std::string all = slurp("/proc/self/maps");  // every mapping, not only the executable ones
  std::istringstream in(all);
  for (std::string line; std::getline(in, line);) {
    unsigned long long lo = 0, hi = 0;
    std::sscanf(line.c_str(), "%llx-%llx", &lo, &hi);
    REQUIRE(!(kBogus >= lo && kBogus < hi));
  }
  uint64_t slot = good.sps[kCorrupt] - 8;
  REQUIRE(slot >= s.rsp);
  std::memcpy(s.stack.data() + (slot - s.rsp), &kBogus, 8);
  return s;
}
}  // namespace

TEST_CASE("replay: a corrupted return address ends the exact walk there", "[replay]") {
  auto maps = self_maps();
  Walk good;
  Snapshot s = corrupted(good, maps);
  Walk bad = walk(s, maps);
  REQUIRE(bad.pcs.size() > kCorrupt);
  CHECK(std::equal(bad.pcs.begin(), bad.pcs.begin() + kCorrupt, good.pcs.begin()));
  CHECK(bad.pcs[kCorrupt] == kBogus);
  // The bad pc is in no executable mapping: the walk ends there, no frame-pointer guess.
  CHECK(bad.exact == kCorrupt + 1);
  CHECK(bad.pcs.size() == kCorrupt + 1);
  CHECK(bad.fp_frames == 0);
  CHECK(bad.stop == STP_STOP_BAD_FRAME);
  report("[replay] corrupted RA at frame %zu: %zu frames (%zu past it), %s\n",
              kCorrupt, bad.pcs.size(), bad.pcs.size() - kCorrupt - 1, kStopNames[bad.stop & STP_STOP_MASK]);
}

// Fixed (runtime/bpf/stp_bpf_uwalk.h, stp_uwalk_frame): a pc in no mapping at all used to take
// the frame-pointer fallback like JIT code would, but after a DWARF walk through
// -fomit-frame-pointer code rbp is whatever the program keeps there (often a pointer to a stack
// object), so the fallback reads a "frame record" out of that object and invents frames (seen with
// the real rbp of the case above when it runs after the others). Here rbp points at such a record
// deterministically. Fix: take the fp fallback only for a pc inside an executable mapping without a
// table (JIT code); a pc outside every executable mapping stops with STP_STOP_BAD_FRAME (BPF: when
// neither stp__vma_find nor bpf_find_vma finds a VMA, or the VMA is not VM_EXEC).
TEST_CASE("replay: a corrupted return address never yields frames libunwind did not report",
          "[replay]") {
  auto maps = self_maps();
  Walk good;
  Snapshot s = corrupted(good, maps);
  // A stack object above the corrupted frame whose first words look like {saved fp, RA}.
  uint64_t obj = good.sps[kCorrupt + 1] + 16, words[2] = {0, s.rsp + 0x10000};
  std::memcpy(s.stack.data() + (obj - s.rsp), words, sizeof words);
  s.rbp = obj;
  Walk bad = walk(s, maps);
  CHECK(bad.pcs.size() == kCorrupt + 1);
  CHECK(bad.stop == STP_STOP_BAD_FRAME);
}
