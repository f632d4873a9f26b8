#include "driver/interactive_script.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "driver/passes.h"

namespace ukstap::interactive {

void ScriptBuffer::append(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines_.push_back(line);
}

std::string ScriptBuffer::text() const {
  std::string t;
  for (const auto& l : lines_) t += l + "\n";
  return t;
}

void ScriptBuffer::list(std::ostream& out) const {
  int width = static_cast<int>(std::to_string(lines_.size()).size());
  for (size_t i = 0; i < lines_.size(); ++i)
    out << std::setw(width) << (i + 1) << ": " << lines_[i] << "\n";
}

namespace {

// A whole decimal number >= 1, or 0.
size_t line_number(const std::string& text) {
  if (text.empty() || text.size() > 9) return 0;
  for (char c : text)
    if (c < '0' || c > '9') return 0;
  return static_cast<size_t>(std::strtoul(text.c_str(), nullptr, 10));
}

}  // namespace

std::string ScriptBuffer::erase(const std::string& range) {
  size_t dash = range.find('-');
  size_t first = line_number(range.substr(0, dash));
  size_t last = dash == std::string::npos ? first : line_number(range.substr(dash + 1));
  if (first == 0 || last == 0) return "invalid line number or range '" + range + "' (N or N-M)";
  if (last < first) return "invalid range '" + range + "': " + std::to_string(first) + " > " +
                           std::to_string(last);
  if (last > lines_.size())
    return "no line " + std::to_string(last) + " in the script (" +
           std::to_string(lines_.size()) + " lines)";
  lines_.erase(lines_.begin() + static_cast<long>(first - 1), lines_.begin() + static_cast<long>(last));
  return "";
}

std::string ScriptBuffer::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "cannot open '" + path + "': " + std::strerror(errno);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  if (in.bad()) return "cannot read '" + path + "': " + std::strerror(errno);
  lines_ = std::move(lines);
  return "";
}

std::string ScriptBuffer::save(const std::string& path) const {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return "cannot open '" + path + "' for writing: " + std::strerror(errno);
  out << text();
  out.close();
  if (!out) return "cannot write '" + path + "': " + std::strerror(errno);
  return "";
}

namespace {

// Pass 1 of TEXT alone, its diagnostics kept rather than printed. The tapsets are parsed too
// (their macros are the script's), ~50 ms.
bool parses(const Options& opts, const std::string& text, std::string& diagnostics,
            std::vector<std::string>* names = nullptr, size_t* probes = nullptr) {
  std::ostringstream err;
  Session s(err);
  s.opts = opts;
  s.opts.script_text = text;
  s.opts.have_script_text = true;
  s.opts.script_file.clear();
  s.opts.verbose = 0;
  s.diag.suppress_warnings = true;
  bool ok = false;
  try {
    ok = pass1_parse(s) == 0 && s.diag.parse_errors() == 0;
  } catch (const std::exception& e) {
    err << "parse error: " << e.what() << "\n";
  }
  if (ok && probes && s.user_file) *probes = s.user_file->probes.size();
  if (ok && names && s.user_file) {
    for (auto* g : s.user_file->globals) names->push_back(g->name);
    for (auto* f : s.user_file->functions) names->push_back(f->name);
  }
  diagnostics = err.str();
  return ok;
}

// The first message of a parser's report: its "parse error:" line and the "saw: ... at" line
// that says where.
std::string first_message(const std::string& report) {
  size_t first = report.find('\n');
  if (first == std::string::npos) return report;
  size_t second = report.find('\n', first + 1);
  return report.substr(0, second);
}

// Opened and not closed at the end: a %{ embedded block or a /* comment, outside strings and
// line comments. The parser reports these where they open, not at the end.
bool open_block_at_end(const std::string& t) {
  bool embedded = false, comment = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i], n = i + 1 < t.size() ? t[i + 1] : '\0';
    if (comment) {
      if (c == '*' && n == '/') comment = false, ++i;
    } else if (embedded) {
      if (c == '%' && n == '}') embedded = false, ++i;
    } else if (c == '"') {
      for (++i; i < t.size() && t[i] != '"' && t[i] != '\n'; ++i)
        if (t[i] == '\\') ++i;
    } else if (c == '#' || (c == '/' && n == '/')) {
      while (i < t.size() && t[i] != '\n') ++i;
    } else if (c == '/' && n == '*') {
      comment = true, ++i;
    } else if (c == '%' && n == '{') {
      embedded = true, ++i;
    }
  }
  return embedded || comment;
}

}  // namespace

Completeness check_entry(const Options& opts, const std::string& text, std::string& diagnostics) {
  if (open_block_at_end(text)) return Completeness::Incomplete;
  if (parses(opts, text, diagnostics)) return Completeness::Complete;
  // Where did it fail? With a closing brace after the text, an error at the end of the text
  // moves (or goes away); an error inside the text stays the same first message.
  std::string with_more;
  parses(opts, text + "\n}\n", with_more);
  return first_message(with_more) == first_message(diagnostics) ? Completeness::Invalid
                                                                 : Completeness::Incomplete;
}

std::vector<std::string> declared_names(const Options& opts, const std::string& script) {
  std::vector<std::string> names;
  std::string ignored;
  if (!script.empty()) parses(opts, script, ignored, &names);
  return names;
}

bool has_probes(const Options& opts, const std::string& script) {
  size_t probes = 0;
  std::string diagnostics;
  return parses(opts, script, diagnostics, nullptr, &probes) ? probes > 0 : true;
}

}  // namespace ukstap::interactive
