// The SystemTap parser: preprocessor (%( %? %: %) conditionals, @define macros) and a
// recursive-descent parser producing the AST of ast/ast.h. Error texts follow stap's parse.cxx.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ast/ast.h"
#include "driver/session.h"

namespace ukstap::parse {

struct Activation;

// One @define macro: `@define NAME(a, b) %( body %)`.
struct Macro {
  std::string name;
  const Token* tok = nullptr;  // the name at the definition
  std::vector<std::string> formals;
  std::vector<const Token*> body;
  bool library = false;  // from a .stpm file
  // A macro parameter bound at an invocation: expanded in its caller's context.
  bool closure = false;
  Activation* parent = nullptr;
};

// The macros of the tapsets' .stpm files, visible to every file.
class MacroLibrary {
 public:
  const Macro* find(const std::string& name) const {
    auto it = macros_.find(name);
    return it == macros_.end() ? nullptr : it->second;
  }
  size_t size() const { return macros_.size(); }
  std::map<std::string, Macro*>& macros() { return macros_; }
  const std::map<std::string, Macro*>& macros() const { return macros_; }

 private:
  std::map<std::string, Macro*> macros_;
};

// What the preprocessor conditions test.
struct PreprocEnv {
  std::string kernel_vr;  // uname -r, e.g. "6.1.0-18-amd64"
  std::string kernel_v;   // kernel_vr up to the first '-', e.g. "6.1.0"
  std::string arch = "x86_64";
  std::string runtime = "bpf";
  std::string systemtap_v = "5.0";
  std::string privilege = "stapdev";  // stap's default privilege level
  bool guru_mode = false;
  std::map<std::string, std::string> kernel_config;  // CONFIG_FOO -> "y" / "m" / "123" / "\"str\""
  std::vector<std::string> args;                     // $1 @1 ...

  // From uname(2), /boot/config-$(uname -r) or /proc/config.gz, and s.opts.
  static PreprocEnv from_session(const Session& s);
};

// How deep a script may go before a parse error. The parser's own recursion is the deepest
// walk of a nesting level: ~3 KB of stack per parenthesis level (~10 KB under ASan), so 500
// levels need 1-2 MB of the default 8 MB stack (4-5 MB in the ASan fuzz build), measured with
// ulimit -s. A left-associative chain (1 + 1 + ...) is parsed by a loop but is one AST level
// per operator for every later recursive pass, which costs far less stack per level: an
// operator counts half a nesting level. So: 500 nested levels, or a chain of ~1000
// operators, or a mix within the same budget (kMaxNesting * kNestCost units).
constexpr int kMaxNesting = 500;
constexpr int kNestCost = 2;                                  // units per nesting level
constexpr int kMaxDepthUnits = kMaxNesting * kNestCost;       // 1 unit per chain operator
constexpr int kMaxChain = kMaxDepthUnits;                     // a chain alone, in operators

// Parses one script or tapset file; reports every error through s.diag.parse_error() and
// returns nullptr if there was any (also for an empty user script, which gets stap's
// "Input file '...' is empty." message).
ast::StapFile* parse_file(Session& s, const SourceFile* file, const MacroLibrary& lib);
ast::StapFile* parse_file(Session& s, const SourceFile* file, const MacroLibrary& lib,
                          const PreprocEnv& env);

// Parses a .stpm file (only @define's allowed) and adds its macros to `lib`. Returns false,
// having reported, on an error (then none of the file's macros are added).
bool parse_library_macros(Session& s, const SourceFile* file, MacroLibrary& lib);
bool parse_library_macros(Session& s, const SourceFile* file, MacroLibrary& lib,
                          const PreprocEnv& env);

// printf format string -> components (docs/STAP-FORMATS.md section 3). Throws std::invalid_argument
// ("invalid or missing conversion specifier") on a bad format.
std::vector<ast::FormatComponent> parse_format(const std::string& fmt);

// Pragmas written as comments in embedded code: "/* pure */ /* unprivileged */" -> {"pure",
// "unprivileged"}.
std::vector<std::string> embedded_pragmas(const std::string& code);

}  // namespace ukstap::parse
