// The run's read-only configuration (common/stp_records.h struct stp_config), made once at pass 5
// and handed unchanged to both sides: written into the BPF object's .rodata before load
// (bpf_module.h) and passed to the native module's stp_native_configure (native_module.h). The
// two sides then answer HZ(), target(), cpu counts and clocks from the same figures; before, the
// struct was filled in two places and the native copy of a script without kernel probes had
// config_hz 0, so HZ() in a begin/end-only script said 250 whatever the kernel's HZ.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/stp_records.h"

namespace ukstap::loader {

// CONFIG_HZ from a kernel configuration's text ("CONFIG_HZ=250" on a line of its own); 0 when
// the text has none.
long config_hz_from_text(const std::string& kconfig);

// CONFIG_HZ from a kernel configuration file, plain or gzip-compressed; 0 when the file has
// none, -1 when it cannot be read.
long config_hz_from_file(const std::string& path);

// The running kernel's CONFIG_HZ, read where libbpf reads the kernel configuration for the BPF
// side's `__kconfig` externs: /boot/config-RELEASE if it can be read, else /proc/config.gz (the
// copy a kernel built with CONFIG_IKCONFIG_PROC carries). 0 when neither says.
long kernel_config_hz();

// The HZ every part of the run uses (HZ(), jiffies(), timer.profile's and timer.jiffies' rates):
// the kernel's CONFIG_HZ, else 250 (the kernel's default) when it cannot be read.
long kernel_hz();

// What only the loader knows when it makes the configuration.
struct RunConfigInput {
  pid_t target_pid = 0;        // -x PID or the -c command, else 0
  uint32_t vdso_file_id = 0;   // the VMA tracker's id of [vdso] (0: no tracker)
  uint32_t tables_loading = 0; // STP_TABLES_*: whose files get unwind tables (stack_sources.h)
};

// The configuration of this run: possible CPUs, kernel HZ, the target, ukstap's own pid and uid,
// CLOCK_REALTIME - CLOCK_BOOTTIME now.
struct stp_config make_run_config(const RunConfigInput& in);

}  // namespace ukstap::loader
