// Checks of option values that need more than a glance at the text: -D limits against what
// the runtime can really do, -d objects (readable, well-formed ELF), -I directories. Each
// returns "" when the value is fine, else the reason, for parse_command_line()'s one-line
// usage error.
#pragma once

#include <string>

namespace ukstap {

// -D NAME[=VALUE]. The limits the generated C and the runtime read (MAXSTRINGLEN,
// MAXMAPENTRIES, MAXACTION, MAXBACKTRACE, MAXERRORS, MAXNESTING, MAXSKIPPED, MAXTRYLOCK,
// STP_SYSCALL_DISPATCH) must be whole decimal numbers in their range; any other macro's value
// goes into a #define line of the generated C, so it must stay on that line.
std::string check_define(const std::string& name, const std::string& value, bool has_value);

// -d FILE: a regular, readable ELF file whose headers and sections lie inside the file.
std::string check_elf_object(const std::string& path);

// -I DIR: an existing, searchable directory.
std::string check_tapset_dir(const std::string& path);

// --compatible=VERSION: SystemTap's version syntax, numbers separated by dots ("1.8", "4.8").
std::string check_compatible_version(const std::string& version);

// --prologue-searching=WHEN: "never", "always" or "auto", as in SystemTap.
std::string check_prologue_searching(const std::string& when);

// --runtime=MODE: ukstap has the bpf runtime only; "kernel" and "dyninst" (SystemTap's
// kernel-module and Dyninst runtimes) and anything else are refused with the reason.
std::string check_runtime(const std::string& mode);

// -T SECONDS: the largest timeout accepted (INT32_MAX seconds, about 68 years: timer.ms()
// takes the milliseconds as a 64-bit number, so this is far from overflowing it).
constexpr double kMaxTimeoutSeconds = 2147483647.0;

}  // namespace ukstap
