// Pass 2: where the placeholders of the symbolizing functions flow, and the uses that would read
// them as text (an error).
//
// usymname(), symdata(), sprint_ubacktrace() and the other `sprint`-style symbol and stack
// functions cannot know a name in the probe: they return a token ("\x1eU" + 16 hex + "\x1f",
// docs/DESIGN.md "sprint_* ... return a content token") that user space replaces with the text
// when the string is printed. Printing it (print*, printf, log), building a printed string from
// it (`.`, sprintf), keeping it in a variable or an array (as a value or a key) and passing it
// to a script function all keep working. Anything that reads its bytes would silently compute
// on the token instead: `usymname(a) == "burn"` is always false, `strlen()` is 19. Those uses are
// errors here, one line naming the place and the function whose value it is: a comparison or a
// regex match, a tapset function implemented in C other than log() (strlen, substr, isinstr,
// warn, error: their text is not printed through the decoder), a foreach sorted by such a key or
// value.
#pragma once

#include <map>
#include <set>
#include <string>

#include "ast/ast.h"
#include "driver/session.h"

namespace ukstap::passes {

struct SymbolTokens {
  // Script functions, variables and arrays (their values) that may hold a token, each with the
  // symbolizing function it comes from (for the message).
  std::map<const ast::Function*, std::string> functions;
  std::map<const ast::Vardecl*, std::string> variables;
  std::map<std::pair<const ast::Vardecl*, size_t>, std::string> keys;  // array key positions
  int errors = 0;  // uses that would read a token's bytes (reported through s.diag)
};

// Is `f` one of the tapset functions that return a token (an embedded body writing its result
// with one of the runtime's *_sprint* hooks)?
bool returns_symbol_token(const ast::Function& f);

// The analysis over every probe and function in use; reports each wrong use as a semantic error.
SymbolTokens check_symbol_tokens(Session& s);

}  // namespace ukstap::passes
