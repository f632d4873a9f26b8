// --lttng's writer process (lttng_output.h).
#include "loader/lttng_output.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <vector>

#include "loader/ctf_output.h"

namespace ukstap::loader {

namespace {

std::string dir_of(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash == 0 ? 1 : slash);
}

std::string real(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

}  // namespace

std::string lttng_writer_path() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string dir = n > 0 ? dir_of(std::string(buf, (size_t)n)) : "";
  if (dir.empty() || real(dir) == real(UKSTAP_BINDIR)) return std::string(UKSTAP_PKGLIBEXECDIR) + "/ukstap-lttng-writer";
  return dir + "/ukstap-lttng-writer";
}

bool open_lttng(CtfOutput& out, std::string& why) {
  std::string exe = lttng_writer_path();
  if (::access(exe.c_str(), X_OK) != 0) {
    why = "--lttng: the LTTng writer '" + exe + "' is missing (ukstap was built without it or not installed)";
    return false;
  }
  // liblttng-ust reads these in its constructor, before the writer's main(). Its constructor
  // waits for the session daemons to enable the writer's events (3 s by default): events sent
  // before that would not be recorded (the writer counts them), so on a loaded machine it waits
  // longer, unless the user chose.
  std::vector<std::string> env = {"LTTNG_UST_ALLOW_BLOCKING=1"};
  if (!::getenv("LTTNG_UST_REGISTER_TIMEOUT")) env.push_back("LTTNG_UST_REGISTER_TIMEOUT=10000");
  if (!out.trace().open_exe(exe, "the LTTng writer", env, why)) return false;
  return out.open("", why);
}

}  // namespace ukstap::loader
