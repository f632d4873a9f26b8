// C++ names through the ABI's demangler (symbol_demangle.h).
#include "vma-tracker/symbol_demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace ukstap::sym {

namespace {
constexpr size_t kMaxDemangledInput = 4096;
}

std::string demangle(const std::string& name) {
  // Only mangled C++ names ("_Z..."): __cxa_demangle would read a C name such as `i` or `f` as
  // a builtin type's code and answer "int" or "float".
  if (name.size() < 3 || name[0] != '_' || name[1] != 'Z') return name;
  // A traced binary's names are its author's: the demangler recurses on nested templates, and
  // has had stack exhaustion bugs on crafted names. No real signature needs more than this.
  if (name.size() > kMaxDemangledInput) return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) {
    std::free(out);
    return name;
  }
  std::string r(out);
  std::free(out);
  return r;
}

}  // namespace ukstap::sym
