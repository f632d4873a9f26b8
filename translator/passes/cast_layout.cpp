#include "passes/cast_layout.h"

#include <bpf/btf.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <unistd.h>

#include "driver/diagnostics.h"
#include "passes/kernel_types.h"

namespace ukstap::passes {

namespace {

// The member path "a.b" of `->a->b`, or "" when a component is not a member.
std::string member_path(const ast::CastOp& e) {
  std::string path;
  for (const auto& c : e.components) {
    if (c.kind != ast::TargetComponent::Kind::StructMember) return "";
    path += (path.empty() ? "" : ".") + c.member;
  }
  return path;
}

bool is_sizeof(const ast::CastOp& e) {
  return e.components.size() == 1 &&
         e.components[0].kind == ast::TargetComponent::Kind::LiteralIndex;
}

// One value from the C compiler: `expr` (sizeof/offsetof of `type`) with `header` included,
// read back from the assembly of a constant initialised with it. Trying `struct T` when T is
// not a type name itself. Cached: the macros use the same expression more than once.
int64_t compiler_value(const std::string& header, const std::string& type, bool offset,
                       const std::string& member, const Token* tok) {
  static std::map<std::string, int64_t> cache;
  std::string key = header + "\n" + type + "\n" + (offset ? member : "#size");
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  char dir[] = "/tmp/ukstap-layout.XXXXXX";
  if (!mkdtemp(dir)) throw SemanticError("@cast: cannot make a temporary directory", tok);
  std::string d = dir;
  int64_t value = -1;
  for (std::string t : {type, "struct " + type}) {
    {
      std::ofstream c(d + "/l.c");
      c << "#include <stddef.h>\n#include " << header << "\n"
        << "const unsigned long long __ukstap_value = "
        << (offset ? "offsetof(" + t + ", " + member + ")" : "sizeof(" + t + ")") << ";\n";
    }
    std::string cmd = "cc -S -O0 -o " + d + "/l.s " + d + "/l.c 2>/dev/null";
    if (std::system(cmd.c_str()) != 0) continue;
    std::ifstream s(d + "/l.s");
    std::string line;
    bool in_value = false;
    while (std::getline(s, line)) {
      if (line.rfind("__ukstap_value:", 0) == 0) in_value = true;
      std::istringstream words(line);
      std::string dir_word;
      long long v;
      if (in_value && words >> dir_word && (dir_word == ".quad" || dir_word == ".8byte") &&
          words >> v) {
        value = v;
        break;
      }
    }
    if (value >= 0) break;
  }
  std::system(("rm -rf " + d).c_str());
  if (value < 0)
    throw SemanticError("@cast(..., \"" + type + "\", \"" + header + "\"): the C compiler (cc) " +
                            "finds no " + (offset ? "member " + member + " of " : "type ") +
                            type + " in " + header,
                        tok);
  cache[key] = value;
  return value;
}

}  // namespace

bool cast_header_module(const std::string& module) {
  return module.size() > 2 && module.front() == '<' && module.back() == '>';
}

bool cast_layout_pattern(const ast::CastOp& e) {
  auto* zero = dynamic_cast<const ast::LiteralNumber*>(e.operand);
  if (!zero || zero->value != 0 || !e.addressof || e.components.empty()) return false;
  // A kernel type's member offset stays a CO-RE read (relocated for the running kernel).
  return is_sizeof(e) || (cast_header_module(e.module) && !member_path(e).empty());
}

int64_t cast_layout_value(const ast::CastOp& e) {
  bool size = is_sizeof(e);
  int64_t n = size ? e.components[0].num_index : 0;
  if (cast_header_module(e.module))
    return size ? n * compiler_value(e.module, e.type_name, false, "", e.tok)
                : compiler_value(e.module, e.type_name, true, member_path(e), e.tok);
  const btf::KernelBtf& k = kernel_btf_or_throw(e.tok);
  btf::AccessStart st = cast_start(k, e);  // the module check and the type lookup
  long sz = btf__resolve_size(k.raw(), st.points_to);
  if (sz < 0) throw SemanticError("@cast: type '" + e.type_name + "' has no size", e.tok);
  return n * sz;
}

}  // namespace ukstap::passes
