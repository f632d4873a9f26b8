// Pass 3's code generator: the elaborated program → one C file written against the runtime
// API of runtime/README.md. Expressions become C expressions plus "prep" statements emitted
// before them (map reads, calls, string building, error checks), like SystemTap's translator.
#pragma once

#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/module_info.h"
#include "codegen/shared_programs.h"
#include "driver/session.h"
#include "passes/analyses.h"

namespace ukstap::codegen {

class BodyEmitter;

// Thrown for a construct that pass 3 cannot translate (yet); reported as a semantic error
// pointing at the construct.
struct TranslateError : SemanticError {
  using SemanticError::SemanticError;
};

class Emitter {
 public:
  // Writes what pass 2 decided (`a`: passes/analyses.h); it decides nothing itself.
  Emitter(Session& s, const passes::Analyses& a, ModuleInfo& m);
  // Generates the whole file into m.source. Returns the number of errors reported.
  int run();

 private:
  friend class BodyEmitter;

  // ---- layout
  struct Frame {
    std::string struct_name;  // "stp_locals_p3" / "stp_frame_foo"
    std::string access;       // "c->l.p3" / "c->l.f_foo"
    std::vector<std::string> fields;  // C declarations
    std::set<std::string> names;
    int temps = 0;
    std::string add_temp(const std::string& ctype, const std::string& base);
    std::string add_field(const std::string& decl_type, const std::string& name,
                          const std::string& suffix = "");
  };

  std::string c_name(const std::string& script_name);  // safe C identifier
  // C name of a script function: c_name(name), plus "__a<arity>" when the name is overloaded
  // (user_string/1 and /2 in one script need two frames and two stp_fn_ bodies).
  std::string fn_c_name(const ast::Function* f);
  std::string global_access(const ast::Vardecl* g) const;
  std::string var_access(const ast::Vardecl* v) const;
  const MapInfo* map_of(const ast::Vardecl* g) const;
  int location(const Token* tok);
  // `names`: the arguments' field names under --ctf (format_arg_names.h); part of the key.
  int format_id(const std::string& fmt, const std::vector<ast::FormatComponent>& comps,
                const std::vector<std::string>& names = {});

  void layout_globals();
  void emit_function(ast::Function* f, bool native);
  void emit_probe(DerivedProbe* p, int id);
  std::string probe_macro(const DerivedProbe& p, int id);

  Session& s_;
  const passes::Analyses& a_;
  ModuleInfo& m_;
  std::ostringstream types_;      // structs, map definitions
  std::ostringstream functions_;  // function bodies
  std::ostringstream probes_;     // probe handlers
  std::ostringstream callbacks_;  // kernel foreach bodies (bpf_for_each_map_elem callbacks)
  int next_callback_ = 0;
  SharedSyscallPrograms shared_;  // dispatched syscall probes' handlers, one per same code
  std::deque<Frame> frames_;      // probe and function frames (stable addresses)
  std::map<const ast::Vardecl*, std::string> var_access_;  // locals/params → C lvalue
  std::map<const ast::Vardecl*, int> map_index_;           // array/stats globals → m.maps index
  std::map<const ast::Function*, Frame*> function_frames_;
  std::map<std::string, int> format_ids_;
  std::map<std::string, int> location_ids_;  // m_.locations by text
  std::set<std::string> used_c_names_;
  int errors_ = 0;
  bool has_scalar_globals_ = false;

 public:
  Frame* frame_of(const ast::Function* f) { return function_frames_[f]; }
};

}  // namespace ukstap::codegen
