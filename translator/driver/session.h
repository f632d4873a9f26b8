// The state of one ukstap run: options, sources, the parsed files and what elaboration made of
// them. Passes take a Session& and add their product to it.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ast/ast.h"
#include "driver/diagnostics.h"
#include "probes/family_point.h"

namespace ukstap {
namespace codegen {
struct ModuleInfo;
}

namespace probes {
struct Cache;  // probes/: parsed tracefs formats, ELF symbols and DWARF digests of this run
}

namespace passes {
struct Analyses;  // passes/analyses.h: what pass 2 decided for pass 3
}

// Command-line options, with SystemTap's meanings.
struct Options {
  std::string script_file;       // path, "-" for stdin; empty with -e
  std::string script_text;       // -e
  bool have_script_text = false;
  std::vector<std::string> args;  // $1 @1 ...
  int last_pass = 5;              // -p N
  int verbose = 0;                // -v (repeatable)
  std::string target_cmd;         // -c
  int target_pid = 0;             // -x
  std::string output_file;        // -o
  long output_size_mb = 0;        // -S SIZE[,N]: switch -o FILE.N at SIZE MB (0: no -S)
  long output_files_max = 0;      // -S's N: keep the last N files (0: all)
  std::vector<std::string> d_objects;  // -d
  bool ldd = false;                    // --ldd
  bool keep_tmpdir = false;            // -k
  std::string module_name;             // -m
  std::vector<std::pair<std::string, std::string>> defines;  // -D NAME=VALUE
  std::vector<std::pair<std::string, std::string>> globals_init;  // -G VAR=VALUE
  std::vector<std::string> include_dirs;  // -I
  double timeout_s = 0;                   // -T
  std::string list_pattern;               // -l / -L
  bool list_with_vars = false;            // -L
  bool dump_functions = false;
  bool dump_probe_types = false;
  bool guru_mode = false;  // -g: embedded code allowed in the user script
  bool suppress_warnings = false;  // -w
  bool unoptimized = false;        // -u
  int profile_hz = 0;              // --profile[=HZ]: sampling profile mode (0: off)
  std::string profile_format;      // --format: folded, svg or pprof ("": from -o's extension)
  std::string ctf_dir;             // --ctf=DIR: the script's output as a CTF trace (ctf-writer/)
  bool lttng = false;              // --lttng: the same events as LTTng-UST events (lttng-writer/)
  // --ctf or --lttng: the script's output becomes events (loader/ctf_output.h).
  bool output_as_events() const { return !ctf_dir.empty() || lttng; }
  int demangle = -1;  // --demangle 1, --no-demangle 0; -1 (default): demangled
  // SystemTap's options that scripts and .meta files pass (issue 14; ukstap(1) says what each
  // does here, the no-ops say why).
  bool warnings_as_errors = false;         // -W: a translator warning fails its pass
  bool all_modules = false;                // --all-modules (no-op: kallsyms has them all)
  std::string compatible;                  // --compatible=V: systemtap_v in %( %) conditions
  bool skip_badvars = false;               // --skip-badvars: an unresolvable $var reads as 0
  bool disable_cache = false;              // --disable-cache: no cache read or written
  bool check_version = false;              // --check-version (no-op: one language version)
  std::string prologue_searching = "auto";  // --prologue-searching[=WHEN], -P (no-op)
};

// A concrete probe after alias expansion and wildcard matching.
struct DerivedProbe {
  ast::ProbePoint* point = nullptr;  // concrete: no wildcards
  // The alias chain, outermost last: for `syscall.openat` via `syscall.*` this is
  // {syscall.openat (alias name), syscall.* (as written)}; -p2 prints "/* <- a <- b */".
  std::vector<const ast::ProbePoint*> chain;
  // The tapset alias name the written point matched first (what -l lists); null when the
  // written point named a built-in point directly.
  const ast::ProbePoint* alias_name = nullptr;
  ast::Probe* source = nullptr;  // the user's (or synthetic) probe it came from
  ast::Block* body = nullptr;    // alias prologues + body + epilogues, spliced
  std::vector<ast::Vardecl*> locals;
  ast::Expression* condition = nullptr;  // combined `if (...)` conditions; may be null
  // The family that serves it and the family's typed fields for later passes, e.g. a
  // probes::TracepointPoint{system "syscalls", event "sys_enter_openat", ...}.
  probes::FamilyPoint family;
  // $variables the point offers: name (with '$') -> type text ("long", "string", "char const*").
  std::vector<std::pair<std::string, std::string>> target_vars;
};

class Session {
 public:
  explicit Session(std::ostream& err);
  ~Session();

  Options opts;
  Diagnostics diag;
  ast::Arena arena;

  // Keeps a source alive for the whole session.
  const SourceFile* add_source(std::string name, std::string text, bool is_tapset);

  // The tapset directories, in search order: -I dirs, then the tree's or installed tapsets.
  std::vector<std::string> tapset_dirs() const;
  // Directory of the in-tree or installed runtime (runtime/), for later passes.
  std::string runtime_dir() const;

  // Pass 1 products.
  ast::StapFile* user_file = nullptr;
  std::vector<ast::StapFile*> tapset_files;

  // Pass 2 products.
  std::vector<DerivedProbe*> probes;
  std::vector<ast::Vardecl*> globals;    // used globals, user's first, declaration order
  std::vector<ast::Function*> functions;  // used functions
  std::vector<ast::EmbeddedCode*> embeds;  // used tapsets' file-level %{ %} blocks
  // The deciding analyses (recursion, probe sides, reachability, syscall dispatch), set by
  // pass2_elaborate when the program elaborated without errors.
  std::shared_ptr<passes::Analyses> analyses;
  // Kernel char arrays ($next->comm, @cast(p, "task_struct")->comm): a number (the array's
  // address, as SystemTap: kernel_string($next->comm)) unless type inference finds a string
  // wanted, then their characters (passes/kernel_types.h).
  std::set<const ast::Expression*> kernel_char_arrays;

  // Owned by translator/probes/ (created on first use): tracefs formats and ELF/DWARF data
  // read while resolving probe points, so -l over ~700 syscall events stays fast.
  std::shared_ptr<probes::Cache> probe_cache;

  // Pass 3 product, and pass 4's: the compiled objects.
  std::shared_ptr<codegen::ModuleInfo> module;
  std::string bpf_object_path;     // module.bpf.o
  std::string native_object_path;  // module.so ("" when there are no native probes)

  // -D values by name (MAXSTRINGLEN, MAXMAPENTRIES, MAXBACKTRACE, ...).
  std::string define(const std::string& name, const std::string& fallback) const;

 private:
  std::vector<std::unique_ptr<SourceFile>> sources_;
  std::vector<std::unique_ptr<DerivedProbe>> derived_;
  friend DerivedProbe* new_derived_probe(Session& s);
};

DerivedProbe* new_derived_probe(Session& s);

}  // namespace ukstap
