// Probe point resolution: a probe point as written (possibly with wildcards) → the concrete
// built-in points it stands for, through any number of tapset aliases. Each result carries the
// alias prologues and epilogues to splice around the user's body, and the chain of names that
// led to it (for -p2's "/* <- ... */" and -l's listing).
#pragma once

#include <vector>

#include "ast/ast.h"
#include "passes/symbol_table.h"
#include "probes/provider.h"

namespace ukstap {
class Session;
}

namespace ukstap::passes {

struct BodyPiece {
  const ast::Block* block;  // the alias's body, shared: clone before use
  ast::StapFile* file;      // for private-name lookup inside it
};

struct Derivation {
  probes::ResolvedPoint resolved;
  // Points that led here, innermost (closest to the built-in point) first, the written one last.
  std::vector<const ast::ProbePoint*> chain;
  // The first alias name the written point matched; null when it named a built-in directly.
  const ast::ProbePoint* alias_name = nullptr;
  std::vector<BodyPiece> prologues;  // in execution order, before the user's body
  std::vector<BodyPiece> epilogues;  // in execution order, after it
  std::vector<const ast::Expression*> conditions;  // `if (...)` guards along the way (shared)
};

// Appends every concrete point `written` stands for. Throws SemanticError (chained the way
// SystemTap chains "while resolving probe point") when it cannot be resolved. An optional (`?`)
// point that does not resolve contributes nothing.
void derive_points(Session& s, const SymbolTable& symbols, const ast::ProbePoint& written,
                   std::vector<Derivation>& out);

// Does the written (pattern) point match the alias name `name`, component by component?
bool point_matches(const ast::ProbePoint& pattern, const ast::ProbePoint& name);

}  // namespace ukstap::passes
