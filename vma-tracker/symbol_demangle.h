// C++ symbol names as a person reads them: `_ZN6ukstapL10find_filesERKNSt7__cxx11...` ->
// `ukstap::find_files(std::__cxx11::basic_string<...> const&)`, by the C++ ABI's own demangler
// (libstdc++'s abi::__cxa_demangle, the one c++filt and `nm -C` share with GCC's libiberty).
//
// Who demangles: ukstap --profile's outputs (folded, SVG, pprof) by default; the script
// functions' texts (print_ubacktrace, usymname, ...) only with --demangle, because SystemTap's
// run-time symbol tables keep the ELF names as they are (docs/STAP-FORMATS.md §4).
#pragma once

#include <string>

namespace ukstap::sym {

// The demangled form of an Itanium-ABI name (`_Z...`, with GCC's clone suffixes such as
// `.cold` or `.isra.0`); any other name, or one the demangler rejects, comes back unchanged.
std::string demangle(const std::string& name);

}  // namespace ukstap::sym
