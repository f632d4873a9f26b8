// `ukstap --profile`: the sampling script and the parsing of its output (profile_mode.h).
#include "driver/profile_mode.h"

#include <cstdlib>
#include <regex>
#include <sstream>

namespace ukstap::profile_mode {

namespace {

constexpr char kSampleTag[] = "@@ukstap-sample ";

// Live processes and threads of a -c/-x target's family the sampler can follow at once.
constexpr int kMaxFamily = 65536;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// x86_64: kernel addresses are in the upper half.
bool kernel_address(uint64_t a) { return a >= 0xffff800000000000ull; }

}  // namespace

std::string script(const Options& opts) {
  // -c/-x: the target process (all its threads) and the processes it forks, as perf record
  // follows children: profiling `make` or a shell script means profiling what they run. The
  // family is a kernel-side set, joined at fork (in the parent's context) and left when the
  // whole process is gone (group_dead: a leader that exits before its threads stays). The
  // tracepoint does not say whether the child is a thread: a thread's tid joins too (harmless,
  // samples are matched by tgid) and leaves when that thread exits. System-wide: everything but
  // ukstap itself (its reader would otherwise profile its own symbolization).
  bool targeted = !opts.target_cmd.empty() || opts.target_pid;
  std::string filter = targeted ? "pid() == target() || [pid()] in __ukstap_family"
                                : "pid() != stp_pid()";
  std::ostringstream s;
  if (targeted)
    s << "global __ukstap_family[" << kMaxFamily << "]\n"
      << "probe kernel.trace(\"sched:sched_process_fork\") {\n"
      << "  if (pid() == target() || [pid()] in __ukstap_family) __ukstap_family[$child_pid] = 1\n"
      << "}\n"
      << "probe kernel.trace(\"sched:sched_process_exit\") {\n"
      << "  if (tid() != pid()) delete __ukstap_family[tid()]\n"
      << "  if ($group_dead) delete __ukstap_family[pid()]\n"
      << "}\n";
  s << "probe perf.sw.cpu_clock.hz(" << opts.profile_hz << ") {\n"
    << "  if (" << filter << ") {\n"
    << "    printf(\"" << kSampleTag << "%d %d %s\\n\", pid(), tid(), execname())\n"
    << "    if (!user_mode()) print_backtrace()\n"
    << "    print_ubacktrace()\n"
    << "  }\n"
    << "}\n";
  return s.str();
}

std::vector<RawSample> parse_samples(const std::string& text) {
  // The frame forms of STAP-FORMATS.md §4:
  //   " 0xADDR : NAME+0xOFF/0xSIZE [MODULE]"  (optionally " (inexact)")
  //   " 0xADDR [MODULE+0xOFF/0xSIZE]"         (no symbol)
  //   " 0xADDR"                               (nothing known)
  static const std::regex with_sym(R"(^ 0x([0-9a-f]+) : (\S+?)(?:\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?)? \[([^\]]*)\]( \(inexact\))?$)");
  static const std::regex with_mod(R"(^ 0x([0-9a-f]+) \[([^\]+]*)(?:\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?)?\]( \(inexact\))?$)");
  static const std::regex bare(R"(^ 0x([0-9a-f]+)( \(inexact\))?$)");
  std::vector<RawSample> out;
  std::istringstream in(text);
  std::string line;
  RawSample* cur = nullptr;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.compare(0, sizeof kSampleTag - 1, kSampleTag) == 0) {
      out.emplace_back();
      cur = &out.back();
      std::istringstream h(line.substr(sizeof kSampleTag - 1));
      h >> cur->pid >> cur->tid;
      std::getline(h >> std::ws, cur->comm);
      continue;
    }
    if (!cur) continue;
    RawFrame f;
    if (std::regex_match(line, m, with_sym)) {
      f.addr = std::strtoull(m[1].str().c_str(), nullptr, 16);
      f.name = m[2].str();
      f.module = m[3].str();
      f.inexact = m[4].matched;
    } else if (std::regex_match(line, m, with_mod)) {
      f.addr = std::strtoull(m[1].str().c_str(), nullptr, 16);
      f.module = m[2].str();
      f.inexact = m[3].matched;
    } else if (std::regex_match(line, m, bare)) {
      f.addr = std::strtoull(m[1].str().c_str(), nullptr, 16);
      f.inexact = m[2].matched;
    } else {
      continue;  // "<no user backtrace at ...>" and the like: no frame
    }
    f.kernel = kernel_address(f.addr);
    cur->frames.push_back(std::move(f));
  }
  return out;
}

std::string format_for(const Options& opts) {
  if (!opts.profile_format.empty()) return opts.profile_format;
  const std::string& o = opts.output_file;
  if (ends_with(o, ".svg")) return "svg";
  if (ends_with(o, ".pb.gz") || ends_with(o, ".pprof") || ends_with(o, ".pb")) return "pprof";
  return "folded";
}

}  // namespace ukstap::profile_mode
