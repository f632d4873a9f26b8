#include "driver/session.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ukstap {

#ifndef UKSTAP_SRCDIR
#define UKSTAP_SRCDIR ""
#endif
#ifndef UKSTAP_BINDIR
#define UKSTAP_BINDIR "/usr/local/bin"
#endif
#ifndef UKSTAP_TAPSETDIR
#define UKSTAP_TAPSETDIR "/usr/local/share/ukstap/tapset"
#endif
#ifndef UKSTAP_RUNTIMEDIR
#define UKSTAP_RUNTIMEDIR "/usr/local/share/ukstap/runtime"
#endif

namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string real_path(const std::string& p) {
  if (p.empty()) return p;
  char* r = ::realpath(p.c_str(), nullptr);
  if (!r) return p;
  std::string out = r;
  std::free(r);
  return out;
}

std::string self_exe_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<size_t>(n));
  size_t slash = exe.rfind('/');
  return slash == std::string::npos ? std::string(".") : exe.substr(0, slash == 0 ? 1 : slash);
}

// A source tree has tapsets/ at its top (runtime/ may still be empty, and git keeps no empty
// directories).
bool is_tree(const std::string& root) { return is_dir(root + "/tapsets"); }

// The top of the source tree when running uninstalled, else "" (use the installed data).
// The in-tree binary sits at the top of the build tree (./ukstap) or a little below it
// (testsuite/unit/unit_tests, testsuite/fuzz/fuzz_frontend); a VPATH build finds the sources
// through the configured source directory.
const std::string& tree_root() {
  static const std::string root = [] {
    std::string dir = self_exe_dir();
    if (dir.empty()) return std::string();
    if (real_path(dir) == real_path(UKSTAP_BINDIR)) return std::string();  // installed
    for (const char* up : {"", "/..", "/../.."}) {
      std::string cand = dir + up;
      if (is_tree(cand)) return real_path(cand);
    }
    std::string src = UKSTAP_SRCDIR;
    if (!src.empty() && is_tree(src)) return real_path(src);
    return std::string();
  }();
  return root;
}

}  // namespace

Session::Session(std::ostream& err) : diag(err) {}

Session::~Session() = default;

const SourceFile* Session::add_source(std::string name, std::string text, bool is_tapset) {
  auto f = std::make_unique<SourceFile>();
  f->name = std::move(name);
  f->text = std::move(text);
  f->is_tapset = is_tapset;
  f->privileged = is_tapset || opts.guru_mode;
  sources_.push_back(std::move(f));
  return sources_.back().get();
}

std::vector<std::string> Session::tapset_dirs() const {
  std::vector<std::string> dirs = opts.include_dirs;
  if (const char* env = std::getenv("UKSTAP_TAPSET"); env && *env) {
    dirs.emplace_back(env);
  } else if (const std::string& root = tree_root(); !root.empty()) {
    dirs.push_back(root + "/tapsets");
  } else {
    dirs.emplace_back(UKSTAP_TAPSETDIR);
  }
  return dirs;
}

std::string Session::runtime_dir() const {
  if (const char* env = std::getenv("UKSTAP_RUNTIME"); env && *env) return env;
  if (const std::string& root = tree_root(); !root.empty()) return root + "/runtime";
  return UKSTAP_RUNTIMEDIR;
}

std::string Session::define(const std::string& name, const std::string& fallback) const {
  for (auto it = opts.defines.rbegin(); it != opts.defines.rend(); ++it)
    if (it->first == name) return it->second;
  return fallback;
}

DerivedProbe* new_derived_probe(Session& s) {
  s.derived_.push_back(std::make_unique<DerivedProbe>());
  return s.derived_.back().get();
}

}  // namespace ukstap
