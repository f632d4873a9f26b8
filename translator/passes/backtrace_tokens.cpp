#include "passes/backtrace_tokens.h"

#include <map>
#include <utility>
#include <vector>

namespace ukstap::passes {

namespace {

// A tapset function with an embedded body, by name and arity: what `ubacktrace()` and the
// printers resolve to (a script's own function of that name is not ours to rewrite).
bool is_tapset_fn(const ast::FunctionCall& c, const char* name, size_t nargs) {
  return c.referent && c.referent->name == name && c.args.size() == nargs &&
         c.referent->formal_args.size() == nargs && c.referent->has_embedded_body();
}
bool is_ubacktrace(const ast::Expression* e) {
  auto* c = dynamic_cast<const ast::FunctionCall*>(e);
  return c && is_tapset_fn(*c, "ubacktrace", 0);
}

const ast::Vardecl* global_array(const ast::Expression* base) {
  auto* sym = dynamic_cast<const ast::Symbol*>(base);
  return sym && sym->referent && sym->referent->is_global ? sym->referent : nullptr;
}

// One key position of a global array: (array, index part).
using Pos = std::pair<const ast::Vardecl*, size_t>;

struct State {
  std::map<Pos, Pos> parent;  // union-find: positions that exchange keys share one fate
  std::map<Pos, bool> spoiled;  // a root: some key there is not a token, or is used as text
  std::map<const ast::Vardecl*, std::vector<Pos>> key_vars;  // foreach key variables
  std::vector<std::pair<Pos, const ast::FunctionCall*>> keyed;  // ubacktrace() as a key

  Pos find(Pos p) {
    auto it = parent.find(p);
    if (it == parent.end() || it->second == p) return p;
    return it->second = find(it->second);
  }
  void join(Pos a, Pos b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    parent[a] = b;
    parent[b] = b;
    if (spoiled[a]) spoiled[b] = true;
  }
  void spoil(Pos p) { spoiled[find(p)] = true; }
};

// Which foreach loops bind which key variables to which positions (before the uses are read).
struct Bindings : ast::TraversingVisitor {
  State& st;
  explicit Bindings(State& s) : st(s) {}
  void visit(ast::ForeachLoop& s) override {
    if (const ast::Vardecl* g = global_array(s.base)) {
      for (size_t i = 0; i < s.indexes.size(); ++i) {
        Pos p{g, i};
        if (s.indexes[i] && s.indexes[i]->referent) st.key_vars[s.indexes[i]->referent].push_back(p);
        // Sorted by this key, or filtered by a slice value: the text itself is compared.
        if (s.sort_direction != 0 && s.sort_column == i + 1) st.spoil(p);
        if (i < s.array_slice.size() && s.array_slice[i]) st.spoil(p);
      }
    }
    ast::TraversingVisitor::visit(s);
  }
};

// Every use of a key: allowed as an array key, a print argument (%s unpadded) or the argument
// of print_ustack/sprint_ustack; anything else spoils its positions.
struct Uses : ast::TraversingVisitor {
  State& st;
  explicit Uses(State& s) : st(s) {}

  // Key variables bound by the foreach loops around the node being visited: inside its loop a
  // key variable holds that loop's keys only (two loops may reuse one name `k`).
  std::map<const ast::Vardecl*, std::vector<std::vector<Pos>>> active;

  // The positions whose keys e may hold: its loop's, else (after the loop, the last key stays)
  // every loop's that binds it.
  const std::vector<Pos>* key_var(const ast::Expression* e) {
    auto* sym = dynamic_cast<const ast::Symbol*>(e);
    if (!sym || !sym->referent) return nullptr;
    auto a = active.find(sym->referent);
    if (a != active.end() && !a->second.empty()) return &a->second.back();
    auto it = st.key_vars.find(sym->referent);
    return it == st.key_vars.end() ? nullptr : &it->second;
  }
  // A key variable where its text goes straight to the output: nothing to visit.
  bool output_use(const ast::Expression* e) { return key_var(e) != nullptr; }

  void visit(ast::Symbol& e) override {
    if (auto* ps = key_var(&e))
      for (const Pos& p : *ps) st.spoil(p);
  }
  void visit(ast::ForeachLoop& s) override {  // the key variables are bound here, not used
    if (!global_array(s.base)) {
      ast::TraversingVisitor::visit(s);
      return;
    }
    if (s.value) s.value->accept(*this);
    for (auto* e : s.array_slice)
      if (e) e->accept(*this);
    if (s.limit) s.limit->accept(*this);
    const ast::Vardecl* g = global_array(s.base);
    for (size_t i = 0; i < s.indexes.size(); ++i)
      if (s.indexes[i] && s.indexes[i]->referent)
        active[s.indexes[i]->referent].push_back({Pos{g, i}});
    if (s.body) s.body->accept(*this);
    for (size_t i = 0; i < s.indexes.size(); ++i)
      if (s.indexes[i] && s.indexes[i]->referent) active[s.indexes[i]->referent].pop_back();
  }
  void visit(ast::ArrayIndex& e) override {
    const ast::Vardecl* g = global_array(e.base);
    if (!g) {
      ast::TraversingVisitor::visit(e);
      return;
    }
    for (size_t i = 0; i < e.indexes.size(); ++i) {
      ast::Expression* x = e.indexes[i];
      Pos p{g, i};
      st.find(p);
      if (is_ubacktrace(x)) {
        st.keyed.push_back({p, static_cast<const ast::FunctionCall*>(x)});
      } else if (auto* ps = key_var(x)) {
        for (const Pos& q : *ps) st.join(p, q);
      } else {
        st.spoil(p);  // a key that is text: tokens and text must not mix in one array
        if (x) x->accept(*this);
      }
    }
  }
  void visit(ast::FunctionCall& e) override {
    // print_ustack(ubacktrace()) stays as it is (a call printed directly is not a key either:
    // a stream of distinct stacks would only fill the stack map).
    if ((is_tapset_fn(e, "print_ustack", 1) || is_tapset_fn(e, "sprint_ustack", 1)) &&
        (output_use(e.args[0]) || is_ubacktrace(e.args[0])))
      return;
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::PrintFormat& e) override {
    if (e.hist || !e.to_stream) {
      ast::TraversingVisitor::visit(e);
      return;
    }
    // Which arguments are printed by an unpadded %s.
    std::vector<bool> plain(e.args.size(), !e.with_format);
    if (e.with_format) {
      size_t a = 0;
      for (const auto& comp : e.components) {
        if (comp.conv == ast::FormatComponent::Conv::Literal) continue;
        if (comp.width == -2) ++a;
        if (comp.precision == -2) ++a;
        if (a < plain.size())
          plain[a] = comp.conv == ast::FormatComponent::Conv::String && comp.width == -1 &&
                     comp.precision == -1 && comp.flag == 0;
        ++a;
      }
    }
    for (size_t k = 0; k < e.args.size(); ++k) {
      if (!e.args[k]) continue;
      if (plain[k] && output_use(e.args[k])) continue;
      e.args[k]->accept(*this);
    }
  }
};

template <typename V>
void over_program(const Session& s, V& v) {
  for (auto* p : s.probes)
    if (p && p->body) p->body->accept(v);
  for (auto* f : s.functions)
    if (f && f->body && !f->has_embedded_body()) f->body->accept(v);
}

}  // namespace

BacktraceTokens find_backtrace_tokens(const Session& s) {
  State st;
  Bindings b(st);
  over_program(s, b);
  Uses u(st);
  over_program(s, u);
  BacktraceTokens r;
  std::set<Pos> roots;  // the sets of positions that hold tokens (and nothing else)
  for (auto& [p, call] : st.keyed)
    if (!st.spoiled[st.find(p)]) {
      r.calls.insert(call);
      roots.insert(st.find(p));
    }
  std::vector<Pos> all;
  for (auto& [p, parent] : st.parent) all.push_back(p);
  for (auto& [p, call] : st.keyed) all.push_back(p);
  for (const Pos& p : all)
    if (roots.count(st.find(p))) r.key_positions.insert(p);
  return r;
}

}  // namespace ukstap::passes
