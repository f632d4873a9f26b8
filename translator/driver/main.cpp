// ukstap: the command-line driver. Parses options, then runs the passes in order
// (driver/passes.h), stopping after -p N. Exit status follows SystemTap: 0 on success,
// 1 for bad options, a failed pass or a -l/-L without a match.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "driver/diagnostics.h"
#include "driver/interactive.h"
#include "driver/options.h"
#include "driver/passes.h"
#include "loader/passes.h"
#include "loader/profile_run.h"
#include "ctf-writer/writer_main.h"
#include "driver/privilege.h"
#include "driver/profile_mode.h"
#include "driver/run_session.h"
#include "driver/session.h"
#include "codegen/module_info.h"
#include "probes/provider.h"
#include "loader/interrupt.h"
#include "loader/util.h"

namespace ukstap {
namespace {

// "using NNNvirt/NNNres/NNNshr/NNNdata kb, in NNusr/NNsys/NNreal ms." for -v pass summaries,
// as stap prints them.
class PassTimer {
 public:
  PassTimer() { reset(); }
  void reset() {
    start_ = std::chrono::steady_clock::now();
    ::getrusage(RUSAGE_SELF, &ru_);
  }
  std::string usage() const {
    struct rusage now;
    ::getrusage(RUSAGE_SELF, &now);
    auto ms = [](const timeval& a, const timeval& b) {
      return (b.tv_sec - a.tv_sec) * 1000L + (b.tv_usec - a.tv_usec) / 1000L;
    };
    long real = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - start_)
                    .count();
    long page_kb = ::sysconf(_SC_PAGESIZE) / 1024;
    long virt = 0, res = 0, shr = 0, text = 0, lib = 0, data = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld %ld %ld %ld %ld %ld", &virt, &res, &shr, &text, &lib, &data) != 6)
        virt = res = shr = data = 0;
      std::fclose(f);
    }
    return "using " + std::to_string(virt * page_kb) + "virt/" + std::to_string(res * page_kb) +
           "res/" + std::to_string(shr * page_kb) + "shr/" + std::to_string(data * page_kb) +
           "data kb, in " + std::to_string(ms(ru_.ru_utime, now.ru_utime)) + "usr/" +
           std::to_string(ms(ru_.ru_stime, now.ru_stime)) + "sys/" + std::to_string(real) +
           "real ms.";
  }

 private:
  std::chrono::steady_clock::time_point start_;
  struct rusage ru_;
};

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool colors_wanted() {
  if (!::isatty(STDERR_FILENO)) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  const char* colors = std::getenv("SYSTEMTAP_COLORS");
  return !(colors && !*colors);  // SYSTEMTAP_COLORS="" turns colors off, as in stap
}

// The script file must exist and be readable before pass 1 starts: one clear line otherwise.
bool check_script_file(const std::string& path, std::ostream& err) {
  if (path == "-") return true;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err << "ukstap: cannot open script file '" << path << "': " << std::strerror(errno) << "\n";
    return false;
  }
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode);
  ::close(fd);
  if (!ok) err << "ukstap: cannot read script file '" << path << "': " << std::strerror(EISDIR) << "\n";
  return ok;
}

int pass1_failed(Session& s) {
  s.diag.summarize_parse_errors();
  s.diag.pass_failed(1, "parse");
  return 1;
}

// Pass 1 with -v reporting.
int run_pass1(Session& s) {
  PassTimer t;
  int rc;
  try {
    rc = pass1_parse(s);
  } catch (const ParseError& e) {  // pass 1 should report its own errors; just in case
    s.diag.parse_error(e);
    rc = 1;
  }
  if (rc != 0 || s.diag.parse_errors() > 0) return pass1_failed(s);
  if (s.opts.verbose > 0) {
    s.diag.stream() << "Pass 1: parsed user script and "
                    << plural(s.tapset_files.size(), "library script", "library scripts") << " "
                    << t.usage() << "\n";
  }
  return 0;
}

int run_pass2(Session& s) {
  PassTimer t;
  int rc;
  try {
    rc = pass2_elaborate(s);
  } catch (const SemanticError& e) {  // pass 2 should report its own errors; just in case
    s.diag.semantic_error(e);
    rc = 1;
  }
  // pass2_elaborate prints the suppressed-duplicates summary itself.
  if (rc != 0 || s.diag.semantic_errors() > 0) {
    s.diag.pass_failed(2, "analysis");
    return 1;
  }
  if (s.opts.verbose > 0) {
    s.diag.stream() << "Pass 2: analyzed script: " << plural(s.probes.size(), "probe", "probes")
                    << ", " << plural(s.functions.size(), "function", "functions") << ", "
                    << plural(s.embeds.size(), "embed", "embeds") << ", "
                    << plural(s.globals.size(), "global", "globals") << " " << t.usage() << "\n";
  }
  return 0;
}

// -W (SystemTap's "treat all warnings as errors"): a pass that printed a warning fails.
bool warnings_fail(Session& s, int pass, const char* what) {
  if (!s.opts.warnings_as_errors || s.diag.warnings() == 0) return false;
  s.diag.pass_failed(pass, what);
  return true;
}

int flush_stdout(int rc) {
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "ukstap: error writing the output: " << std::strerror(errno ? errno : EIO) << "\n";
    return 1;
  }
  return rc;
}

// One `run` of the interactive prompt, in the child that runs it (driver/interactive_run.h):
// ukstap's own interrupt handlers and --disable-cache are the loader's, which the prompt (a
// translator-library part, also linked into the fuzz target) does not link.
int run_prompted(Session& s) {
  loader::install_interrupt_handlers();
  if (s.opts.disable_cache) loader::disable_cache();
  return run_session(s);
}

int run(int argc, char** argv) {
  // SIGINT/SIGTERM end every pass promptly (loader/interrupt.h); exit status 1 before
  // pass 5 runs the probes.
  Options opts;
  CommandLine cl = parse_command_line(argc, argv, opts, std::cerr);
  // -i: the prompt keeps its own ^C (a run stops, ukstap stays); each run installs these in
  // the process that runs it (driver/interactive_run.h).
  if (cl.action == CommandLine::Action::Interactive) return interactive::run_prompt(opts, run_prompted);
  loader::install_interrupt_handlers();
  switch (cl.action) {
    case CommandLine::Action::Error: return cl.exit_code;
    case CommandLine::Action::Help: print_usage(std::cout); return flush_stdout(0);
    case CommandLine::Action::Version: print_version(std::cout); return flush_stdout(0);
    default: break;
  }
  // Refused before pass 1 rather than after compiling (driver/privilege.h).
  if (std::string why = cl.action == CommandLine::Action::Run ? privilege_problem(opts.last_pass) : "";
      !why.empty()) {
    std::cerr << "ukstap: " << why << "\n";
    return 1;
  }

  Session s(std::cerr);
  s.opts = std::move(opts);
  s.diag.suppress_warnings = s.opts.suppress_warnings;
  s.diag.verbose = s.opts.verbose;
  s.diag.color = colors_wanted();
  if (s.opts.disable_cache) loader::disable_cache();

  switch (cl.action) {
    case CommandLine::Action::DumpProbeTypes:
      probes::dump_probe_types(std::cout);
      return flush_stdout(0);
    case CommandLine::Action::ListProbes:
    case CommandLine::Action::DumpFunctions: {
      // Both need the tapsets parsed. Pass 1 wants a user script (an empty one is an error,
      // as in stap); this placeholder is parsed but never elaborated: list_probes parses the
      // pattern itself and dump_functions only reads the tapsets.
      s.opts.have_script_text = true;
      s.opts.script_text = "probe never {}\n";
      if (run_pass1(s) != 0) return 1;
      if (cl.action == CommandLine::Action::DumpFunctions) {
        dump_functions(s, std::cout);
        return flush_stdout(0);
      }
      int rc = list_probes(s, std::cout);
      if (s.diag.parse_errors() > 0) return pass1_failed(s);  // a malformed PATTERN
      return flush_stdout(rc == 0 ? 0 : 1);
    }
    default: break;
  }

  return run_session(s);
}

}  // namespace

// Passes 1 to opts.last_pass of the script the session's options name (driver/run_session.h).
int run_session(Session& s) {
  // --profile: the driver writes the script; pass 5 collects its samples (profile_mode.h).
  std::string profile_dest, profile_format;
  if (s.opts.profile_hz > 0) {
    profile_dest = s.opts.output_file;
    profile_format = profile_mode::format_for(s.opts);
    auto exit = kernel_features::GroupExit::GroupDeadArg;
    if (!s.opts.target_cmd.empty() || s.opts.target_pid)  // only a target's family needs it
      exit = kernel_features::choose_group_exit(
          kernel_features::Running::get().exit_group_dead());
    s.opts.script_text = profile_mode::script(s.opts, exit);
    s.opts.have_script_text = true;
  }

  if (!s.opts.have_script_text && !check_script_file(s.opts.script_file, std::cerr)) return 1;

  if (run_pass1(s) != 0 || loader::interrupted()) return 1;
  if (warnings_fail(s, 1, "parse")) return 1;
  if (s.opts.last_pass == 1) {
    print_pass1(s, std::cout);
    return flush_stdout(0);
  }

  if (run_pass2(s) != 0 || loader::interrupted()) return 1;
  if (warnings_fail(s, 2, "analysis")) return 1;
  if (s.opts.last_pass == 2) {
    print_pass2(s, std::cout);
    return flush_stdout(0);
  }

  PassTimer pass3_timer;
  if (pass3_translate(s) != 0) {
    s.diag.pass_failed(3, "translation");
    return 1;
  }
  // stap names its _src.c file here; ukstap's C stays in memory until pass 4 compiles it (-p3
  // prints it).
  if (s.opts.verbose > 0 && s.module)
    s.diag.stream() << "Pass 3: translated to C (" << s.module->source.size() << " bytes) "
                    << pass3_timer.usage() << "\n";
  if (loader::interrupted()) return 1;
  if (warnings_fail(s, 3, "translation")) return 1;
  if (s.opts.last_pass == 3) {
    print_pass3(s, std::cout);
    return flush_stdout(0);
  }

  // Pass 4 reports its own failure ("Pass 4: compilation failed.") and its -v lines.
  std::cout.flush();
  if (pass4_compile(s) != 0 || loader::interrupted()) return 1;
  if (warnings_fail(s, 4, "compilation")) return 1;
  if (s.opts.last_pass == 4) {
    // The BPF object; a script with only user-space probes (begin/end/timers) has just module.so.
    std::cout << (s.bpf_object_path.empty() ? s.native_object_path : s.bpf_object_path) << "\n";
    return flush_stdout(0);
  }

  // Pass 5 prints its own diagnostics (ERROR/WARNING lines, "Pass 5: run failed.").
  // --profile --ctf=DIR: the sampling script's events go to the trace like any script's.
  if (s.opts.profile_hz > 0 && !s.opts.output_as_events()) {
    int rc = loader::run_profile(s, profile_format, profile_dest);
    return rc != 0 ? rc : flush_stdout(0);
  }
  int rc = pass5_run(s);
  std::cout.flush();
  return rc;
}

}  // namespace ukstap

int main(int argc, char** argv) {
  // `--ctf=DIR`'s writer process: ukstap re-executed by ctf-writer/trace_writer.cpp under this
  // name, reading the trace's events from fd 3 (ctf-writer/writer_main.h).
  if (argc == 2 && std::strcmp(argv[0], "ukstap-ctf-writer") == 0) return ukstap::ctf::writer_main(3, argv[1]);
  // A closed stdin becomes /dev/null: otherwise the first file ukstap opens would be fd 0, and
  // input.char/input.line (loader/input_reader.h) or the -c command would read it.
  if (::fcntl(STDIN_FILENO, F_GETFD) < 0 && errno == EBADF) {
    int fd = ::open("/dev/null", O_RDONLY);
    if (fd > STDIN_FILENO) ::close(fd);  // fd 0 was taken meanwhile: leave it
  }
  // Never a stack trace or an abort message: every escape becomes one line and exit 1.
  try {
    return ukstap::run(argc, argv);
  } catch (const ukstap::ParseError& e) {
    std::cerr << "ukstap: parse error: " << e.what() << "\n";
  } catch (const ukstap::SemanticError& e) {
    std::cerr << "ukstap: semantic error: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "ukstap: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "ukstap: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "ukstap: internal error: unknown exception\n";
  }
  return 1;
}
