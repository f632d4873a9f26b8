#include "loader/run_config.h"

#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <zlib.h>

#include <bpf/libbpf.h>

#include <cstdlib>
#include <cstring>


namespace ukstap::loader {
namespace {

// The text of a kernel configuration file, gzip-compressed or not (zlib reads both).
bool read_kconfig(const std::string& path, std::string& text) {
  gzFile f = ::gzopen(path.c_str(), "rb");
  if (!f) return false;
  char buf[65536];
  int n;
  text.clear();
  while ((n = ::gzread(f, buf, sizeof buf)) > 0) text.append(buf, (size_t)n);
  bool ok = n == 0;
  ::gzclose(f);
  return ok;
}

}  // namespace

long config_hz_from_text(const std::string& kconfig) {
  static const char kKey[] = "CONFIG_HZ=";
  for (size_t p = 0; (p = kconfig.find(kKey, p)) != std::string::npos; p += sizeof kKey - 1) {
    if (p != 0 && kconfig[p - 1] != '\n') continue;  // CONFIG_HZ_250=y and the like do not count
    long hz = std::atol(kconfig.c_str() + p + sizeof kKey - 1);
    return hz > 0 ? hz : 0;
  }
  return 0;
}

long config_hz_from_file(const std::string& path) {
  std::string text;
  return read_kconfig(path, text) ? config_hz_from_text(text) : -1;
}

long kernel_config_hz() {
  struct utsname u {};
  long hz = ::uname(&u) == 0 ? config_hz_from_file(std::string("/boot/config-") + u.release) : -1;
  if (hz < 0) hz = config_hz_from_file("/proc/config.gz");
  return hz > 0 ? hz : 0;
}

long kernel_hz() {
  static const long hz = [] {
    long known = kernel_config_hz();
    return known > 0 ? known : 250L;
  }();
  return hz;
}

struct stp_config make_run_config(const RunConfigInput& in) {
  struct stp_config c {};
  c.nr_cpus = (uint32_t)libbpf_num_possible_cpus();
  c.config_hz = (uint32_t)kernel_hz();
  c.target_pid = in.target_pid;
  c.runtime_pid = ::getpid();
  c.runtime_uid = ::getuid();
  c.vdso_file_id = in.vdso_file_id;
  c.tables_loading = in.tables_loading;
  struct timespec rt, bt;
  ::clock_gettime(CLOCK_REALTIME, &rt);
  ::clock_gettime(CLOCK_BOOTTIME, &bt);
  c.realtime_offset_ns = (rt.tv_sec - bt.tv_sec) * 1000000000LL + (rt.tv_nsec - bt.tv_nsec);
  return c;
}

}  // namespace ukstap::loader
