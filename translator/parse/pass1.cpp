// Pass 1: read the user script and the tapsets, and parse them.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "driver/passes.h"
#include "parse/parser.h"

namespace ukstap {

namespace fs = std::filesystem;

static bool read_whole(std::istream& in, std::string& out) {
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

// A tapset directory's own subdirectory names that belong to another SystemTap runtime or
// another architecture. SystemTap reads DIR/*.stp plus DIR/<runtime>/*.stp, where <runtime> is
// linux (its kernel-module runtime), bpf (stapbpf) or dyninst, and DIR/<arch>/ and
// DIR/<runtime>/<arch>/. ukstap reads linux/ of such a tree: scripts written for SystemTap
// (its examples among them) expect the probe aliases, functions and macros of the default
// kernel runtime, and ukstap probes the same Linux kernel; bpf/ is stapbpf's reduced set
// (BPF assembly bodies) and dyninst/ a user-space-only one, and either would define the same
// names again. The embedded C of linux/ is kernel-module C that ukstap cannot compile: a
// script that calls such a function fails with a one-line reason (pass 4), one that does not
// is unaffected. Other subdirectories (ukstap's own tapsets/syscalls/) are read whatever
// their name.
static bool skipped_subdir(const std::string& name, const std::string& arch) {
  static const char* const runtimes[] = {"bpf", "dyninst"};
  static const char* const arches[] = {"arm",   "arm64", "i386", "ia64",  "mips",
                                       "powerpc", "riscv", "s390", "x86_64"};
  for (const char* r : runtimes)
    if (name == r) return true;
  for (const char* a : arches)
    if (name == a) return name != arch;
  return false;
}

// Every regular file under `dir` (recursively, minus skipped_subdir()) whose name ends in
// `ext`, sorted.
static std::vector<std::string> find_files(const std::string& dir, const std::string& ext,
                                           const std::string& arch) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code ec2;
    if (it->is_directory(ec2)) {
      if (skipped_subdir(p.filename().string(), arch)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec2)) continue;
    std::string name = p.string();
    if (name.size() >= ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int pass1_parse(Session& s) {
  parse::PreprocEnv env = parse::PreprocEnv::from_session(s);
  parse::MacroLibrary lib;
  bool failed = false;

  std::vector<std::string> dirs = s.tapset_dirs();

  // 1. The tapsets' macro libraries, visible to every file. A macro defined twice in one
  // directory tree is an error; between directories the first one wins (-I DIR is searched
  // before ukstap's own tapsets, so a SystemTap tree's @choose_defined replaces ours).
  for (const std::string& dir : dirs) {
    parse::MacroLibrary dirlib;
    for (const std::string& path : find_files(dir, ".stpm", env.arch)) {
      std::ifstream in(path);
      std::string text;
      if (!in || !read_whole(in, text)) {
        s.diag.fatal("cannot read tapset file '" + path + "': " + std::strerror(errno));
        failed = true;
        continue;
      }
      const SourceFile* src = s.add_source(path, std::move(text), true);
      if (!parse::parse_library_macros(s, src, dirlib, env)) failed = true;
    }
    for (auto& [name, m] : dirlib.macros())
      if (!lib.find(name)) lib.macros()[name] = m;
  }

  // 2. The user's script.
  std::string name, text;
  if (s.opts.have_script_text) {
    name = "<input>";
    text = s.opts.script_text;
  } else if (s.opts.script_file == "-" || s.opts.script_file.empty()) {
    name = "<input>";
    read_whole(std::cin, text);
  } else {
    name = s.opts.script_file;
    std::ifstream in(name);
    if (!in) {
      s.diag.fatal("cannot open script file '" + name + "': " + std::strerror(errno));
      return 1;
    }
    read_whole(in, text);
  }
  const SourceFile* user_src = s.add_source(name, std::move(text), false);
  s.user_file = parse::parse_file(s, user_src, lib, env);
  if (!s.user_file) failed = true;

  // 3. The tapsets themselves.
  for (const std::string& dir : dirs) {
    for (const std::string& path : find_files(dir, ".stp", env.arch)) {
      std::ifstream in(path);
      std::string ttext;
      if (!in || !read_whole(in, ttext)) {
        s.diag.fatal("cannot read tapset file '" + path + "': " + std::strerror(errno));
        failed = true;
        continue;
      }
      const SourceFile* src = s.add_source(path, std::move(ttext), true);
      if (ast::StapFile* f = parse::parse_file(s, src, lib, env))
        s.tapset_files.push_back(f);
      else
        failed = true;
    }
  }

  // The driver prints the "N parse errors." summary and the pass failure line.
  return failed || s.diag.parse_errors() > 0 ? 1 : 0;
}

}  // namespace ukstap
