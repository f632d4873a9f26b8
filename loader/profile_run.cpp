// `ukstap --profile`'s pass 5 (profile_run.h). Lives in the loader library because the writers
// need libprotobuf and zlib, which the translator library does not link.
#include "loader/profile_run.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "loader/output.h"
#include "loader/passes.h"
#include "loader/profile_summary.h"

namespace ukstap::loader {

bool write_profile(const profile::Profile& p, const std::string& format, const std::string& dest,
                   std::string& why) {
  std::string data;
  if (format == "svg") {
    data = profile::to_svg(p);
  } else if (format == "pprof") {
    if (!profile::to_pprof(p, data, why)) return false;
  } else {
    data = profile::to_folded(p);
  }
  if (dest.empty() || dest == "-") {
    std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
    std::cout.flush();
    if (!std::cout) {
      why = "cannot write the profile to standard output";
      return false;
    }
    return true;
  }
  // -o FILE is opened as the run's output file is (output.h: no planted links in /tmp).
  int fd = open_output_file(dest, why);
  if (fd < 0) return false;
  FILE* f = ::fdopen(fd, "w");
  if (!f) {
    why = "cannot write " + dest + ": " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  int err = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) why = "cannot write " + dest + ": " + std::strerror(err);
  return ok;
}

int run_profile(Session& s, const std::string& format, const std::string& dest) {
  const Options& opts = s.opts;
  bool tty = ::isatty(STDERR_FILENO);
  if (tty)
    std::cerr << "ukstap: sampling at " << opts.profile_hz << " Hz "
              << (!opts.target_cmd.empty() ? "until the command exits"
                  : opts.timeout_s > 0     ? "for " + std::to_string(opts.timeout_s) + " s"
                                           : "until ^C")
              << "...\n";
  auto t0 = std::chrono::steady_clock::now();
  profile::Profile p;
  int rc = pass5_run(s, &p.samples);
  std::cout.flush();
  if (rc != 0) return rc;

  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.hz = opts.profile_hz;
  p.duration_ns = static_cast<int64_t>(secs * 1e9);
  p.start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count() -
               p.duration_ns;
  p.title = "ukstap --profile=" + std::to_string(opts.profile_hz) +
            (!opts.target_cmd.empty() ? " -c " + opts.target_cmd
             : opts.target_pid       ? " -x " + std::to_string(opts.target_pid)
                                     : std::string(" (system-wide)"));
  std::string why;
  if (!write_profile(p, format, dest, why)) {
    std::cerr << "ukstap: " << why << "\n";
    return 1;
  }
  if (tty) std::cerr << profile::summary(p, format, dest, secs);
  return 0;
}

}  // namespace ukstap::loader
