// process.begin/.end/.thread.*, process("PATH"|PID)...: lifecycle events, function entry and
// return (uprobes on ELF symbols, DWARF for variables), SDT markers; .statement is refused.
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <sstream>
#include <string>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/cache.h"
#include "probes/internal.h"

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

// stap's find_executable(): a name with a '/' is taken as is (relative to the working
// directory), else searched in $PATH; the result is canonicalized (symlinks resolved).
// Globs in an absolute path expand to every regular file they match.
std::vector<std::string> resolve_paths(const std::string& name, const Token* tok) {
  if (name.empty()) throw SemanticError("empty process path", tok);
  std::vector<std::string> out;
  if (name.find('/') != std::string::npos) {
    if (has_glob(name)) {
      glob_t g{};
      if (glob(name.c_str(), GLOB_BRACE | GLOB_NOSORT, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i)
          if (is_regular(g.gl_pathv[i])) out.push_back(canonical(g.gl_pathv[i]));
      globfree(&g);
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      return out;  // a pattern that matches nothing is not an error
    }
    if (!is_regular(name)) throw SemanticError("cannot find executable '" + name + "'", tok);
    out.push_back(canonical(name));
    return out;
  }
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) dir = ".";
    std::string cand = dir + "/" + name;
    if (is_regular(cand) && access(cand.c_str(), X_OK) == 0) {
      out.push_back(canonical(cand));
      return out;
    }
  }
  throw SemanticError("cannot find executable '" + name + "' in $PATH", tok);
}

std::shared_ptr<const ElfInfo> elf_for(Session& s, const std::string& path, const Token* tok) {
  auto& elfs = session_cache(s).elfs;
  auto it = elfs.find(path);
  if (it == elfs.end()) it = elfs.emplace(path, read_elf_info(path)).first;
  if (!it->second->error.empty())
    throw SemanticError("cannot read '" + path + "': " + it->second->error, tok);
  return it->second;
}

// The target of process(...): canonical paths and the pid (0 for none). For `process` without
// an argument, `for_code` says the point needs a binary (function/mark): use -c or -x.
struct Target {
  std::string path;
  int64_t pid = 0;
};

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
  // process.function(...) / process.mark(...): the -c command's program, or -x's.
  if (!s.opts.target_cmd.empty()) {
    std::istringstream in(s.opts.target_cmd);
    std::string prog;
    in >> prog;
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
                                         : ProcessPoint::Event::ThreadEnd;
    pp.path = t.path;
    pp.pid = t.pid;
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

void build_function(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  bool is_return = m.has("return");
  const Token* ftok = m.tok("function");
  FunctionSpec fs = parse_function_spec(m.str("function"), ftok);
  for (auto& t : targets(s, m, true)) {
    auto info = elf_for(s, t.path, m.tok("process"));
    for (const FunctionSym& f : info->functions) {
      if (!glob_match(fs.name, f.name)) continue;
      if (!fs.file.empty() && (!f.has_dwarf || !file_matches(fs.file, f.decl_file))) continue;
      if (fs.line && f.decl_line != fs.line) continue;
      std::string text = f.name;
      if (f.has_dwarf && !f.decl_file.empty())
        text += "@" + f.decl_file + ":" + std::to_string(f.decl_line);
      auto comps = with_target(m, t);
      for (auto& c : comps)
        if (c.functor == "function") c.str = text;
      ResolvedPoint rp;
      rp.point = make_point(s, *m.pp, comps);
      UprobePoint up;
      up.path = t.path;
      up.symbol = f.name;
      up.offset = f.offset;
      up.address = f.addr;
      up.size = f.size;
      up.is_return = is_return;
      up.pid = t.pid;
      if (f.has_dwarf) up.debuginfo = info->debug_file;
      // Parameters in declaration order: at the entry point they are in the ABI's argument
      // registers, which is how the backend reads them.
      for (int k = 0; k < f.nparams && k < static_cast<int>(f.vars.size()); ++k)
        up.params.push_back({f.vars[k].first, f.vars[k].second});
      rp.family = std::move(up);
      if (is_return && !f.return_type.empty()) rp.target_vars.push_back({"$return", f.return_type});
      for (auto& v : f.vars) rp.target_vars.push_back(v);
      out.push_back(std::move(rp));
    }
  }
}

void build_mark(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  std::string name_pat = m.str("mark");
  std::string prov_pat = m.has("provider") ? m.str("provider") : "*";
  if (name_pat.empty()) throw SemanticError("empty mark name", m.tok("mark"));
  for (auto& t : targets(s, m, true)) {
    auto info = elf_for(s, t.path, m.tok("process"));
    for (const SdtNote& n : info->notes) {
      if (!glob_match(name_pat, n.name) || !glob_match(prov_pat, n.provider)) continue;
      auto comps = with_target(m, t);
      for (auto& c : comps) {
        if (c.functor == "mark") c.str = n.name;
        if (c.functor == "provider") c.str = n.provider;
      }
      ResolvedPoint rp;
      rp.point = make_point(s, *m.pp, comps);
      UprobePoint up;
      up.path = t.path;
      up.offset = n.pc_offset;
      up.address = n.pc;
      up.pid = t.pid;
      up.sdt = SdtMark{n.provider, n.name, n.args, n.nargs, n.semaphore_offset};
      rp.family = std::move(up);
      for (int i = 1; i <= n.nargs; ++i) rp.target_vars.push_back({"$arg" + std::to_string(i), "long"});
      out.push_back(std::move(rp));
    }
  }
}

void build_statement(Session&, const Match& m, std::vector<ResolvedPoint>&) {
  throw SemanticError("process(...).statement probes are not supported yet; use "
                      "process(\"PATH\").function(\"NAME\") or process(\"PATH\").mark(\"NAME\")",
                      m.tok("statement"));
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
    const PatternComponent fn{"function", ArgKind::String};
    out.push_back({{head, fn}, build_function});
    out.push_back({{head, fn, {"call"}}, build_function});
    out.push_back({{head, fn, {"return"}}, build_function});
    out.push_back({{head, {"mark", ArgKind::String}}, build_mark});
    out.push_back({{head, {"provider", ArgKind::String}, {"mark", ArgKind::String}}, build_mark});
    out.push_back({{head, {"statement", ArgKind::String}}, build_statement});
    out.push_back({{head, {"statement", ArgKind::Number}}, build_statement});
    out.push_back({{head, {"statement", ArgKind::String}, {"nearest"}}, build_statement});
  }
}

}  // namespace ukstap::probes
