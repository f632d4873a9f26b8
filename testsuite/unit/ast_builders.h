// Small helpers to build ASTs by hand in unit tests.
#pragma once

#include <string>
#include <vector>

#include "ast/ast.h"

namespace ukstap::testing {

struct B {
  ast::Arena a;

  ast::LiteralNumber* num(int64_t v) {
    auto* n = a.make<ast::LiteralNumber>();
    n->value = v;
    return n;
  }
  ast::LiteralString* str(const std::string& v) {
    auto* n = a.make<ast::LiteralString>();
    n->value = v;
    return n;
  }
  ast::Symbol* sym(const std::string& name) {
    auto* n = a.make<ast::Symbol>();
    n->name = name;
    return n;
  }
  ast::BinaryExpression* bin(ast::Expression* l, const std::string& op, ast::Expression* r) {
    auto* n = a.make<ast::BinaryExpression>();
    n->left = l;
    n->op = op;
    n->right = r;
    return n;
  }
  ast::ComparisonExpr* cmp(ast::Expression* l, const std::string& op, ast::Expression* r) {
    auto* n = a.make<ast::ComparisonExpr>();
    n->left = l;
    n->op = op;
    n->right = r;
    return n;
  }
  ast::AssignmentExpr* assign(ast::Expression* l, const std::string& op, ast::Expression* r) {
    auto* n = a.make<ast::AssignmentExpr>();
    n->left = l;
    n->op = op;
    n->right = r;
    return n;
  }
  ast::FunctionCall* call(const std::string& name, std::vector<ast::Expression*> args = {}) {
    auto* n = a.make<ast::FunctionCall>();
    n->name = name;
    n->args = std::move(args);
    return n;
  }
  ast::ArrayIndex* index(ast::Expression* base, std::vector<ast::Expression*> idx) {
    auto* n = a.make<ast::ArrayIndex>();
    n->base = base;
    n->indexes = std::move(idx);
    return n;
  }
  ast::PrintFormat* printf_(const std::string& fmt, std::vector<ast::Expression*> args) {
    auto* n = a.make<ast::PrintFormat>();
    n->name = "printf";
    n->with_format = true;
    n->raw_format = fmt;
    n->args = std::move(args);
    return n;
  }
  ast::ExprStatement* es(ast::Expression* e) {
    auto* n = a.make<ast::ExprStatement>();
    n->value = e;
    return n;
  }
  ast::Block* block(std::vector<ast::Statement*> st) {
    auto* n = a.make<ast::Block>();
    n->statements = std::move(st);
    return n;
  }
  ast::ReturnStatement* ret(ast::Expression* e) {
    auto* n = a.make<ast::ReturnStatement>();
    n->value = e;
    return n;
  }
  ast::ProbePoint* pp(std::vector<std::pair<std::string, ast::Expression*>> comps) {
    auto* p = a.make<ast::ProbePoint>();
    for (auto& [f, arg] : comps) {
      ast::ProbePointComponent c;
      c.functor = f;
      c.arg = arg;
      p->components.push_back(c);
    }
    return p;
  }
  ast::Vardecl* var(const std::string& name) {
    auto* v = a.make<ast::Vardecl>();
    v->name = name;
    return v;
  }
};

}  // namespace ukstap::testing
