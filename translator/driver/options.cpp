#include "driver/options.h"

#include "driver/option_checks.h"

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <getopt.h>
#include <sys/utsname.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>

#if __has_include(<elfutils/version.h>)
#include <elfutils/version.h>
#endif

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0-dev"
#endif

namespace ukstap {

const char* const kHelpHint = "Try 'ukstap --help' for more information.";

namespace {

enum LongOnly {
  OPT_LDD = 256,
  OPT_DUMP_FUNCTIONS,
  OPT_DUMP_PROBE_TYPES,
  OPT_PROFILE,
  OPT_FORMAT,
  OPT_ALL_MODULES,
  OPT_COMPATIBLE,
  OPT_SKIP_BADVARS,
  OPT_DISABLE_CACHE,
  OPT_CHECK_VERSION,
  OPT_PROLOGUE_SEARCHING,
  OPT_RUNTIME,
  OPT_BPF,
  OPT_DYNINST,
  OPT_DEMANGLE,
  OPT_NO_DEMANGLE,
  OPT_CTF,
  OPT_LTTNG,
  OPT_SUPPRESS_HANDLER_ERRORS,
  OPT_SUPPRESS_TIME_LIMITS,
  OPT_POISON_CACHE,
  OPT_PRIVILEGE,
  OPT_UNPRIVILEGED,
};

const char kShortOpts[] = ":hVvp:e:c:x:o:d:km:D:G:I:T:l:L:gwuWPS:itbs:Fr:a:";

const struct option kLongOpts[] = {
    {"help", no_argument, nullptr, 'h'},
    {"version", no_argument, nullptr, 'V'},
    {"ldd", no_argument, nullptr, OPT_LDD},
    {"dump-functions", no_argument, nullptr, OPT_DUMP_FUNCTIONS},
    {"dump-probe-types", no_argument, nullptr, OPT_DUMP_PROBE_TYPES},
    {"profile", optional_argument, nullptr, OPT_PROFILE},
    {"format", required_argument, nullptr, OPT_FORMAT},
    {"all-modules", no_argument, nullptr, OPT_ALL_MODULES},
    {"compatible", required_argument, nullptr, OPT_COMPATIBLE},
    {"skip-badvars", no_argument, nullptr, OPT_SKIP_BADVARS},
    {"disable-cache", no_argument, nullptr, OPT_DISABLE_CACHE},
    {"check-version", no_argument, nullptr, OPT_CHECK_VERSION},
    {"prologue-searching", optional_argument, nullptr, OPT_PROLOGUE_SEARCHING},
    {"runtime", required_argument, nullptr, OPT_RUNTIME},
    {"bpf", no_argument, nullptr, OPT_BPF},
    {"dyninst", no_argument, nullptr, OPT_DYNINST},
    {"interactive", no_argument, nullptr, 'i'},
    {"demangle", no_argument, nullptr, OPT_DEMANGLE},
    {"no-demangle", no_argument, nullptr, OPT_NO_DEMANGLE},
    {"ctf", required_argument, nullptr, OPT_CTF},
    {"lttng", no_argument, nullptr, OPT_LTTNG},
    {"suppress-handler-errors", no_argument, nullptr, OPT_SUPPRESS_HANDLER_ERRORS},
    {"suppress-time-limits", no_argument, nullptr, OPT_SUPPRESS_TIME_LIMITS},
    {"poison-cache", no_argument, nullptr, OPT_POISON_CACHE},
    {"privilege", required_argument, nullptr, OPT_PRIVILEGE},
    {"unprivileged", no_argument, nullptr, OPT_UNPRIVILEGED},
    {nullptr, 0, nullptr, 0},
};

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// Whole-string decimal integer in [lo, hi].
bool parse_long(const char* text, long lo, long hi, long& out) {
  if (!text || !*text) return false;
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

// -S SIZE[,N] (staprun's meaning): SIZE in megabytes per output file, N the files kept. "" or
// the reason it is invalid.
std::string parse_output_size(const char* text, long& size_mb, long& files_max) {
  std::string t = text, size = t, n;
  if (size_t comma = t.find(','); comma != std::string::npos) {
    size = t.substr(0, comma);
    n = t.substr(comma + 1);
  }
  // 2^43 MB: far beyond any file, and SIZE << 20 still fits in 64 bits.
  if (!parse_long(size.c_str(), 1, 1L << 43, size_mb))
    return "Invalid -S size '" + size + "': expected a number of megabytes >= 1.";
  files_max = 0;
  if (t.find(',') != std::string::npos && !parse_long(n.c_str(), 1, 1L << 30, files_max))
    return "Invalid -S file count '" + n + "': expected a number >= 1.";
  return "";
}

// Describes the option getopt just rejected, as it was written.
std::string option_text(int optopt_char, char** argv, int index) {
  if (optopt_char > 0 && optopt_char < 256) return std::string("-") + static_cast<char>(optopt_char);
  if (index > 0 && argv[index - 1]) return argv[index - 1];
  return "?";
}

}  // namespace

CommandLine parse_command_line(int argc, char** argv, Options& opts, std::ostream& err) {
  CommandLine cl;
  auto usage_error = [&](const std::string& msg) {
    err << "ukstap: " << msg << "\n" << kHelpHint << "\n";
    cl.action = CommandLine::Action::Error;
    cl.exit_code = 1;
    return cl;
  };
  // SystemTap's own wording, printed as is.
  auto stap_error = [&](const char* msg) {
    err << msg << "\n";
    cl.action = CommandLine::Action::Error;
    cl.exit_code = 1;
    return cl;
  };

  bool help = false, version = false, listing = false, interactive = false;
  opterr = 0;  // we print our own messages
  optind = 0;  // full reinitialization (parse_command_line may be called more than once)
  for (;;) {
    int longindex = -1;
    int c = getopt_long(argc, argv, kShortOpts, kLongOpts, &longindex);
    if (c == -1) break;
    switch (c) {
      case 'h': help = true; break;
      case 'V': version = true; break;
      case 'v': ++opts.verbose; break;
      case 'p': {
        long p;
        if (!parse_long(optarg, 1, 5, p)) return usage_error("Invalid pass number (should be 1-5).");
        opts.last_pass = static_cast<int>(p);
        cl.last_pass_given = true;
        break;
      }
      case 'e':
        if (opts.have_script_text) return usage_error("Only one script can be given on the command line.");
        opts.script_text = optarg;
        opts.have_script_text = true;
        break;
      case 'c':
        if (!*optarg) return usage_error("-c needs a command.");
        opts.target_cmd = optarg;
        break;
      case 'x': {
        long pid;
        if (!parse_long(optarg, 1, 0x7fffffffL, pid))
          return usage_error("Invalid target process ID number.");
        opts.target_pid = static_cast<int>(pid);
        break;
      }
      case 'o':
        if (!*optarg) return usage_error("-o needs a file name.");
        opts.output_file = optarg;
        break;
      case 'S':
        if (std::string why = parse_output_size(optarg, opts.output_size_mb, opts.output_files_max);
            !why.empty())
          return usage_error(why);
        break;
      case 'd':
        if (!*optarg) return usage_error("-d needs a module or file name.");
        if (std::string why = check_elf_object(optarg); !why.empty())
          return usage_error("-d " + std::string(optarg) + ": " + why + ".");
        {
          // Kept by its resolved path (symlinks followed once, here): pass 5 reads it through
          // an O_NOFOLLOW open (vma-tracker/traced_file.h).
          char real[PATH_MAX];
          opts.d_objects.emplace_back(::realpath(optarg, real) ? real : optarg);
        }
        break;
      case OPT_LDD: opts.ldd = true; break;
      case OPT_PROFILE: {
        long hz = 99;  // perf's and bpftrace's customary default: not in lockstep with timers
        if (optarg && !parse_long(optarg, 1, 100000, hz))
          return usage_error("Invalid --profile frequency '" + std::string(optarg) +
                             "' (samples per second, 1-100000).");
        opts.profile_hz = static_cast<int>(hz);
        break;
      }
      case OPT_CTF:
        if (!*optarg) return usage_error("--ctf needs a directory: --ctf=DIR.");
        opts.ctf_dir = optarg;
        break;
      case OPT_LTTNG:
        opts.lttng = true;
        break;
      case OPT_FORMAT: {
        std::string f = optarg;
        if (f != "folded" && f != "svg" && f != "pprof")
          return usage_error("Invalid --format '" + f + "' (folded, svg or pprof).");
        opts.profile_format = f;
        break;
      }
      case 'k': opts.keep_tmpdir = true; break;
      case 'm': {
        std::string name = optarg;
        if (!is_identifier(name))
          return usage_error("Invalid module name '" + name +
                             "': use letters, digits and underscores, not starting with a digit.");
        if (name.size() > 55) return usage_error("Module name '" + name + "' is too long (max 55).");
        opts.module_name = name;
        break;
      }
      case 'D': {
        std::string d = optarg;
        size_t eq = d.find('=');
        std::string name = d.substr(0, eq);
        if (!is_identifier(name)) return usage_error("Invalid -D macro definition '" + d + "'.");
        if (std::string why = check_define(name, eq == std::string::npos ? "" : d.substr(eq + 1),
                                           eq != std::string::npos);
            !why.empty())
          return usage_error(why);
        opts.defines.emplace_back(name, eq == std::string::npos ? std::string() : d.substr(eq + 1));
        break;
      }
      case 'G': {
        std::string g = optarg;
        size_t eq = g.find('=');
        if (eq == std::string::npos || !is_identifier(g.substr(0, eq)))
          return usage_error("Invalid -G global assignment '" + g + "': expected VAR=VALUE.");
        opts.globals_init.emplace_back(g.substr(0, eq), g.substr(eq + 1));
        break;
      }
      case 'I':
        if (std::string why = check_tapset_dir(optarg); !why.empty())
          return usage_error("-I " + std::string(optarg) + ": " + why + ".");
        opts.include_dirs.emplace_back(optarg);
        break;
      case 'T': {
        errno = 0;
        char* end = nullptr;
        double t = std::strtod(optarg, &end);
        if (!*optarg || *end != '\0' || errno != 0 || !std::isfinite(t) || t < 0.001 ||
            t > kMaxTimeoutSeconds)
          return stap_error("Invalid timeout interval.");
        opts.timeout_s = t;
        break;
      }
      case 'l':
      case 'L':
        if (listing) return usage_error("Only one -l/-L pattern can be given.");
        listing = true;
        opts.list_pattern = optarg;
        opts.list_with_vars = (c == 'L');
        break;
      case OPT_DUMP_FUNCTIONS: opts.dump_functions = true; break;
      case OPT_DUMP_PROBE_TYPES: opts.dump_probe_types = true; break;
      case 'g': opts.guru_mode = true; break;
      case 'w': opts.suppress_warnings = true; break;
      case 'u': opts.unoptimized = true; break;
      case 'i': interactive = true; break;  // driver/interactive.h
      // SystemTap's options that scripts and .meta files pass (ukstap(1), OPTIONS FOR
      // SYSTEMTAP SCRIPTS): their meaning here, or a documented no-op.
      case 'W': opts.warnings_as_errors = true; break;
      case OPT_ALL_MODULES: opts.all_modules = true; break;
      case OPT_COMPATIBLE:
        if (std::string why = check_compatible_version(optarg); !why.empty()) return usage_error(why);
        opts.compatible = optarg;
        break;
      case OPT_SKIP_BADVARS: opts.skip_badvars = true; break;
      case OPT_DISABLE_CACHE: opts.disable_cache = true; break;
      case OPT_CHECK_VERSION: opts.check_version = true; break;
      case 'P': opts.prologue_searching = "always"; break;
      case OPT_PROLOGUE_SEARCHING: {
        std::string when = optarg ? optarg : "always";
        if (std::string why = check_prologue_searching(when); !why.empty()) return usage_error(why);
        opts.prologue_searching = when;
        break;
      }
      case OPT_RUNTIME:
        if (std::string why = check_runtime(optarg); !why.empty()) return usage_error(why);
        break;
      case OPT_BPF: break;  // --runtime=bpf: the only runtime
      case OPT_DYNINST: return usage_error(check_runtime("dyninst"));
      // SystemTap's options for its kernel-module runtime: accepted where ukstap already does
      // what they ask (documented in ukstap(1)), else refused with their SystemTap meaning, so
      // that a stap user can tell "not supported" from a typo.
      case 'b': break;  // bulk per-CPU transfer: ukstap has one ordered output stream
      case 's': {       // per-CPU transfer buffer size: ukstap sizes its ring buffer itself
        long mb;
        if (!parse_long(optarg, 1, 4095, mb)) return stap_error("Invalid buffer size (should be 1-4095).");
        break;
      }
      case 'r': {
        struct utsname u;
        if (::uname(&u) != 0 || std::string(optarg) != u.release)
          return usage_error("-r " + std::string(optarg) +
                             ": SystemTap's build for another kernel is not supported by ukstap; "
                             "it builds for the running kernel (" + (::uname(&u) == 0 ? u.release : "?") + ").");
        break;
      }
      case 'a': {
        struct utsname u;
        if (::uname(&u) != 0 || std::string(optarg) != u.machine)
          return usage_error("-a " + std::string(optarg) +
                             ": SystemTap's cross-compilation for another architecture is not "
                             "supported by ukstap; it builds for this machine (" +
                             (::uname(&u) == 0 ? u.machine : "?") + ").");
        break;
      }
      case 't':
        return usage_error("-t: SystemTap's per-probe timing report is not supported by ukstap.");
      case 'F':
        return usage_error("-F: SystemTap's flight recorder mode (probes left running detached) is "
                           "not supported by ukstap.");
      case OPT_SUPPRESS_HANDLER_ERRORS:
        return usage_error("--suppress-handler-errors: SystemTap's quiet suppression of run-time "
                           "errors is not supported by ukstap; -DMAXERRORS=N lets a run go on "
                           "after N errors (each is printed).");
      case OPT_SUPPRESS_TIME_LIMITS:
        return usage_error("--suppress-time-limits: SystemTap's removal of the MAXACTION and "
                           "overload limits is not supported by ukstap; -DMAXACTION=N raises "
                           "the action limit.");
      case OPT_POISON_CACHE:
        return usage_error("--poison-cache: SystemTap's rebuild-and-rewrite of the cache is not "
                           "supported by ukstap; --disable-cache compiles without the cache.");
      case OPT_PRIVILEGE:
        if (std::string(optarg) == "stapdev") break;  // full privileges: what ukstap runs with
        return usage_error("--privilege=" + std::string(optarg) +
                           ": SystemTap's restricted privilege levels are not supported by "
                           "ukstap; it runs probes as root or with CAP_BPF and CAP_PERFMON.");
      case OPT_UNPRIVILEGED:
        return usage_error("--unprivileged: SystemTap's restricted privilege levels are not "
                           "supported by ukstap; it runs probes as root or with CAP_BPF and "
                           "CAP_PERFMON.");
      case OPT_DEMANGLE: opts.demangle = 1; break;
      case OPT_NO_DEMANGLE: opts.demangle = 0; break;
      case ':':
        return usage_error("option '" + option_text(optopt, argv, optind) + "' requires an argument");
      case '?':
      default:
        if (optopt != 0 && optopt < 256)
          return usage_error(std::string("invalid option -- '") + static_cast<char>(optopt) + "'");
        return usage_error("unrecognized option '" + option_text(0, argv, optind) + "'");
    }
  }

  if (help) {
    cl.action = CommandLine::Action::Help;
    return cl;
  }
  if (version) {
    cl.action = CommandLine::Action::Version;
    return cl;
  }

  // Remaining arguments: the script (unless -e or a listing/dump mode) and then $1, $2, ...
  int i = optind;
  bool script_mode = !listing && !opts.dump_functions && !opts.dump_probe_types;
  if (interactive) {
    // -i: a script given (-e or a file) is the prompt's starting script; none is needed.
    if (listing || opts.dump_functions || opts.dump_probe_types || opts.profile_hz > 0)
      return usage_error("-i cannot be combined with -l/-L, --dump-* or --profile.");
    if (!opts.have_script_text && i < argc) opts.script_file = argv[i++];
    script_mode = false;
  }
  if (opts.profile_hz > 0) {
    // --profile brings its own script (driver/profile_mode.h): there is nothing to give.
    if (opts.have_script_text || (i < argc))
      return usage_error("--profile runs its own sampling script: give no script (-e or a file).");
    if (listing || opts.dump_functions || opts.dump_probe_types)
      return usage_error("--profile cannot be combined with -l/-L or --dump-*.");
    script_mode = false;
  } else if (!opts.profile_format.empty()) {
    return usage_error("--format only applies to --profile.");
  }
  if (script_mode && !opts.have_script_text) {
    if (i >= argc) return usage_error("A script must be specified (SCRIPT_FILE, '-' for stdin, or -e SCRIPT).");
    opts.script_file = argv[i++];
    if (opts.script_file.empty()) return usage_error("Empty script file name.");
  }
  for (; i < argc; ++i) opts.args.emplace_back(argv[i]);

  int modes = int(listing) + int(opts.dump_functions) + int(opts.dump_probe_types);
  if (modes > 1)
    return usage_error("-l/-L, --dump-functions and --dump-probe-types cannot be combined.");
  if (modes == 1 && opts.have_script_text)
    return usage_error(std::string(listing ? "-l/-L" : opts.dump_functions ? "--dump-functions"
                                                                            : "--dump-probe-types") +
                       " cannot be used with a script.");
  if (!opts.target_cmd.empty() && opts.target_pid != 0)
    return usage_error("You can't specify -c and -x options together.");
  if (!opts.ctf_dir.empty() && !opts.profile_format.empty())
    return usage_error("--format does not apply to --ctf: --profile --ctf=DIR writes the samples as CTF events.");
  if (opts.lttng && !opts.ctf_dir.empty())
    return usage_error("--lttng and --ctf cannot be combined: --lttng's events are written by LTTng's sessions.");
  if (opts.lttng && !opts.profile_format.empty())
    return usage_error("--format does not apply to --lttng: --profile --lttng emits the samples as LTTng events.");
  if (opts.output_size_mb > 0 && (opts.output_file.empty() || opts.output_file == "-"))
    return usage_error("-S needs an output file (-o FILE): it switches FILE.0, FILE.1, ...");

  if (interactive) cl.action = CommandLine::Action::Interactive;
  else if (listing) cl.action = CommandLine::Action::ListProbes;
  else if (opts.dump_functions) cl.action = CommandLine::Action::DumpFunctions;
  else if (opts.dump_probe_types) cl.action = CommandLine::Action::DumpProbeTypes;
  return cl;
}

void print_version(std::ostream& out) {
  out << "ukstap translator/driver (version " PACKAGE_VERSION;
#ifdef _ELFUTILS_VERSION
  out << "/0." << _ELFUTILS_VERSION;
#endif
  out << ", SystemTap 4.8 compatible)\n"
         "This is free software; see the source for copying conditions.\n"
         "enabled features: BPF\n";
}

void print_usage(std::ostream& out) {
  print_version(out);
  out << "\n"
         "Usage: ukstap [OPTIONS] [SCRIPT_FILE | - | -e SCRIPT] [ARGS...]\n"
         "   or: ukstap [OPTIONS] -l PATTERN | -L PATTERN\n"
         "   or: ukstap [OPTIONS] --dump-functions | --dump-probe-types\n"
         "   or: ukstap -i [OPTIONS] [SCRIPT_FILE | -e SCRIPT]\n"
         "\n"
         "Compiles a SystemTap probe script into a BPF program and runs it.\n"
         "ARGS are the script's arguments, $1 / @1 and so on.\n"
         "\n"
         "Options:\n"
         "   --         end of options; the rest are the script file and its arguments\n"
         "   -h --help  show this help\n"
         "   -V --version  show the version\n"
         "   -v         more verbose; repeat (-vv) for more\n"
         "   -p NUM     stop after pass NUM (1-5):\n"
         "                1: parse, 2: elaborate, 3: translate, 4: compile, 5: run\n"
         "   -e SCRIPT  run the given script text instead of a file\n"
         "   -i --interactive  a prompt to add probes, functions and globals, list, edit,\n"
         "              run (^C stops the run), save and load the script ('help' there)\n"
         "   -I DIR     look in DIR for additional tapsets (searched first)\n"
         "   -D NM=VAL  define a translator/runtime limit (MAXSTRINGLEN, MAXMAPENTRIES,\n"
         "              MAXBACKTRACE, MAXACTION, ...)\n"
         "   -G VAR=VAL set the initial value of global VAR\n"
         "   -g         guru mode: allow embedded C in the script\n"
         "   -u         unoptimized translation: keep unused code\n"
         "   -w         suppress warnings\n"
         "   -W         treat warnings as errors (a translator warning fails its pass)\n"
         "   --profile[=HZ]  sample user+kernel stacks at HZ (default 99) of -c CMD, -x PID or\n"
         "              the whole system (until -T SECONDS or ^C) and write a profile\n"
         "   --format=F folded (FlameGraph/inferno/speedscope input), svg (an interactive\n"
         "              flame graph) or pprof (profile.proto, gzipped); default: from -o's\n"
         "              extension (.folded, .svg, .pb.gz), else folded\n"
         "   --ctf=DIR  write what the script prints as a CTF trace into DIR (babeltrace2,\n"
         "              Trace Compass): one event per output statement, named after its\n"
         "              probe point, with LTTng's vpid/vtid/procname and callstack contexts;\n"
         "              text only to -o FILE if given (also with --profile)\n"
         "   --lttng    emit the same events as LTTng-UST events ukstap:event, recorded by the\n"
         "              LTTng sessions that enable them (local, live through lttng-relayd,\n"
         "              snapshot); text only to -o FILE if given (also with --profile)\n"
         "   --no-demangle  print C++ names as the ELF symbol table has them (as SystemTap\n"
         "              does), in backtraces, usymname() and profiles; demangled by default\n"
         "   --demangle the default: C++ names demangled (ns::Klass::f(int))\n"
         "   -c CMD     start the probes, run CMD, and exit when it finishes\n"
         "   -x PID     set target() to PID\n"
         "   -o FILE    send the script's output to FILE (strftime patterns allowed)\n"
         "   -S SIZE[,N] with -o: write FILE.0, FILE.1, ..., each at most SIZE MB; keep the\n"
         "              last N files (switch_file() also moves to the next file)\n"
         "   -T SECONDS stop the run after SECONDS (fractions allowed, at least 0.001)\n"
         "   -d OBJ     load OBJ's unwind tables before the probes start: for a program\n"
         "              another process runs or a dlopen'ed library (the -c command, -x\n"
         "              process and process() binaries are loaded anyway; see ukstap(1))\n"
         "   --ldd      also the shared libraries the -d objects need\n"
         "   -k         keep the temporary directory\n"
         "   -m MODULE  name the compiled module MODULE\n"
         "   -l PATTERN list the probe points matching PATTERN\n"
         "   -L PATTERN list them with their script and $target variables\n"
         "   --dump-functions    list the tapset functions\n"
         "   --dump-probe-types  list the built-in probe point types\n"
         "   --skip-badvars  read a $variable the probe point does not have as 0, no error\n"
         "   --disable-cache compile without reading or writing the cache directory\n"
         "   --compatible=V  preprocessor conditions see systemtap_v as V\n"
         "   --runtime=bpf, --bpf  the only runtime (kernel and dyninst are not available)\n"
         "   --all-modules, --check-version, --prologue-searching[=WHEN], -P: accepted,\n"
         "              nothing to do in ukstap (see ukstap(1))\n"
         "   -b, -s NUM, -r RELEASE, -a ARCH, --privilege=stapdev: accepted for the running\n"
         "              kernel and machine, nothing to do (see ukstap(1)); -t, -F,\n"
         "              --suppress-handler-errors, --suppress-time-limits, --poison-cache and\n"
         "              the other --privilege levels are refused, naming what they do in SystemTap\n"
         "\n"
         "Environment: UKSTAP_TAPSET (tapset directory), UKSTAP_RUNTIME (runtime directory).\n"
         "See ukstap(1).\n";
}

}  // namespace ukstap
