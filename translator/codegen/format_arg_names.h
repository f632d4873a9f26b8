// The names a printed value goes by in a CTF event (`ukstap --ctf=DIR`, loader/ctf_output.h):
// the script's own name for it where it has one — `$filename` and `$file->f_path` ->
// "filename" / "f_path", a variable `count` -> "count", `execname()` -> "execname", `@a[k]`
// -> "a" — else "argN" (N: its place among the statement's arguments). Names are CTF
// identifiers ([A-Za-z_][A-Za-z0-9_]*) and unique within one statement ("count", "count_1").
#pragma once

#include <string>
#include <vector>

#include "ast/ast.h"

namespace ukstap::codegen {

std::vector<std::string> format_arg_names(const std::vector<ast::Expression*>& args);

}  // namespace ukstap::codegen
