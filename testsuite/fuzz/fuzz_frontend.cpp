// libFuzzer target for the front end: the input is a script given as with -e. It is parsed
// (pass 1) and, when that succeeds, printed as -p1 does, elaborated (pass 2) and printed as
// -p2 does, then translated to C (pass 3) and printed as -p3 does. All diagnostics and outputs
// are discarded; only crashes, sanitizer reports, hangs, leaks and runaway memory count.
// Whether the C of pass 3 compiles is checked outside libFuzzer (clang is far too slow per
// input): testsuite/fuzz/compile-check.sh runs `ukstap -p4` on the corpus after the fuzz run.
//
// Structure-aware mutations (LLVMFuzzerCustomMutator below): besides libFuzzer's byte-level
// mutations, some mutations repeat a construct many times at a random place: nested
// parentheses, unary operators, ifs and blocks, and long operator chains, the shapes that
// exhausted the stack of recursive passes before the parser's nesting limit
// (parse/parser.h kMaxNesting) counted chains.
//
// Speed: pass1_parse() would read and parse the whole tapsets/ tree for every input (~7 exec/s
// under ASan). Instead the input is parsed with the same parser entry points pass1_parse() uses,
// next to a small fixed tapset (kTapsets below) that still exercises what pass 2 does with
// tapsets: .stpm macros, alias expansion (entry/return, multi-location, optional `?`,
// sufficient `!`, conditions, aliases of aliases, epilogue aliases `+=`, wildcard matches like
// syscall.* and syscall.*.return), private functions and globals, overloads, embedded-C
// functions with pragmas, file-level %{ %} and tapset globals. The tracefs/ELF cache
// (Session::probe_cache) is shared by all inputs, so each tracepoint format or binary is read
// once per fuzzing process.
//
//   make fuzz && testsuite/fuzz/fuzz_frontend -dict=testsuite/fuzz/stap.dict corpus-dir...
//
// UKSTAP_FUZZ_FULL_TAPSETS=1 in the environment uses the real tapsets (pass1_parse) instead.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <iostream>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

#include "driver/diagnostics.h"
#include "driver/passes.h"
#include "driver/session.h"
#include "parse/parser.h"
#include "probes/cache.h"

namespace {

class NullBuf : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// The macro library (as a tapsets/*.stpm file).
const char kMacros[] = R"STP(
@define SYSC_RETVALSTR(val)
%(
	retval = @val
	retstr = return_str(1, retval)
%)
@define SYSC_RETVALSTR2(val) %( retval = @val  retstr = return_str(2, retval) %)
@define __syscall_string_trunc %( 50 %)
@define __O_CREAT %( 64 %)
@define __fuzz_pick(a, b) %( %( $# > 0 %? @a %: @b %) %)
)STP";

struct TapsetFile {
  const char* name;
  const char* text;
};

const TapsetFile kTapsets[] = {
    {"fuzz-tapsets/syscalls.stp", R"STP(
%{
#define FUZZ_SYSCALLS 1
%}

private global __sys_seen
global syscall_probes_total = 0

probe syscall.read = kernel.trace("syscalls:sys_enter_read")
{
	name = "read"
	fd = __int32($fd)
	buf_uaddr = $buf
	count = $count
	argstr = sprintf("%d, %p, %u", fd, buf_uaddr, count)
}
probe syscall.read.return = kernel.trace("syscalls:sys_exit_read")
{
	name = "read"
	@SYSC_RETVALSTR($ret)
}
probe syscall.write = kernel.trace("syscalls:sys_enter_write")
{
	name = "write"
	fd = __int32($fd)
	buf_uaddr = $buf
	count = $count
	buf_str = user_buffer_quoted(buf_uaddr, count, @__syscall_string_trunc)
	argstr = sprintf("%d, %s, %u", fd, buf_str, count)
}
probe syscall.write.return = kernel.trace("syscalls:sys_exit_write")
{
	name = "write"
	@SYSC_RETVALSTR($ret)
}
probe syscall.openat = kernel.trace("syscalls:sys_enter_openat")
{
	name = "openat"
	dfd = __int32($dfd)
	filename = user_string_quoted($filename)
	flags = __int32($flags)
	mode = __uint32($mode)
	if (flags & @__O_CREAT)
		argstr = sprintf("%d, %s, %s, %#o", dfd, filename, __open_flags(flags), mode)
	else
		argstr = sprintf("%d, %s, %s", dfd, filename, __open_flags(flags))
}
probe syscall.openat.return = kernel.trace("syscalls:sys_exit_openat")
{
	name = "openat"
	@SYSC_RETVALSTR($ret)
}
probe syscall.getdents = kernel.trace("syscalls:sys_enter_getdents64"),
                         kernel.trace("syscalls:sys_enter_getdents") ?
{
	name = "getdents"
	fd = __int32($fd)
	dirp_uaddr = $dirent
	count = __uint32($count)
	argstr = sprintf("%d, %p, %u", fd, dirp_uaddr, count)
}
probe syscall.getdents.return = kernel.trace("syscalls:sys_exit_getdents64"),
                                kernel.trace("syscalls:sys_exit_getdents") ?
{
	name = "getdents"
	@SYSC_RETVALSTR($ret)
}
probe syscall.mmap2 = kernel.trace("syscalls:sys_enter_mmap")
{
	name = "mmap2"
	start = $addr
	len = $len
	argstr = sprintf("%p, %u", start, len)
}
probe syscall.mmap2.return = kernel.trace("syscalls:sys_exit_mmap")
{
	name = "mmap2"
	@SYSC_RETVALSTR2($ret)
}
probe syscall.fuzz_absent = kernel.trace("syscalls:sys_enter_fuzz_absent") ? { name = "fuzz_absent" }
probe syscall.fuzz_absent.return = kernel.trace("syscalls:sys_exit_fuzz_absent") ? { name = "fuzz_absent" }

probe syscall_any = kernel.trace("raw_syscalls:sys_enter")
{
	syscall_nr = $id
	name = syscall_name(syscall_nr)
}
probe syscall_any.return = kernel.trace("raw_syscalls:sys_exit")
{
	syscall_nr = $id
	name = syscall_name(syscall_nr)
	retval = $ret
}

// Aliases of aliases, sufficient and optional locations, conditions, epilogues.
probe fuzz.io = syscall.read, syscall.write { io = 1; __sys_seen[name]++ }
probe fuzz.io.return = syscall.read.return, syscall.write.return { io = 1 }
probe fuzz.first = syscall.getdents !, syscall.read { first = 1 }
probe fuzz.cond = syscall.openat if (syscall_probes_total >= 0) { cond = 1 }
probe fuzz.maybe = kernel.trace("nosuch_fuzz_system:nosuch") ?, begin { maybe = 1 }
probe fuzz.io += syscall.read { syscall_probes_total++ }
probe fuzz.tick = timer.ms(100), timer.profile ? { tick = jiffies() }
probe fuzz.start = begin(-1) { start = gettimeofday_us() }
probe fuzz.stop = end, error { stop = 1 }
probe fuzz.proc = process("/bin/true").function("main") ?, process("/bin/true").begin ? { proc = pid() }
probe fuzz.perf = perf.sw.cpu_clock.sample(1000000) ? { perf = 1 }

function syscall_name:string (nr:long)
{
	n = __syscall_name_tbl(nr)
	if (n == "")
		return sprintf("syscall_%d", nr)
	return n
}

private function __syscall_name_tbl:string (nr:long)
{
	if (nr == 0) return "read"
	if (nr == 1) return "write"
	if (nr == 257) return "openat"
	return ""
}

private function __open_flags:string (f:long)
{
	s = (f & 3) == 0 ? "O_RDONLY" : (f & 3) == 1 ? "O_WRONLY" : "O_RDWR"
	if (f & @__O_CREAT) s .= "|O_CREAT"
	return s
}
)STP"},
    {"fuzz-tapsets/library.stp", R"STP(
%{
#include <fuzz_library.h>
%}

global __fuzz_errors[16]
private global __fuzz_private = 0

function log (msg:string)
%{ /* unprivileged */
	_stp_log(STAP_ARG_msg);
%}
function warn (msg:string) %{ /* unprivileged */ _stp_warn(STAP_ARG_msg); %}
function exit () %{ /* unprivileged */ _stp_exit(); %}
function error (msg:string) %{ /* unprivileged */ STAP_ERROR_NOLOC(STAP_ARG_msg); %}
function assert (expr:long, msg:string) { if (!expr) error(msg) }
function assert (expr:long) { assert(expr, "Assertion failed") }

function execname:string () %{ /* pure */ /* unprivileged */ /* stable */ STAP_RETVALUE[0] = 0; %}
function pid:long () %{ /* pure */ /* unprivileged */ /* stable */ STAP_RETURN(1); %}
function tid:long () %{ /* pure */ /* unprivileged */ /* stable */ STAP_RETURN(1); %}
function cpu:long () %{ /* pure */ /* unprivileged */ STAP_RETURN(0); %}
function pp:string () %{ /* pure */ /* unprivileged */ /* stable */ STAP_RETVALUE[0] = 0; %}
function pn:string () %{ /* pure */ /* unprivileged */ /* stable */ STAP_RETVALUE[0] = 0; %}
function probefunc:string () %{ /* pure */ /* unprivileged */ STAP_RETVALUE[0] = 0; %}
function target:long () %{ /* pure */ /* unprivileged */ STAP_RETURN(0); %}
function jiffies:long () %{ /* pure */ /* unprivileged */ STAP_RETURN(0); %}
function gettimeofday_ns:long () %{ /* pure */ /* unprivileged */ STAP_RETURN(0); %}
function gettimeofday_us:long () { return gettimeofday_ns() / 1000 }
function gettimeofday_s:long () { return gettimeofday_ns() / 1000000000 }

function __int32:long (val:long) %{ /* pure */ /* unprivileged */ STAP_RETURN((int)STAP_ARG_val); %}
function __uint32:long (val:long) %{ /* pure */ /* unprivileged */ STAP_RETURN((unsigned)STAP_ARG_val); %}
function user_string:string (addr:long) { return __user_string(addr, "", 1) }
function user_string:string (addr:long, err_msg:string) { return __user_string(addr, err_msg, 0) }
function user_string_n:string (addr:long, n:long)
%{ /* pure */ /* myproc-unprivileged */ STAP_RETVALUE[0] = 0; %}
function user_string_quoted:string (addr:long)
%{ /* pure */ /* myproc-unprivileged */ STAP_RETVALUE[0] = 0; %}
function user_buffer_quoted:string (addr:long, inlen:long, outlen:long)
%{ /* pure */ /* myproc-unprivileged */ STAP_RETVALUE[0] = 0; %}
private function __user_string:string (addr:long, err_msg:string, strict:long)
%{ /* pure */ /* myproc-unprivileged */ STAP_RETVALUE[0] = 0; %}

function errno_str:string (err:long) { return err == 2 ? "ENOENT" : "" }
function return_str:string (format:long, ret:long)
{
	if (ret < 0 && ret > -134) {
		e = errno_str(-ret)
		if (e != "")
			return sprintf("%d (%s)", ret, e)
	}
	if (format == 2)
		return sprintf("0x%x", ret)
	return sprint(ret)
}
function print_ubacktrace () %{ /* myproc-unprivileged */ %}
function ubacktrace:string () %{ /* myproc-unprivileged */ STAP_RETVALUE[0] = 0; %}
function fuzz_record (what:string) { __fuzz_errors[what] <<< ++__fuzz_private }
)STP"},
};

std::ostream& null_stream() {
  static NullBuf buf;
  static std::ostream out(&buf);
  return out;
}

// One per process: tracefs formats and ELF/DWARF digests read for earlier inputs.
std::shared_ptr<ukstap::probes::Cache>& shared_cache() {
  static auto cache = std::make_shared<ukstap::probes::Cache>();
  return cache;
}

// Pass 1 as pass1_parse() does it, with the fixed tapset. False on a parse error.
bool parse_with_mini_tapset(ukstap::Session& s, const ukstap::parse::PreprocEnv& env) {
  using namespace ukstap;
  parse::MacroLibrary lib;
  bool ok = parse::parse_library_macros(s, s.add_source("fuzz-tapsets/fuzz.stpm", kMacros, true),
                                        lib, env);
  s.user_file = parse::parse_file(s, s.add_source("<input>", s.opts.script_text, false), lib, env);
  ok = ok && s.user_file;
  for (const TapsetFile& t : kTapsets) {
    if (ast::StapFile* f = parse::parse_file(s, s.add_source(t.name, t.text, true), lib, env))
      s.tapset_files.push_back(f);
    else
      ok = false;
  }
  return ok && s.diag.parse_errors() == 0;
}

bool env_flag(const char* name) {
  const char* e = std::getenv(name);
  return e && *e && *e != '0';
}

// A script that uses every alias of the fixed tapset.
const char kSelfCheck[] = R"STP(
global g, a
probe syscall.*, syscall.*.return, syscall_any, syscall_any.return, fuzz.io, fuzz.io.return,
      fuzz.first, fuzz.cond, fuzz.maybe, fuzz.tick, fuzz.start, fuzz.stop, fuzz.proc, fuzz.perf
{
  g++; a[pn(), execname()] <<< pid(); log(user_string(0) . user_string(0, "x") . return_str(1, -2))
  assert(1); assert(1, "m"); print_ubacktrace(); fuzz_record(pp())
}
)STP";

}  // namespace

// The fixed tapset must parse, or fuzzing would only ever reach parse errors; it should also
// elaborate (that needs tracefs, so a failure there is only reported).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (env_flag("UKSTAP_FUZZ_FULL_TAPSETS")) return 0;
  ukstap::Session s(std::cerr);
  s.opts.have_script_text = true;
  s.opts.script_text = kSelfCheck;
  s.opts.last_pass = 2;
  s.probe_cache = shared_cache();
  ukstap::parse::PreprocEnv env = ukstap::parse::PreprocEnv::from_session(s);
  if (!parse_with_mini_tapset(s, env)) {
    std::cerr << "fuzz_frontend: the fixed tapset in fuzz_frontend.cpp does not parse\n";
    std::abort();
  }
  if (ukstap::pass2_elaborate(s) != 0)
    std::cerr << "fuzz_frontend: warning: the self-check script does not elaborate (above); "
                 "pass 2 coverage will be shallow\n";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool full_tapsets = env_flag("UKSTAP_FUZZ_FULL_TAPSETS");
  // UKSTAP_FUZZ_VERBOSE=1: diagnostics and outputs on stderr (to look at one input).
  static const bool verbose = env_flag("UKSTAP_FUZZ_VERBOSE");
  std::ostream& null_out = verbose ? std::cerr : null_stream();

  ukstap::Session s(null_out);
  s.opts.have_script_text = true;
  s.opts.script_text.assign(reinterpret_cast<const char*>(data), size);
  s.opts.last_pass = 3;
  s.probe_cache = shared_cache();
  try {
    bool parsed;
    if (full_tapsets) {
      parsed = ukstap::pass1_parse(s) == 0 && s.diag.parse_errors() == 0;
    } else {
      static const ukstap::parse::PreprocEnv env = ukstap::parse::PreprocEnv::from_session(s);
      parsed = parse_with_mini_tapset(s, env);
    }
    if (parsed) {
      ukstap::print_pass1(s, null_out);
      if (ukstap::pass2_elaborate(s) == 0 && s.diag.semantic_errors() == 0) {
        ukstap::print_pass2(s, null_out);
        if (ukstap::pass3_translate(s) == 0) ukstap::print_pass3(s, null_out);
      }
    }
  } catch (const ukstap::ParseError&) {
    // Passes should report through s.diag rather than throw, but escaping user errors are
    // not crashes; anything else (std::logic_error, bad_alloc, ...) propagates and is reported.
  } catch (const ukstap::SemanticError&) {
  }
  return 0;
}

namespace {

// Text that nests one level per repetition (open, close) or chains one operator per repetition.
struct Shape {
  const char* open;
  const char* close;
};
const Shape kShapes[] = {
    {"(", ")"},         {"- ", ""},         {"!", ""},          {"~", ""},
    {"if (1) ", ""},    {"{", "}"},         {"1 + ", ""},       {"x . ", ""},
    {"1 ? ", " : 0"},   {"y ? ", " : 0"},   {"a[", "]"},        {"f(", ")"},
    {"1 || ", ""},      {"1 && ", ""},      {"1 < ", ""},       {"1 << ", ""},
    {"1 * ", ""},       {"1 | ", ""},       {"x = ", ""},       {"while (0) ", ""},
    {"%( 1 == 1 %? ", " %)"}, {"@defined($x) ? ", " : 0"}, {"try { ", " } catch { }"},
};

// Inserts `n` copies of a shape's open text at `at` and of its close text after the next
// `span` bytes (so the construct wraps what was there). Returns the new size.
size_t insert_shape(uint8_t* data, size_t size, size_t max_size, std::mt19937& rng) {
  const Shape& sh = kShapes[rng() % (sizeof kShapes / sizeof kShapes[0])];
  // Around the nesting limit most of the time, sometimes far beyond it.
  static const int kCounts[] = {2, 10, 100, 990, 1000, 1001, 1010, 3000};
  int n = kCounts[rng() % (sizeof kCounts / sizeof kCounts[0])];
  size_t open_len = std::strlen(sh.open), close_len = std::strlen(sh.close);
  size_t at = size ? rng() % (size + 1) : 0;
  size_t span = size > at ? rng() % (size - at + 1) : 0;
  size_t grow = n * (open_len + close_len);
  if (size + grow > max_size) {
    n = static_cast<int>((max_size - size) / (open_len + close_len));
    if (n <= 0) return size;
    grow = n * (open_len + close_len);
  }
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string opens, closes;
  for (int i = 0; i < n; ++i) {
    opens += sh.open;
    closes += sh.close;
  }
  text.insert(at + span, closes);
  text.insert(at, opens);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// One mutation in eight repeats a construct (insert_shape); the rest are libFuzzer's own.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937 rng(seed);
  if (rng() % 8 == 0) {
    size_t n = insert_shape(data, size, max_size, rng);
    if (n != size) return n;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
