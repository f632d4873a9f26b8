// Everything a script may refer to by name: functions, globals and probe aliases of the user
// script and of every tapset. `private` names are visible only inside their own file, as in
// SystemTap; otherwise the user's script wins over tapsets.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ast/ast.h"

namespace ukstap {
class Session;
}

namespace ukstap::passes {

struct AliasEntry {
  ast::ProbeAlias* alias;
  ast::StapFile* file;
};

class SymbolTable {
 public:
  explicit SymbolTable(Session& s);

  // `from` is the file whose code does the lookup (for private names); null = the user's view.
  ast::Function* find_function(const std::string& name, const ast::StapFile* from) const;
  // Functions may be overloaded by their number of parameters (stap's assert/1, assert/2).
  ast::Function* find_function(const std::string& name, const ast::StapFile* from,
                               size_t nargs) const;
  ast::Vardecl* find_global(const std::string& name, const ast::StapFile* from) const;
  const std::vector<AliasEntry>& aliases() const { return aliases_; }

  // The file a function, global or probe was declared in.
  ast::StapFile* file_of(const void* decl) const;

  // Names for "(similar: ...)" hints, closest first, at most `max`.
  std::vector<std::string> similar_functions(const std::string& name, size_t max = 5) const;

  const std::vector<ast::StapFile*>& files() const { return files_; }

 private:
  template <typename T>
  struct Entry {
    T* decl;
    ast::StapFile* file;
  };
  std::vector<ast::StapFile*> files_;  // user file first
  std::multimap<std::string, Entry<ast::Function>> functions_;
  std::multimap<std::string, Entry<ast::Vardecl>> globals_;
  std::vector<AliasEntry> aliases_;
  std::map<const void*, ast::StapFile*> owner_;
};

// Levenshtein distance, for "(similar: ...)" hints.
size_t edit_distance(const std::string& a, const std::string& b);
// The `max` names of `candidates` closest to `name` (at most 7 edits), closest first,
// ties in the candidates' order.
std::vector<std::string> closest_names(const std::string& name,
                                       const std::vector<std::string>& candidates, size_t max = 5);
std::string join(const std::vector<std::string>& parts, const char* sep);

}  // namespace ukstap::passes
