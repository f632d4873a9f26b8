// The script an interactive session (ukstap -i, driver/interactive.h) builds: numbered lines,
// as SystemTap's interactive mode keeps them. `list` shows the numbers, `delete` takes them,
// and since `run` compiles the lines joined by newlines, a diagnostic's <input>:LINE is the
// line `list` shows under that number.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "driver/session.h"

namespace ukstap::interactive {

class ScriptBuffer {
 public:
  bool empty() const { return lines_.empty(); }
  size_t size() const { return lines_.size(); }
  const std::vector<std::string>& lines() const { return lines_; }

  // Appends TEXT's lines (an `add` entry, possibly several lines).
  void append(const std::string& text);
  // The script `run` compiles: the lines joined, with a final newline.
  std::string text() const;
  // "N: line" for each line, numbers right-aligned to the widest.
  void list(std::ostream& out) const;
  void clear() { lines_.clear(); }
  // `delete N` or `delete N-M` (inclusive): "" or the reason nothing was deleted.
  std::string erase(const std::string& range);
  // `load FILE` replaces the lines with FILE's; `save FILE` writes them. "" or the error.
  std::string load(const std::string& path);
  std::string save(const std::string& path) const;

 private:
  std::vector<std::string> lines_;
};

// Whether the text typed after `add` (and the continuation lines so far) is a whole script
// element: a parse with the session's options (-I, -D, arguments) succeeds (Complete); it fails
// at the end of the text, so more lines are wanted (Incomplete: an open brace, a missing probe
// body, an unclosed %{ or comment); or it fails earlier (Invalid: `diagnostics` has the
// parser's messages, as a run would print them).
enum class Completeness { Complete, Incomplete, Invalid };
Completeness check_entry(const Options& opts, const std::string& text, std::string& diagnostics);

// The globals and functions the script declares (for completion), "" names skipped; nothing
// when it does not parse.
std::vector<std::string> declared_names(const Options& opts, const std::string& script);

// Whether the script parses and has a probe yet (before that, pass 2's "no probes found" is
// no news to someone still adding globals and functions).
bool has_probes(const Options& opts, const std::string& script);

}  // namespace ukstap::interactive
