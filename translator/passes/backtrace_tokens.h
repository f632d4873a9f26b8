// Pass 2: which ubacktrace() calls become stack-id tokens (docs/DESIGN.md "ubacktrace() as a
// key"). SystemTap's idiom `s[ubacktrace()] <<< 1` formats every event's stack as hex text in
// the kernel, hashes that text as the array key, and keeps it only if it fits MAXSTRINGLEN (a
// 40-frame stack does not at 512). When the string is only ever used as an array key, and the
// keys read back (foreach) only as keys, printed (print*, printf's unpadded %s) or handed to
// print_ustack/sprint_ustack, its text is never looked at in the kernel: the call stores the
// pcs under a content id (as ustack_id() does, runtime/bpf/stp_bpf_stackid.h) and returns a
// token naming it, which user space prints as the very same hex list (loader/
// stack_hex_tokens.h). Any other use (substr, concatenation, comparison, strlen, a copy in a
// variable, a key sorted by its text, a padded %s, a text key in the same array) keeps the
// text, and so does ubacktrace() printed directly (a stream of distinct stacks would only fill
// the stack map).
#pragma once

#include <set>

#include "ast/ast.h"
#include "driver/session.h"

namespace ukstap::passes {

struct BacktraceTokens {
  // ubacktrace() calls whose value becomes a stack-id token (codegen/emitter.cpp).
  std::set<const ast::FunctionCall*> calls;
  bool is_token(const ast::FunctionCall* c) const { return calls.count(c) > 0; }
  // Array key positions (array, index) that hold only such tokens: their key field is sized
  // for a token (STP_TOKEN_KEY_SIZE), not MAXSTRINGLEN, so the map hashes 24 bytes per lookup
  // instead of 512 (`s[ubacktrace()] <<< 1` then costs what `s[ustack_id()] <<< 1` does).
  std::set<std::pair<const ast::Vardecl*, size_t>> key_positions;
  bool is_token_key(const ast::Vardecl* g, size_t i) const { return key_positions.count({g, i}) > 0; }
};

// The analysis over every probe and function in use. Conservative: an array key position
// holds tokens only when every key written there is a ubacktrace() call (or a key read back
// from such a position) and every key read back from it goes only to the uses above.
BacktraceTokens find_backtrace_tokens(const Session& s);

}  // namespace ukstap::passes
