#include "driver/interactive_completion.h"

#include <dirent.h>
#include <sys/stat.h>

#include <readline/readline.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>

#include "driver/passes.h"
#include "probes/provider.h"

namespace ukstap::interactive {

namespace {

// Sessions for the listing machinery (driver/passes.h: list_probes, dump_functions), their
// diagnostics kept out of the terminal. The tapsets are parsed once for the names.
class Listings {
 public:
  explicit Listings(const Options& opts) : opts_(opts) {}

  // `ukstap -l PATTERN` (or -L) lines; none on any error.
  std::vector<std::string> list(const std::string& pattern, bool with_vars) {
    std::ostringstream out;
    try {
      if (with_vars) {  // -L elaborates into the session: a fresh one each time
        auto s = parsed();
        if (!s) return {};
        run_listing(*s, pattern, true, out);
      } else {
        if (!names_) names_ = parsed();
        if (!names_) return {};
        run_listing(*names_, pattern, false, out);
      }
    } catch (...) {
      names_.reset();
      return {};
    }
    return lines(out.str());
  }

  const std::vector<std::string>& probe_types() {
    if (types_.empty()) {
      std::ostringstream out;
      probes::dump_probe_types(out);
      types_ = lines(out.str());
    }
    return types_;
  }

  // Tapset function names (--dump-functions lines start "NAME:TYPE (ARGS)").
  const std::vector<std::string>& functions() {
    if (functions_.empty()) {
      try {
        if (auto s = parsed()) {
          std::ostringstream out;
          dump_functions(*s, out);
          for (const auto& l : lines(out.str())) functions_.push_back(l.substr(0, l.find_first_of(": (")));
        }
      } catch (...) {
      }
    }
    return functions_;
  }

 private:
  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) v.push_back(l);
    return v;
  }

  void run_listing(Session& s, const std::string& pattern, bool with_vars, std::ostream& out) {
    s.opts.list_pattern = pattern;
    s.opts.list_with_vars = with_vars;
    list_probes(s, out);
  }

  // Pass 1 with the placeholder script a plain -l uses (driver/main.cpp).
  std::unique_ptr<Session> parsed() {
    auto s = std::make_unique<Session>(sink_);
    s->opts = opts_;
    s->opts.have_script_text = true;
    s->opts.script_text = "probe never {}\n";
    s->opts.script_file.clear();
    s->opts.verbose = 0;
    s->diag.suppress_warnings = true;
    if (pass1_parse(*s) != 0 || s->diag.parse_errors() > 0) return nullptr;
    sink_.str("");
    return s;
  }

  Options opts_;
  std::ostringstream sink_;
  std::unique_ptr<Session> names_;
  std::vector<std::string> types_, functions_;
};

State* g_state = nullptr;
std::unique_ptr<Listings> g_listings;

Listings& listings(const Options& opts) {
  if (!g_listings) g_listings = std::make_unique<Listings>(opts);
  return *g_listings;
}

// A point's components, split at the dots outside parentheses and strings.
std::vector<std::string> components(const std::string& point) {
  std::vector<std::string> out(1);
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < point.size(); ++i) {
    char c = point[i];
    if (quoted) {
      if (c == '\\' && i + 1 < point.size()) out.back() += point[i++];
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == '.' && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A written component against a --dump-probe-types one: `process("/bin/ls")` is
// `process(string)`, `timer.s(5)`'s `s(5)` is `s(number)`.
bool component_matches(const std::string& written, const std::string& type) {
  if (written == type) return true;
  for (const char* param : {"(string)", "(number)"}) {
    if (!ends_with(type, param)) continue;
    std::string name = type.substr(0, type.size() - std::strlen(param));
    if (written.compare(0, name.size() + 1, name + "(") != 0 || written.back() != ')') return false;
    std::string arg = written.substr(name.size() + 1, written.size() - name.size() - 2);
    if (param[1] == 's') return arg.size() >= 2 && arg.front() == '"' && arg.back() == '"';
    return !arg.empty() && std::all_of(arg.begin(), arg.end(), [](unsigned char c) {
      return std::isxdigit(c) || c == 'x' || c == 'X';
    });
  }
  return false;
}

// What a type component offers as typed text: `process("` for process(string).
std::string component_text(const std::string& type) {
  if (ends_with(type, "(string)")) return type.substr(0, type.size() - 8) + "(\"";
  if (ends_with(type, "(number)")) return type.substr(0, type.size() - 8) + "(";
  return type;
}

bool plain_point_text(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '.'; });
}

// The files of PATH's directory whose names start with PATH's last part: directories with a
// '/', files with the closing `")` of the parameter.
void complete_path(const std::string& before, const std::string& path, std::set<std::string>& out) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  std::string stem = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string shown = slash == std::string::npos ? "" : dir;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || name.compare(0, stem.size(), stem) != 0) continue;
    if (stem.empty() && name[0] == '.') continue;
    struct stat st;
    bool is_dir = ::stat((dir + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    out.insert(before + shown + name + (is_dir ? "/" : "\")"));
  }
  ::closedir(d);
}

}  // namespace

std::vector<std::string> complete_probe_point(const Options& opts, const std::string& typed) {
  std::vector<std::string> comps = components(typed);
  size_t k = comps.size();
  const std::string& partial = comps.back();
  std::string head = typed.substr(0, typed.size() - partial.size());
  std::set<std::string> out;
  // Inside a string parameter, NAME("TEXT: a path for process("/library(", else the names the
  // listing has for NAME("TEXT*") (function names of a binary, tracepoints, marks...).
  if (size_t q = partial.find("(\""); q != std::string::npos &&
                                        std::count(partial.begin(), partial.end(), '"') == 1) {
    std::string name = partial.substr(0, q), text = partial.substr(q + 2);
    std::string before = typed.substr(0, typed.size() - text.size());
    if (name == "process" || name == "library") {
      complete_path(before, text, out);
    } else {
      for (const auto& listed : listings(opts).list(head + name + "(\"" + text + "*\")", false)) {
        std::string last = components(listed).back();
        size_t open = last.find("(\""), close = last.rfind("\")");
        if (open == std::string::npos || close == std::string::npos || close < open + 2) continue;
        // -l's function("main@src/ls.c:1234"): the name is what one types.
        std::string inner = last.substr(open + 2, close - open - 2);
        if (size_t at = inner.find('@'); at != std::string::npos && text.find('@') == std::string::npos)
          inner.resize(at);
        out.insert(before + inner + "\")");
      }
    }
    return {out.begin(), out.end()};
  }
  // Named points (tapset aliases, tracepoints, ...): the listing of what could follow.
  if (plain_point_text(typed)) {
    for (const char* more : {"*", "*.**"})
      for (const auto& name : listings(opts).list(typed + more, false)) {
        std::vector<std::string> nc = components(name);
        if (nc.size() < k || nc[k - 1].compare(0, partial.size(), partial) != 0) continue;
        out.insert(head + nc[k - 1] + (nc.size() > k ? "." : ""));
      }
  }
  // Built-in point types, parameters as the user writes them.
  for (const auto& type : listings(opts).probe_types()) {
    std::vector<std::string> tc = components(type);
    if (tc.size() < k) continue;
    bool prefix_ok = true;
    for (size_t i = 0; i + 1 < k && prefix_ok; ++i) prefix_ok = component_matches(comps[i], tc[i]);
    if (!prefix_ok) continue;
    bool more = tc.size() > k;
    if (component_matches(partial, tc[k - 1])) {  // the component is written: what follows
      out.insert(head + partial + (more ? "." : ""));
      continue;
    }
    std::string text = component_text(tc[k - 1]);
    if (text.compare(0, partial.size(), partial) != 0) continue;
    bool param = text.back() == '(' || text.back() == '"';
    out.insert(head + text + (more && !param ? "." : ""));
  }
  // "syscall.open" and "syscall.open." both: complete to the common part, show both.
  return {out.begin(), out.end()};
}

namespace {

// The entry being written (an add's text, its continuation lines so far) up to the cursor.
std::string entry_before_cursor(int cursor) {
  std::string line(rl_line_buffer, static_cast<size_t>(cursor));
  if (g_state && !g_state->pending.empty()) return g_state->pending + "\n" + line;
  return line;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where the last `probe` keyword of TEXT starts, when no '{' follows it (its points are being
// written); npos otherwise.
size_t open_probe_header(const std::string& text) {
  size_t at = std::string::npos;
  for (size_t i = text.find("probe"); i != std::string::npos; i = text.find("probe", i + 1)) {
    bool starts = i == 0 || !word_char(text[i - 1]);
    bool ends = i + 5 >= text.size() || !word_char(text[i + 5]);
    if (starts && ends) at = i;
  }
  if (at == std::string::npos || text.find('{', at) != std::string::npos) return std::string::npos;
  return at;
}

// The first point of the entry's probe (for its variables): between `probe` and '{' or ','.
std::string entry_first_point(const std::string& text) {
  size_t at = std::string::npos;
  for (size_t i = text.find("probe"); i != std::string::npos; i = text.find("probe", i + 1))
    if ((i == 0 || !word_char(text[i - 1])) && (i + 5 >= text.size() || !word_char(text[i + 5]))) at = i;
  if (at == std::string::npos) return "";
  size_t b = text.find_first_not_of(" \t\n", at + 5);
  if (b == std::string::npos) return "";
  size_t e = text.find_first_of(",{ \t\n", b);
  return text.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

bool in_script(int start) {
  if (!g_state) return false;
  if (!g_state->pending.empty()) return true;
  std::istringstream in(std::string(rl_line_buffer, static_cast<size_t>(start)));
  std::string cmd, second;
  if (!(in >> cmd) || !(in >> second)) return false;
  return argument_kind(cmd) == ArgKind::Script;
}

// Readline's word for the context: a whole probe point (dots, parentheses and quotes inside),
// an identifier in a probe body, a word elsewhere.
char* word_breaks() {
  static char point[] = " \t\n,{";
  static char body[] = " \t\n{}()[],;=+-*/!<>&|%:?~^\".'";
  static char words[] = " \t\n";
  if (!g_state) return words;
  std::string entry = entry_before_cursor(rl_point);
  bool script = !g_state->pending.empty() || argument_kind(entry.substr(0, entry.find_first_of(" \t"))) == ArgKind::Script;
  if (!script) return words;
  return open_probe_header(entry) != std::string::npos ? point : body;
}

std::vector<std::string> g_matches;

char* next_match(const char* text, int state) {
  static size_t index;
  if (state == 0) index = 0;
  size_t len = std::strlen(text);
  while (index < g_matches.size()) {
    const std::string& m = g_matches[index++];
    if (m.compare(0, len, text) == 0) return ::strdup(m.c_str());
  }
  return nullptr;
}

char** offer(const char* text, std::vector<std::string> candidates) {
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  g_matches = std::move(candidates);
  size_t len = std::strlen(text), n = 0;
  char last = 0;
  for (const auto& m : g_matches)
    if (m.compare(0, len, text) == 0) ++n, last = m.back();
  // A point's prefix ("syscall.", "process(\"", a directory) goes on without a space.
  if (n == 1 && (last == '.' || last == '(' || last == '"' || last == '/' || last == ')'))
    rl_completion_suppress_append = 1;
  return rl_completion_matches(text, next_match);
}

std::vector<std::string> body_names(const std::string& text, const std::string& entry) {
  const Options& opts = g_state->opts;
  std::vector<std::string> names;
  bool dollar = !text.empty() && text[0] == '$';
  if (std::string point = entry_first_point(entry); !point.empty()) {
    // -L's line: NAME then "var:type" (the alias's locals) and "$var:type".
    auto ls = listings(opts).list(point, true);
    for (const auto& line : ls) {
      std::istringstream in(line);
      std::string word;
      in >> word;
      while (in >> word) names.push_back(word.substr(0, word.find(':')));
    }
  }
  if (dollar) return names;
  for (const auto& f : listings(opts).functions()) names.push_back(f);
  for (const auto& n : declared_names(opts, g_state->script.text())) names.push_back(n);
  return names;
}

char** complete(const char* text, int start, int /*end*/) {
  rl_attempted_completion_over = 1;  // no file names unless asked below
  if (!g_state) return nullptr;
  if (in_script(start)) {
    std::string entry = entry_before_cursor(start);
    if (g_state->pending.empty()) {
      std::istringstream in(entry);
      std::string cmd, second;
      in >> cmd;
      entry = entry.substr(entry.find(cmd) + cmd.size());
      if (!(in >> second))  // `add <TAB>`
        return offer(text, {"probe", "function", "global", "private"});
    }
    if (open_probe_header(entry) != std::string::npos)
      return offer(text, complete_probe_point(g_state->opts, text));
    return offer(text, body_names(text, entry));
  }
  std::istringstream in(std::string(rl_line_buffer, static_cast<size_t>(start)));
  std::vector<std::string> before;
  for (std::string w; in >> w;) before.push_back(w);
  if (before.empty()) return offer(text, command_names());
  if (before.size() == 1) switch (argument_kind(before[0])) {
      case ArgKind::Option: return offer(text, option_names());
      case ArgKind::Command: return offer(text, command_names());
      case ArgKind::File: rl_attempted_completion_over = 0; return nullptr;
      default: break;
    }
  return nullptr;
}

}  // namespace

void install_completion(State& st) {
  g_state = &st;
  rl_readline_name = "ukstap";
  rl_attempted_completion_function = complete;
  rl_completion_word_break_hook = word_breaks;
  // The default (shell-like) breaks; the hook narrows them per context.
  rl_basic_word_break_characters = const_cast<char*>(" \t\n");
}

}  // namespace ukstap::interactive
