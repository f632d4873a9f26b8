#include "passes/cast_layout.h"

#include <bpf/btf.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

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

// `cc -S -O0 -o OUT SRC`, its messages dropped; true when it succeeded. Not std::system: that
// ignores SIGINT and SIGQUIT in ukstap while the compiler runs, so a `kill -INT` of ukstap then
// was lost and the run went on. Here ukstap's handler records it (loader/interrupt.h) and the
// driver stops after pass 2; the compiler, a few tens of ms, is let finish. In its own process
// group, as pass 4's compilers (loader/util.h run_command): a terminal's ^C reaches ukstap only,
// not a compiler whose death would read as "no such member".
bool compile_to_assembly(const std::string& src, const std::string& out) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  if (posix_spawn_file_actions_init(&fa) != 0) return false;
  if (posix_spawnattr_init(&attr) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    return false;
  }
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::string cc = "cc", S = "-S", O0 = "-O0", o = "-o", out_arg = out, src_arg = src;
  char* argv[] = {cc.data(), S.data(), O0.data(), o.data(), out_arg.data(), src_arg.data(), nullptr};
  pid_t pid;
  int rc = posix_spawnp(&pid, "cc", &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return false;
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return false;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
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
    if (!compile_to_assembly(d + "/l.c", d + "/l.s")) continue;
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
      // A 0 (offsetof a first member) is emitted as 8 zero bytes, not as a .quad.
      if (in_value && dir_word == ".zero" && words >> v && v == 8) {
        value = 0;
        break;
      }
    }
    if (value >= 0) break;
  }
  ::unlink((d + "/l.c").c_str());
  ::unlink((d + "/l.s").c_str());
  ::rmdir(d.c_str());
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
