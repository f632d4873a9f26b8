// The one way text from a script or from a traced file (DWARF names, ELF paths, tracefs
// fields) reaches the generated C: as the body of a string literal or of a comment, both
// made by c_escape(), or as an identifier made by c_identifier(). Nothing else splices
// foreign text into the C (embedded %{ %} code in guru mode and tapsets is C by design).
#pragma once

#include <string>
#include <string_view>

namespace ukstap::codegen {

// `text` as characters that mean the same inside "..." and are inert inside /* ... */:
//   - printable ASCII stays, except  \  "  ?  and a '*' or '/' next to the other;
//   - \ " become \\ \" ; '?' becomes \? (no trigraph such as ??/ can form);
//   - '*' and '/' adjacent to each other become \052 / \057 (no "*/" or "/*" in a comment);
//   - \n \t \r become their escapes; every other byte (NUL, controls, non-ASCII) becomes a
//     three-digit octal escape, so no real newline, backslash-newline or NUL is ever emitted.
std::string c_escape(std::string_view text);

// "TEXT" as a C string literal (c_escape inside quotes).
std::string c_string_literal(std::string_view text);

// /* TEXT */ as a C comment (c_escape inside the delimiters).
std::string c_comment(std::string_view text);

// A C identifier fragment: letters, digits and '_' kept, anything else becomes '_'; a leading
// digit gets a '_' in front. Callers add their own prefix (g_, l_, stp_fn_).
std::string c_identifier(std::string_view name);

// A C integer type for a cast, from a DWARF type name ("unsigned int", "const long",
// "uint32_t"): only the words that name C integer types (char short int long signed unsigned
// _Bool, the <stdint.h> and size_t names) are kept, anything else is dropped; "" when none is left.
std::string c_integer_type(std::string_view dwarf_type);

}  // namespace ukstap::codegen
