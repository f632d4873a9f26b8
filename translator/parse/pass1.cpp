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

// Every regular file under `dir` (recursively) whose name ends in `ext`, sorted.
static std::vector<std::string> find_files(const std::string& dir, const std::string& ext) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code ec2;
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

  // 1. The tapsets' macro libraries, visible to every file.
  for (const std::string& dir : dirs) {
    for (const std::string& path : find_files(dir, ".stpm")) {
      std::ifstream in(path);
      std::string text;
      if (!in || !read_whole(in, text)) {
        s.diag.fatal("cannot read tapset file '" + path + "': " + std::strerror(errno));
        failed = true;
        continue;
      }
      const SourceFile* src = s.add_source(path, std::move(text), true);
      if (!parse::parse_library_macros(s, src, lib, env)) failed = true;
    }
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
    for (const std::string& path : find_files(dir, ".stp")) {
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
