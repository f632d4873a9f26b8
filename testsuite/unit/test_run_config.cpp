// loader/run_config: the one configuration pass 5 gives the BPF and the native side. Truth: the
// kernel configuration read by zcat/grep (not by the reader under test), /sys's list of
// possible CPUs, getpid(), and files written here with known contents.
#include "test_util.h"

#include <unistd.h>
#include <sys/utsname.h>
#include <time.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "loader/run_config.h"

using namespace ukstap::loader;
using ukstap::test::run;
using ukstap::test::sh;
using ukstap::test::TempDir;

namespace {

// CONFIG_HZ as the shell finds it where libbpf looks: /boot/config-RELEASE, else
// /proc/config.gz; 0 when neither has it.
long shell_kernel_hz() {
  struct utsname u {};
  ::uname(&u);
  std::string boot = std::string("/boot/config-") + u.release;
  std::string cmd = "if [ -r " + boot + " ]; then cat " + boot +
                    "; elif [ -r /proc/config.gz ]; then zcat /proc/config.gz; fi"
                    " | sed -n 's/^CONFIG_HZ=//p'";
  return std::atol(run(cmd).c_str());
}

// Possible CPUs as /sys lists them ("0-3", "0,2-5"), counted by the shell.
long shell_possible_cpus() {
  return std::atol(run("tr ',' '\\n' < /sys/devices/system/cpu/possible | "
                       "awk -F- '{ n += (NF == 2 ? $2 - $1 + 1 : 1) } END { print n }'").c_str());
}

}  // namespace

TEST_CASE("CONFIG_HZ from a configuration's text", "[run_config]") {
  CHECK(config_hz_from_text("CONFIG_HZ=1000\n") == 1000);
  CHECK(config_hz_from_text("# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_X=y\n") == 250);
  CHECK(config_hz_from_text("CONFIG_HZ_300=y\n") == 0);           // the choice, not the value
  CHECK(config_hz_from_text("XCONFIG_HZ=100\n") == 0);            // not at a line start
  CHECK(config_hz_from_text("# CONFIG_HZ=100 in a comment\n") == 0);
  CHECK(config_hz_from_text("") == 0);
  CHECK(config_hz_from_text("CONFIG_HZ=0\n") == 0);
}

TEST_CASE("CONFIG_HZ from a file, plain or gzip", "[run_config]") {
  TempDir d("runcfg");
  std::string plain = d.write("config", "CONFIG_HZ_300=y\nCONFIG_HZ=300\n");
  CHECK(config_hz_from_file(plain) == 300);
  REQUIRE(sh("gzip -c '" + plain + "' > '" + (d / "config.gz") + "'"));
  CHECK(config_hz_from_file(d / "config.gz") == 300);
  CHECK(config_hz_from_file(d.write("none", "CONFIG_X=y\n")) == 0);
  CHECK(config_hz_from_file(d / "missing") == -1);
}

TEST_CASE("the running kernel's CONFIG_HZ, where libbpf reads it", "[run_config]") {
  long truth = shell_kernel_hz();
  if (truth == 0) {
    ukstap::test::skip_outside_ci("no kernel configuration readable on this machine");
    return;
  }
  CHECK(kernel_config_hz() == truth);
  CHECK(kernel_hz() == truth);
}

TEST_CASE("the run configuration: one struct with every field set", "[run_config]") {
  RunConfigInput in;
  in.target_pid = 4242;
  in.vdso_file_id = 7;
  struct timespec rt0, bt0;
  ::clock_gettime(CLOCK_REALTIME, &rt0);
  ::clock_gettime(CLOCK_BOOTTIME, &bt0);
  struct stp_config c = make_run_config(in);
  CHECK(c.nr_cpus == (uint32_t)shell_possible_cpus());
  long hz = shell_kernel_hz();
  CHECK(c.config_hz == (uint32_t)(hz ? hz : 250));  // never 0: both sides use this figure
  CHECK(c.target_pid == 4242);
  CHECK(c.runtime_pid == ::getpid());
  CHECK(c.runtime_uid == (int64_t)::getuid());
  CHECK(c.vdso_file_id == 7u);
  int64_t offset0 = (rt0.tv_sec - bt0.tv_sec) * 1000000000LL + (rt0.tv_nsec - bt0.tv_nsec);
  CHECK(std::llabs(c.realtime_offset_ns - offset0) < 50000000LL);  // 50 ms: a loaded machine
}
