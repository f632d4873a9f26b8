// The entry points of each pass, called by the driver (driver/main.cpp) in order.
// Each returns 0 on success; on failure it has already reported through s.diag.
#pragma once

#include <iosfwd>

#include "driver/session.h"

namespace ukstap {

// Pass 1 (parse/pass1.cpp): parses the user script (opts.script_text, opts.script_file or
// stdin) into s.user_file, and every tapset (*.stp under s.tapset_dirs(), after loading the
// *.stpm macro libraries there) into s.tapset_files. Tapsets are parsed even for -p1 so their
// macros are known; a broken tapset is reported like any parse error.
int pass1_parse(Session& s);

// -p1 output (ast/printer.cpp): "# parse tree dump", "# file NAME", then the user file.
void print_pass1(Session& s, std::ostream& out);

// Pass 2 (passes/elaborate.cpp): alias/wildcard expansion, function resolution, type inference,
// checks. Fills s.probes, s.globals, s.functions, s.embeds.
int pass2_elaborate(Session& s);

// -p2 output (passes/print_elaborated.cpp).
void print_pass2(Session& s, std::ostream& out);

// Pass 3 (codegen/translate.cpp): fills s.module with the generated C and its tables.
int pass3_translate(Session& s);
// -p3 output: the generated C.
void print_pass3(Session& s, std::ostream& out);

// Passes 4 and 5 are the loader's (loader/passes.h).
// -l / -L PATTERN (passes/list_probes.cpp): returns 0 when something matched, 1 otherwise.
int list_probes(Session& s, std::ostream& out);

// --dump-functions (passes/list_probes.cpp).
void dump_functions(Session& s, std::ostream& out);

}  // namespace ukstap
