// --skip-badvars (SystemTap: "ignore unresolvable or run-time-inaccessible context variables and
// substitute with 0, without errors"): symbol resolution records each $variable its probe
// point does not offer instead of failing; this replaces each by the literal 0 where it stands.
#pragma once

#include <set>

#include "ast/ast.h"
#include "driver/session.h"

namespace ukstap::passes {

// Replaces every read of a TargetSymbol in `bad` inside the probe's body and condition with a
// LiteralNumber 0 (type long). A bad $variable written to (guru mode) is left alone: the write
// has nowhere to go, and semantic checks report it.
void replace_bad_targets(Session& s, DerivedProbe& p, const std::set<const ast::TargetSymbol*>& bad);

}  // namespace ukstap::passes
