// process.begin/.end/.thread.*/.syscall[.return] and process("PATH"|PID)... (the task-finder
// events), function entry and return (uprobes on .symtab/.dynsym symbols, DWARF for
// variables), PLT stubs, source statements (the DWARF line table), SDT markers, each also under
// .library("PATTERN"). stapprobes(3stap) "USER-SPACE" is the specification.
#include <glob.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/cache.h"
#include "probes/internal.h"
#include "probes/library_search.h"

namespace ukstap::probes {

namespace {

bool is_regular(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (realpath(p.c_str(), buf)) return buf;
  return p;
}

// Every regular file `pattern` matches (canonical, sorted, duplicates dropped); a pattern that
// matches nothing is an error naming it.
std::vector<std::string> expand_glob(const std::string& pattern, const Token* tok) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), GLOB_BRACE | GLOB_NOSORT, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i)
      if (is_regular(g.gl_pathv[i])) out.push_back(canonical(g.gl_pathv[i]));
  globfree(&g);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.empty()) throw SemanticError("no file matches '" + pattern + "'", tok);
  return out;
}

// SystemTap's find_executable(): a name with a '/' is taken as is (relative to the working
// directory, where -c runs its command too); a bare name is searched in $PATH and, when no
// directory there has it, taken from the working directory. The result is canonicalized
// (symlinks resolved). A path with wildcards is globbed (without $PATH) into every regular
// file it matches.
std::vector<std::string> resolve_paths(const std::string& name, const Token* tok) {
  if (name.empty()) throw SemanticError("empty process path", tok);
  if (has_glob(name)) return expand_glob(name, tok);
  if (name.find('/') != std::string::npos) {
    if (!is_regular(name)) throw SemanticError("cannot find executable '" + name + "'", tok);
    return {canonical(name)};
  }
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) dir = ".";
    std::string cand = dir + "/" + name;
    if (is_regular(cand) && access(cand.c_str(), X_OK) == 0) return {canonical(cand)};
  }
  if (is_regular(name)) return {canonical(name)};
  throw SemanticError("cannot find executable '" + name +
                          "' (not in $PATH, nor in the working directory)",
                      tok);
}

std::shared_ptr<const ElfInfo> elf_for(Session& s, const std::string& path, const Token* tok) {
  auto& elfs = session_cache(s).elfs;
  auto it = elfs.find(path);
  if (it == elfs.end()) it = elfs.emplace(path, read_elf_info(path)).first;
  if (!it->second->error.empty())
    throw SemanticError("cannot read '" + path + "': " + it->second->error, tok);
  return it->second;
}

// The file's identity as the kernel's mm->exe_file shows it: (MKDEV(major, minor), inode).
ExeFilter file_filter(const std::string& path) {
  ExeFilter f;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    f.kdev = (static_cast<uint64_t>(major(st.st_dev)) << 20) | minor(st.st_dev);
    f.ino = st.st_ino;
  }
  return f;
}

// The target of process(...): canonical paths and the pid (0 for none). For `process` without
// an argument, `for_code` says the point needs a binary (function/mark/plt): the -c command's
// program or -x's.
struct Target {
  std::string path;
  int64_t pid = 0;
};

// The program of -c COMMAND: its first word, as the shell would find it.
std::string target_program(const Session& s) {
  std::istringstream in(s.opts.target_cmd);
  std::string prog;
  in >> prog;
  return prog;
}

std::vector<Target> targets(Session& s, const Match& m, bool for_code) {
  const ast::Expression* a = m.arg("process");
  const Token* tok = m.tok("process");
  std::vector<Target> out;
  if (auto* n = dynamic_cast<const ast::LiteralNumber*>(a)) {
    if (n->value <= 0) throw SemanticError("invalid process id " + std::to_string(n->value), tok);
    Target t;
    t.pid = n->value;
    if (for_code) {
      std::string exe = "/proc/" + std::to_string(n->value) + "/exe";
      char buf[PATH_MAX];
      ssize_t len = readlink(exe.c_str(), buf, sizeof buf - 1);
      if (len <= 0)
        throw SemanticError("cannot find the executable of process " + std::to_string(n->value) +
                                " (no such process, or no permission to read " + exe + ")",
                            tok);
      t.path = std::string(buf, len);
    }
    out.push_back(t);
    return out;
  }
  if (auto* st = dynamic_cast<const ast::LiteralString*>(a)) {
    for (auto& p : resolve_paths(st->value, tok)) out.push_back({p, 0});
    return out;
  }
  if (!for_code) {
    out.push_back({});
    return out;
  }
  if (!s.opts.target_cmd.empty()) {
    std::string prog = target_program(s);
    if (prog.empty() || prog.find_first_of("|&;<>(){}$`") != std::string::npos)
      throw SemanticError("a process probe without a path takes its program from -c, and '" +
                              s.opts.target_cmd + "' does not start with a program name",
                          tok);
    for (auto& p : resolve_paths(prog, tok)) out.push_back({p, 0});
    return out;
  }
  if (s.opts.target_pid > 0) {
    std::string exe = "/proc/" + std::to_string(s.opts.target_pid) + "/exe";
    out.push_back({canonical(exe), s.opts.target_pid});
    return out;
  }
  throw SemanticError("a process probe without a path needs a target program: give -c COMMAND "
                      "or -x PID, or write process(\"PATH\")",
                      tok);
}

std::vector<PointComponent> with_target(const Match& m, const Target& t) {
  auto comps = concrete_components(m);
  for (auto& c : comps)
    if (c.functor == "process") {
      if (t.pid && t.path.empty()) {
        c.arg = ArgKind::Number;
        c.num = t.pid;
      } else if (m.arg("process") && dynamic_cast<const ast::LiteralNumber*>(m.arg("process"))) {
        c.arg = ArgKind::Number;
        c.num = t.pid;
      } else if (!t.path.empty()) {
        c.arg = ArgKind::String;
        c.str = t.path;
      }
    }
  return comps;
}

// The ELF files whose code a point probes: the target itself, or with .library("PATTERN") the
// libraries of the target that match (a pattern with '/' names files: globbed), each with the
// filter that keeps the probe to the target's processes.
struct CodeSite {
  Target target;        // the process(...) part
  std::string file;     // the ELF file probed
  bool library = false;
  ExeFilter filter;
};

std::vector<CodeSite> code_sites(Session& s, const Match& m) {
  std::vector<CodeSite> out;
  for (auto& t : targets(s, m, true)) {
    if (!m.has("library")) {
      CodeSite cs{t, t.path, false, {}};
      cs.filter.pid = t.pid;
      out.push_back(cs);
      continue;
    }
    std::string pat = m.str("library");
    const Token* ltok = m.tok("library");
    if (pat.empty()) throw SemanticError("empty library name", ltok);
    std::vector<std::string> libs;
    if (pat.find('/') != std::string::npos) {
      libs = has_glob(pat) ? expand_glob(pat, ltok) : std::vector<std::string>{};
      if (!has_glob(pat)) {
        if (!is_regular(pat)) throw SemanticError("cannot find library '" + pat + "'", ltok);
        libs.push_back(canonical(pat));
      }
    } else {
      for (auto& lib : needed_libraries(s, t.path)) {
        std::string base = lib.substr(lib.rfind('/') + 1);
        if (glob_match(pat, base) || glob_match(pat, lib)) libs.push_back(lib);
      }
    }
    ExeFilter f = file_filter(t.path);
    f.pid = t.pid;
    for (auto& lib : libs) out.push_back({t, lib, true, f});
  }
  return out;
}

// The concrete point of a site: process(...) as resolved, library(...) as the file.
std::vector<PointComponent> site_components(const Match& m, const CodeSite& cs) {
  auto comps = with_target(m, cs.target);
  for (auto& c : comps)
    if (c.functor == "library") c.str = cs.file;
  return comps;
}

std::string site_names(const std::vector<CodeSite>& sites) {
  std::set<std::string> files;
  for (auto& cs : sites) files.insert(cs.file);
  std::string out;
  for (auto& f : files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// A pattern that matched nothing in any file: one line naming it and the files looked at.
// When every file looked at is a 32-bit ELF file (Debian's /lib*/libc.so.6 is only
// /lib32/libc.so.6: the x86-64 one is in /lib/x86_64-linux-gnu), the message says so.
[[noreturn]] void none_found(Session& s, const std::string& what, const std::string& pattern,
                             const std::vector<CodeSite>& sites, const Token* tok) {
  if (sites.empty()) throw SemanticError("no library matches '" + pattern + "'", tok);
  bool all32 = true;
  for (auto& cs : sites) {
    auto it = session_cache(s).elfs.find(cs.file);
    if (it == session_cache(s).elfs.end() || it->second->is64) all32 = false;
  }
  throw SemanticError("no " + what + " matches '" + pattern + "' in " + site_names(sites) +
                          (all32 ? " (32-bit ELF, not this machine's x86-64 code)" : ""),
                      tok);
}

void build_lifecycle(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  std::string event;
  for (size_t i = 1; i < m.pattern->comps.size(); ++i)
    event += (event.empty() ? "" : ".") + m.pattern->comps[i].name;
  for (auto& t : targets(s, m, false)) {
    ResolvedPoint rp;
    rp.point = make_point(s, *m.pp, with_target(m, t));
    ProcessPoint pp;
    pp.event = event == "begin"          ? ProcessPoint::Event::Begin
               : event == "end"          ? ProcessPoint::Event::End
               : event == "thread.begin" ? ProcessPoint::Event::ThreadBegin
               : event == "thread.end"   ? ProcessPoint::Event::ThreadEnd
               : event == "syscall"      ? ProcessPoint::Event::Syscall
                                         : ProcessPoint::Event::SyscallReturn;
    pp.path = t.path;
    pp.pid = t.pid;
    if (!t.path.empty()) pp.filter = file_filter(t.path);
    pp.filter.pid = t.pid;
    if (pp.event == ProcessPoint::Event::Syscall) {
      rp.target_vars.push_back({"$syscall", "long"});
      for (int i = 1; i <= 6; ++i) rp.target_vars.push_back({"$arg" + std::to_string(i), "long"});
    } else if (pp.event == ProcessPoint::Event::SyscallReturn) {
      rp.target_vars.push_back({"$syscall", "long"});
      rp.target_vars.push_back({"$return", "long"});
    }
    rp.family = std::move(pp);
    out.push_back(std::move(rp));
  }
}

// "NAME[@FILE[:LINE]]" of function(...).
struct FunctionSpec {
  std::string name = "*", file;
  int line = 0;
};

FunctionSpec parse_function_spec(const std::string& spec, const Token* tok) {
  FunctionSpec fs;
  size_t at = spec.find('@');
  fs.name = spec.substr(0, at);
  if (fs.name.empty()) throw SemanticError("empty function name in '" + spec + "'", tok);
  if (at != std::string::npos) {
    std::string rest = spec.substr(at + 1);
    size_t colon = rest.rfind(':');
    if (colon != std::string::npos) {
      std::string ln = rest.substr(colon + 1);
      char* end = nullptr;
      long v = std::strtol(ln.c_str(), &end, 10);
      if (ln.empty() || *end || v <= 0)
        throw SemanticError("function line specifications ('" + spec +
                                "': ranges, '*' or offsets) are not supported yet",
                            tok);
      fs.line = static_cast<int>(v);
      rest = rest.substr(0, colon);
    }
    fs.file = rest.empty() ? "*" : rest;
  }
  return fs;
}

bool file_matches(const std::string& pat, const std::string& file) {
  if (pat.empty()) return true;
  if (glob_match(pat, file)) return true;
  // "hello.c" or "*/hello.c" should match "/tmp/hello.c"
  return pat[0] != '/' && glob_match("*/" + pat, file);
}

UprobePoint site_uprobe(const CodeSite& cs) {
  UprobePoint up;
  up.path = cs.file;
  up.pid = cs.target.pid;
  up.filter = cs.filter;
  return up;
}

void build_function(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  bool is_return = m.has("return");
  const Token* ftok = m.tok("function");
  FunctionSpec fs = parse_function_spec(m.str("function"), ftok);
  auto sites = code_sites(s, m);
  size_t before = out.size();
  for (auto& cs : sites) {
    auto info = elf_for(s, cs.file, m.tok("process"));
    for (const FunctionSym& f : info->functions) {
      if (!glob_match(fs.name, f.name)) continue;
      if (!fs.file.empty() && (!f.has_dwarf || !file_matches(fs.file, f.decl_file))) continue;
      if (fs.line && f.decl_line != fs.line) continue;
      std::string text = f.name;
      if (f.has_dwarf && !f.decl_file.empty())
        text += "@" + f.decl_file + ":" + std::to_string(f.decl_line);
      auto comps = site_components(m, cs);
      for (auto& c : comps)
        if (c.functor == "function") c.str = text;
      ResolvedPoint rp;
      rp.point = make_point(s, *m.pp, comps);
      UprobePoint up = site_uprobe(cs);
      up.symbol = f.name;
      up.offset = f.offset;
      up.address = f.addr;
      up.size = f.size;
      up.is_return = is_return;
      if (f.has_dwarf) up.debuginfo = info->debug_file;
      // Parameters in declaration order: at the entry point they are in the ABI's argument
      // registers, which is how the backend reads them.
      for (int k = 0; k < f.nparams && k < static_cast<int>(f.vars.size()); ++k)
        up.params.push_back({f.vars[k].first, f.vars[k].second});
      rp.family = std::move(up);
      if (is_return && !f.return_type.empty()) rp.target_vars.push_back({"$return", f.return_type});
      // Without DWARF SystemTap still offers $return (a long) at a .return.
      if (is_return && !f.has_dwarf) rp.target_vars.push_back({"$return", "long"});
      for (auto& v : f.vars) rp.target_vars.push_back(v);
      out.push_back(std::move(rp));
    }
  }
  if (out.size() == before) none_found(s, "function", m.str("function"), sites, ftok);
}

// .plt / .plt("NAME"): the PLT stub of each matching imported function. $$name is its name;
// function arguments are not available (stapprobes: PLTs are processed without debuginfo).
void build_plt(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  bool is_return = m.has("return");
  std::string pat = m.arg("plt") ? m.str("plt") : "*";
  if (pat.empty()) throw SemanticError("empty plt name", m.tok("plt"));
  // `process.*` reaches .plt through a wildcard: without a program to read it is no match
  // (begin, end and syscall still are), not an error.
  bool by_wildcard = false;
  for (size_t i = 0; i < m.comps.size(); ++i)
    if (m.pattern->comps[i].name == "plt" && m.comps[i] && m.comps[i]->functor != "plt")
      by_wildcard = true;
  std::vector<CodeSite> sites;
  try {
    sites = code_sites(s, m);
  } catch (const SemanticError&) {
    if (by_wildcard) return;
    throw;
  }
  size_t before = out.size();
  for (auto& cs : sites) {
    auto info = elf_for(s, cs.file, m.tok("process"));
    std::set<std::string> done;  // a name with a .plt and a .plt.got stub: the first one
    for (const PltEntry& e : info->plt) {
      if (!glob_match(pat, e.name) || !done.insert(e.name).second) continue;
      auto comps = site_components(m, cs);
      bool named = false;
      for (auto& c : comps)
        if (c.functor == "plt") {
          c.arg = ArgKind::String;
          c.str = e.name;
          named = true;
        }
      if (!named) continue;
      ResolvedPoint rp;
      rp.point = make_point(s, *m.pp, comps);
      UprobePoint up = site_uprobe(cs);
      up.symbol = e.name;
      up.offset = e.offset;
      up.address = e.addr;
      up.is_return = is_return;
      up.plt = true;
      rp.family = std::move(up);
      rp.target_vars.push_back({"$$name", "string"});
      if (is_return) rp.target_vars.push_back({"$return", "long"});
      out.push_back(std::move(rp));
    }
  }
  if (out.size() == before && !by_wildcard) none_found(s, "PLT entry", pat, sites, m.tok("plt"));
}

void build_mark(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  std::string name_pat = m.str("mark");
  std::string prov_pat = m.has("provider") ? m.str("provider") : "*";
  if (name_pat.empty()) throw SemanticError("empty mark name", m.tok("mark"));
  auto sites = code_sites(s, m);
  size_t before = out.size();
  for (auto& cs : sites) {
    auto info = elf_for(s, cs.file, m.tok("process"));
    for (const SdtNote& n : info->notes) {
      if (!glob_match(name_pat, n.name) || !glob_match(prov_pat, n.provider)) continue;
      auto comps = site_components(m, cs);
      for (auto& c : comps) {
        if (c.functor == "mark") c.str = n.name;
        if (c.functor == "provider") c.str = n.provider;
      }
      ResolvedPoint rp;
      rp.point = make_point(s, *m.pp, comps);
      UprobePoint up = site_uprobe(cs);
      up.offset = n.pc_offset;
      up.address = n.pc;
      up.sdt = SdtMark{n.provider, n.name, n.args, n.nargs, n.semaphore_offset};
      rp.family = std::move(up);
      for (int i = 1; i <= n.nargs; ++i) rp.target_vars.push_back({"$arg" + std::to_string(i), "long"});
      rp.target_vars.push_back({"$$name", "string"});  // stapprobes: parts of the point's name
      rp.target_vars.push_back({"$$provider", "string"});
      out.push_back(std::move(rp));
    }
  }
  if (out.size() == before) none_found(s, "SDT marker", name_pat, sites, m.tok("mark"));
}

// "FUNC@FILE:LINE", ":X-Y", ":A,B-C", ":*", "+N" (relative to FUNC's declaration line).
struct StatementSpec {
  std::string func, file;
  bool all_lines = false, relative = false;
  std::vector<std::pair<int, int>> ranges;  // inclusive
};

StatementSpec parse_statement_spec(const std::string& spec, const Token* tok) {
  StatementSpec ss;
  size_t at = spec.find('@');
  auto bad = [&]() -> SemanticError {
    return SemanticError("cannot read statement '" + spec +
                             "': expected FUNCTION@FILE:LINE (LINE: N, N-M, a list of them, *) "
                             "or FUNCTION@FILE+N",
                         tok);
  };
  if (at == std::string::npos) throw bad();
  ss.func = spec.substr(0, at);
  std::string rest = spec.substr(at + 1);
  size_t sep = rest.find_last_of(":+");
  if (ss.func.empty() || sep == std::string::npos) throw bad();
  ss.file = rest.substr(0, sep);
  ss.relative = rest[sep] == '+';
  std::string lines = rest.substr(sep + 1);
  if (lines == "*" && !ss.relative) {
    ss.all_lines = true;
    return ss;
  }
  std::stringstream ls(lines);
  std::string part;
  while (std::getline(ls, part, ',')) {
    char* end = nullptr;
    long a = std::strtol(part.c_str(), &end, 10);
    long b = a;
    if (end == part.c_str()) throw bad();
    if (*end == '-' && !ss.relative) b = std::strtol(end + 1, &end, 10);
    if (*end || a < 0 || b < a) throw bad();
    ss.ranges.push_back({static_cast<int>(a), static_cast<int>(b)});
  }
  if (ss.ranges.empty()) throw bad();
  return ss;
}

// .statement("FUNC@FILE:LINE")[.nearest]: the first address of each matching line (is_stmt
// rows of the line table) inside each matching function; .nearest moves a line without code
// to the next line that has some.
void build_statement(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  const Token* stok = m.tok("statement");
  if (!dynamic_cast<const ast::LiteralString*>(m.arg("statement")))
    throw SemanticError("process(...).statement(ADDRESS) probes are not supported yet; use "
                        "process(\"PATH\").statement(\"FUNCTION@FILE:LINE\")",
                        stok);
  StatementSpec ss = parse_statement_spec(m.str("statement"), stok);
  bool nearest = m.has("nearest");
  auto sites = code_sites(s, m);
  size_t before = out.size();
  for (auto& cs : sites) {
    auto info = elf_for(s, cs.file, m.tok("process"));
    if (info->lines.empty())
      throw SemanticError("statement probes need DWARF line information, and " + cs.file +
                              " has none (no debuginfo found)",
                          stok);
    for (const FunctionSym& f : info->functions) {
      if (!glob_match(ss.func, f.name) || !f.has_dwarf || f.size == 0) continue;
      // The function's rows of matching files, lowest address per line.
      std::map<int, const LineRow*> rows;
      for (const LineRow& r : info->lines) {
        if (r.addr < f.addr || r.addr >= f.addr + f.size) continue;
        if (!ss.file.empty() && ss.file != "*" && !file_matches(ss.file, r.file)) continue;
        auto it = rows.find(r.line);
        if (it == rows.end() || r.addr < it->second->addr) rows[r.line] = &r;
      }
      if (rows.empty()) continue;
      std::set<int> want;
      if (ss.all_lines) {
        for (auto& [ln, r] : rows) want.insert(ln);
      } else {
        for (auto [a, b] : ss.ranges) {
          if (ss.relative) a = b = f.decl_line + a;
          for (int ln = a; ln <= b; ++ln) {
            if (rows.count(ln)) {
              want.insert(ln);
            } else if (nearest && a == b) {
              auto it = rows.lower_bound(ln);
              if (it != rows.end()) want.insert(it->first);
            }
          }
        }
      }
      for (int ln : want) {
        const LineRow* r = rows[ln];
        auto comps = site_components(m, cs);
        for (auto& c : comps)
          if (c.functor == "statement")
            c.str = f.name + "@" + r->file + ":" + std::to_string(ln);
        ResolvedPoint rp;
        rp.point = make_point(s, *m.pp, comps);
        UprobePoint up = site_uprobe(cs);
        up.symbol = f.name;
        up.offset = r->offset;
        up.address = r->addr;
        up.debuginfo = info->debug_file;
        rp.family = std::move(up);
        out.push_back(std::move(rp));
      }
    }
  }
  if (out.size() == before) none_found(s, "statement", m.str("statement"), sites, stok);
}

}  // namespace

void add_process_patterns(std::vector<Pattern>& out) {
  const PatternComponent heads[] = {{"process", ArgKind::None},
                                    {"process", ArgKind::String},
                                    {"process", ArgKind::Number}};
  for (const auto& head : heads) {
    out.push_back({{head, {"begin"}}, build_lifecycle});
    out.push_back({{head, {"end"}}, build_lifecycle});
    out.push_back({{head, {"thread"}, {"begin"}}, build_lifecycle});
    out.push_back({{head, {"thread"}, {"end"}}, build_lifecycle});
    out.push_back({{head, {"syscall"}}, build_lifecycle});
    out.push_back({{head, {"syscall"}, {"return"}}, build_lifecycle});
    const PatternComponent fn{"function", ArgKind::String};
    const PatternComponent lib{"library", ArgKind::String};
    const PatternComponent plt_named{"plt", ArgKind::String};
    const PatternComponent plt_all{"plt", ArgKind::None};
    const PatternComponent stmt{"statement", ArgKind::String};
    for (bool in_lib : {false, true}) {
      auto with = [&](std::vector<PatternComponent> rest) {
        std::vector<PatternComponent> v{head};
        if (in_lib) v.push_back(lib);
        v.insert(v.end(), rest.begin(), rest.end());
        return v;
      };
      out.push_back({with({fn}), build_function});
      out.push_back({with({fn, {"call"}}), build_function});
      out.push_back({with({fn, {"return"}}), build_function});
      out.push_back({with({plt_all}), build_plt});
      out.push_back({with({plt_all, {"return"}}), build_plt});
      out.push_back({with({plt_named}), build_plt});
      out.push_back({with({plt_named, {"return"}}), build_plt});
      out.push_back({with({{"mark", ArgKind::String}}), build_mark});
      out.push_back({with({{"provider", ArgKind::String}, {"mark", ArgKind::String}}), build_mark});
      out.push_back({with({stmt}), build_statement});
      out.push_back({with({stmt, {"nearest"}}), build_statement});
    }
    out.push_back({{head, {"statement", ArgKind::Number}}, build_statement});
  }
}

}  // namespace ukstap::probes
