#include "passes/symbol_table.h"

#include <algorithm>
#include <set>

#include "driver/session.h"
#include "probes/internal.h"

namespace ukstap::passes {

SymbolTable::SymbolTable(Session& s) {
  if (s.user_file) files_.push_back(s.user_file);
  for (auto* f : s.tapset_files)
    if (f) files_.push_back(f);
  for (auto* f : files_) {
    for (auto* fn : f->functions) {
      functions_.insert({fn->name, {fn, f}});
      owner_[fn] = f;
    }
    for (auto* g : f->globals) {
      globals_.insert({g->name, {g, f}});
      owner_[g] = f;
    }
    for (auto* a : f->aliases) {
      aliases_.push_back({a, f});
      owner_[a] = f;
    }
    for (auto* p : f->probes) owner_[p] = f;
  }
}

ast::StapFile* SymbolTable::file_of(const void* decl) const {
  auto it = owner_.find(decl);
  return it == owner_.end() ? nullptr : it->second;
}

// Lookup order: a private declaration of the same file, then the user's file, then tapsets in
// load order. Files are in that order in `files_`, and multimap keeps insertion order per key.
template <typename T, typename M>
static T* lookup(const M& map, const std::string& name, const ast::StapFile* from) {
  auto [lo, hi] = map.equal_range(name);
  for (auto it = lo; it != hi; ++it)
    if (it->second.decl->is_private && it->second.file == from) return it->second.decl;
  for (auto it = lo; it != hi; ++it)
    if (!it->second.decl->is_private) return it->second.decl;
  return nullptr;
}

ast::Function* SymbolTable::find_function(const std::string& name,
                                          const ast::StapFile* from) const {
  return lookup<ast::Function>(functions_, name, from);
}

ast::Function* SymbolTable::find_function(const std::string& name, const ast::StapFile* from,
                                          size_t nargs) const {
  auto [lo, hi] = functions_.equal_range(name);
  for (int pass = 0; pass < 2; ++pass)
    for (auto it = lo; it != hi; ++it) {
      const auto& e = it->second;
      bool visible = pass == 0 ? (e.decl->is_private && e.file == from) : !e.decl->is_private;
      if (visible && e.decl->formal_args.size() == nargs) return e.decl;
    }
  return find_function(name, from);
}

// Tapset code does not see the user script's globals: a tapset function's local `n` must stay
// local when a script declares `global n`.
ast::Vardecl* SymbolTable::find_global(const std::string& name, const ast::StapFile* from) const {
  ast::Vardecl* g = lookup<ast::Vardecl>(globals_, name, from);
  if (g && from && from->is_tapset && !file_of(g)->is_tapset) {
    auto [lo, hi] = globals_.equal_range(name);
    for (auto it = lo; it != hi; ++it)
      if (it->second.file->is_tapset && (!it->second.decl->is_private || it->second.file == from))
        return it->second.decl;
    return nullptr;
  }
  return g;
}

std::vector<std::string> SymbolTable::similar_functions(const std::string& name,
                                                        size_t max) const {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (auto& [n, e] : functions_)
    if (!e.decl->is_private && seen.insert(n).second) names.push_back(n);
  return closest_names(name, names, max);
}

// One Levenshtein distance for the whole translator: the probe providers' (probes/glob.cpp).
size_t edit_distance(const std::string& a, const std::string& b) {
  return probes::levenshtein(a, b);
}

std::vector<std::string> closest_names(const std::string& name,
                                       const std::vector<std::string>& candidates, size_t max) {
  const size_t limit = 7;  // SystemTap's levenshtein_suggest threshold
  std::vector<std::pair<size_t, size_t>> scored;  // distance, index
  for (size_t i = 0; i < candidates.size(); ++i) {
    size_t d = edit_distance(name, candidates[i]);
    if (d <= limit && candidates[i] != name) scored.push_back({d, i});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](auto& x, auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  std::set<std::string> once;  // a name may be offered by several sources (alias and family)
  for (auto& [d, i] : scored) {
    if (out.size() >= max) break;
    if (once.insert(candidates[i]).second) out.push_back(candidates[i]);
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

}  // namespace ukstap::passes
