// Hand-built probe points for the tests of probe resolution (test_probes.cpp,
// test_probe_kinds.cpp): a point from its components, resolved against the built-in families,
// and the typed fields of a resolved point.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ast/ast.h"
#include "driver/session.h"
#include "probes/family_point.h"
#include "probes/provider.h"

namespace ukstap::test {

// One component of a hand-built probe point: functor, and a number or string argument.
struct C {
  std::string functor;
  enum { None, Num, Str } kind = None;
  int64_t num = 0;
  std::string str;
  C(const char* f) : functor(f) {}
  C(const char* f, int64_t n) : functor(f), kind(Num), num(n) {}
  C(const char* f, int n) : functor(f), kind(Num), num(n) {}
  C(const char* f, const char* s) : functor(f), kind(Str), str(s) {}
  C(const char* f, const std::string& s) : functor(f), kind(Str), str(s) {}
};

inline ast::ProbePoint* point(Session& s, const std::vector<C>& comps) {
  auto* pp = s.arena.make<ast::ProbePoint>();
  pp->tok = s.arena.token(Token{TokenKind::Identifier, comps[0].functor, {}, nullptr});
  for (auto& c : comps) {
    ast::ProbePointComponent pc;
    pc.functor = c.functor;
    pc.tok = s.arena.token(Token{TokenKind::Identifier, c.functor, {}, nullptr});
    if (c.kind == C::Num) {
      auto* n = s.arena.node<ast::LiteralNumber>(pc.tok);
      n->value = c.num;
      pc.arg = n;
    } else if (c.kind == C::Str) {
      auto* n = s.arena.node<ast::LiteralString>(pc.tok);
      n->value = c.str;
      pc.arg = n;
    }
    pp->components.push_back(pc);
  }
  return pp;
}

inline std::vector<probes::ResolvedPoint> resolve(Session& s, const std::vector<C>& comps) {
  std::vector<probes::ResolvedPoint> out;
  probes::resolve_builtin(s, *point(s, comps), out);
  return out;
}

// The typed fields of a resolved point of family T (fails the test when it is another family).
template <class T>
const T& as(const probes::ResolvedPoint& r) {
  const T* t = r.family.get<T>();
  REQUIRE(t != nullptr);
  return *t;
}

}  // namespace ukstap::test
