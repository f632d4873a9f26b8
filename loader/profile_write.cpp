// `ukstap --profile`'s last step (driver/profile_mode.h): the parsed samples become a profile
// (loader/profile.h) and are written in the chosen format. Lives in the loader library because
// the writers need libprotobuf and zlib, which the translator library does not link.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "driver/profile_mode.h"
#include "loader/output.h"
#include "loader/profile.h"

namespace ukstap::profile_mode {

bool write_profile(const std::vector<RawSample>& samples, const Options& opts,
                   const std::string& format, const std::string& dest, double duration_s,
                   std::string& why) {
  profile::Profile p;
  p.hz = opts.profile_hz;
  p.duration_ns = static_cast<int64_t>(duration_s * 1e9);
  p.start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count() -
               p.duration_ns;
  p.title = "ukstap --profile=" + std::to_string(opts.profile_hz) +
            (!opts.target_cmd.empty() ? " -c " + opts.target_cmd
             : opts.target_pid       ? " -x " + std::to_string(opts.target_pid)
                                     : std::string(" (system-wide)"));
  p.samples.reserve(samples.size());
  for (const RawSample& r : samples) {
    profile::Sample s;
    s.comm = r.comm;
    s.pid = r.pid;
    for (const RawFrame& f : r.frames) s.frames.push_back({f.addr, f.name, f.module, f.kernel, f.inexact});
    p.samples.push_back(std::move(s));
  }
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
  // -o FILE is opened as the run's output file is (loader/output.h: no planted links in /tmp).
  int fd = loader::open_output_file(dest, why);
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

}  // namespace ukstap::profile_mode
