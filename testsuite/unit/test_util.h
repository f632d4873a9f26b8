// Helpers shared by the unit tests that build or inspect files with outside tools (gcc,
// readelf, objcopy, ...): the tools are the independent truth those tests compare against.
#pragma once

#include <stdlib.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace ukstap::test {

// A command's standard output (popen); "" when it cannot start.
inline std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// A command's success.
inline bool sh(const std::string& cmd) { return std::system(cmd.c_str()) == 0; }

// A private directory under /tmp, removed with everything in it.
struct TempDir {
  std::string path;
  explicit TempDir(const char* tag = "unit") {
    std::string tmpl = std::string("/tmp/ukstap-") + tag + "-XXXXXX";
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
    return path + "/" + name;
  }
};

// A test that cannot run on this machine (not root, no tracefs, no gcc, ...): outside CI it says
// why and the caller returns; under CI=true (root, every dependency installed) it fails, since
// in CI a test never skips.
inline void skip_outside_ci(const std::string& why) {
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("cannot run in CI: " + why);
  WARN("skipped: " + why);
}

}  // namespace ukstap::test
