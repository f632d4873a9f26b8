// `$var->a->b[2]`, `&$var->a`, `@cast(p, "task_struct")->tgid`: one walk over the components
// against kernel BTF, done twice with the same code: in pass 2 without a sink (checks the path,
// gives the expression's type) and in pass 3 with one (writes the BPF C that reads it).
// The C reads through __builtin_preserve_access_index on vmlinux.h's types: clang records
// each member access as a CO-RE relocation, so libbpf fixes the offsets for the kernel the
// program loads on.
#pragma once

#include <string>
#include <vector>

#include "ast/ast.h"
#include "btf/kernel_btf.h"

namespace ukstap::btf {

// Where pass 3's code goes.
struct CodeSink {
  virtual ~CodeSink() = default;
  virtual void line(const std::string& text) = 0;
  virtual std::string tmp_long() = 0;
  virtual std::string tmp_str() = 0;
  virtual std::string eval_long(ast::Expression* e) = 0;  // a C int64_t expression
};

// The value the components apply to.
struct AccessStart {
  std::string what;       // for messages: "$next", "@cast(..., \"task_struct\")"
  uint32_t type_id = 0;   // the value's BTF type (a BTF tracepoint argument)
  uint32_t points_to = 0; // @cast: the value is a pointer to this type (type_id unused)
  std::string value;      // pass 3: the value as a C int64_t expression
};

struct AccessResult {
  ast::Type type = ast::Type::Long;
  bool char_array = false;  // a char array: its address, or its characters (want_string)
  std::string value;        // pass 3: the C expression (int64_t or a string temp)
};

// Throws SemanticError (one line: the type and the member at fault, similar member names).
// A char array at the end reads as its characters when `want_string` (the expression's type
// is String), else as its address.
AccessResult walk_access(const KernelBtf& k, const AccessStart& start,
                         const std::vector<ast::TargetComponent>& comps, bool addressof,
                         const Token* tok, CodeSink* sink, bool want_string = false);

}  // namespace ukstap::btf
