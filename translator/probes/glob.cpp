// Glob matching for probe points: fnmatch-style '*', '?', '[...]' plus '{a,b}' alternatives, and
// the dotted-name variant where '*' stays inside one component and '**' crosses components.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "probes/internal.h"
#include "probes/provider.h"

namespace ukstap::probes {

namespace {

// Expands the first top-level-or-nested "{a,b}" group into alternatives, recursively.
// An unbalanced '{' is taken literally.
void expand_braces(const std::string& p, std::vector<std::string>& out, int depth = 0) {
  if (depth > 16) {  // pathological nesting: match literally
    out.push_back(p);
    return;
  }
  size_t open = std::string::npos;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
      continue;
    }
    if (p[i] == '[') {  // braces inside a class are literal
      size_t j = i + 1;
      if (j < p.size() && (p[j] == '!' || p[j] == '^')) ++j;
      if (j < p.size() && p[j] == ']') ++j;
      while (j < p.size() && p[j] != ']') ++j;
      if (j < p.size()) i = j;
      continue;
    }
    if (p[i] == '{') {
      open = i;
      break;
    }
  }
  if (open == std::string::npos) {
    out.push_back(p);
    return;
  }
  // Find the matching '}' and the top-level commas inside.
  int level = 0;
  std::vector<size_t> commas;
  size_t close = std::string::npos;
  for (size_t i = open; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
      continue;
    }
    if (p[i] == '{') {
      ++level;
    } else if (p[i] == '}') {
      if (--level == 0) {
        close = i;
        break;
      }
    } else if (p[i] == ',' && level == 1) {
      commas.push_back(i);
    }
  }
  if (close == std::string::npos) {
    out.push_back(p);
    return;
  }
  std::string pre = p.substr(0, open), post = p.substr(close + 1);
  size_t start = open + 1;
  commas.push_back(close);
  for (size_t c : commas) {
    expand_braces(pre + p.substr(start, c - start) + post, out, depth + 1);
    start = c + 1;
  }
}

// Matches one class "[...]" at p[pi] (pi points at '['); sets `next` past it. Returns -1 when
// the class is malformed (then '[' is literal), else 1 for a match, 0 for no match.
int match_class(const std::string& p, size_t pi, char c, size_t& next) {
  size_t j = pi + 1;
  bool negate = false;
  if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
    negate = true;
    ++j;
  }
  bool matched = false;
  bool first = true;
  for (; j < p.size(); ++j) {
    if (p[j] == ']' && !first) {
      next = j + 1;
      return matched != negate ? 1 : 0;
    }
    first = false;
    char lo = p[j];
    if (lo == '\\' && j + 1 < p.size()) lo = p[++j];
    char hi = lo;
    if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
      hi = p[j + 2];
      if (hi == '\\' && j + 3 < p.size()) hi = p[j + 3], ++j;
      j += 2;
    }
    if (lo <= c && c <= hi) matched = true;
  }
  return -1;
}

// Brace-free matching. dotted: '*' does not match '.', '**' does.
bool match_simple(const std::string& p, size_t pi, const std::string& t, size_t ti, bool dotted) {
  while (pi < p.size()) {
    char pc = p[pi];
    if (pc == '*') {
      bool cross = !dotted;
      size_t q = pi;
      while (q < p.size() && p[q] == '*') ++q;
      if (dotted && q - pi >= 2) cross = true;
      if (q == p.size()) {
        if (cross) return true;
        return t.find('.', ti) == std::string::npos;
      }
      for (size_t k = ti; k <= t.size(); ++k) {
        if (match_simple(p, q, t, k, dotted)) return true;
        if (k < t.size() && t[k] == '.' && !cross) return false;
      }
      return false;
    }
    if (ti >= t.size()) return false;
    if (pc == '?') {
      if (dotted && t[ti] == '.') return false;
      ++pi, ++ti;
      continue;
    }
    if (pc == '[') {
      size_t next = 0;
      int r = match_class(p, pi, t[ti], next);
      if (r == 0) return false;
      if (r == 1) {
        if (dotted && t[ti] == '.') return false;
        pi = next, ++ti;
        continue;
      }
      // malformed: literal '['
    }
    if (pc == '\\' && pi + 1 < p.size()) pc = p[++pi];
    if (pc != t[ti]) return false;
    ++pi, ++ti;
  }
  return ti == t.size();
}

bool match_any(const std::string& pattern, const std::string& text, bool dotted) {
  if (!has_glob(pattern)) return pattern == text;
  std::vector<std::string> alts;
  expand_braces(pattern, alts);
  for (auto& a : alts)
    if (match_simple(a, 0, text, 0, dotted)) return true;
  return false;
}

}  // namespace

bool has_glob(const std::string& s) {
  return s.find_first_of("*?[{\\") != std::string::npos;
}

bool glob_match(const std::string& pattern, const std::string& text) {
  return match_any(pattern, text, false);
}

bool glob_match_dotted(const std::string& pattern, const std::string& dotted_name) {
  return match_any(pattern, dotted_name, true);
}

bool glob_match_components(const std::vector<std::string>& pattern,
                           const std::vector<std::string>& components) {
  // Pattern components may be "**", which swallows zero or more whole components; other
  // components match exactly one (with '*' inside it never crossing into the next).
  std::function<bool(size_t, size_t)> rec = [&](size_t pi, size_t ci) -> bool {
    if (pi == pattern.size()) return ci == components.size();
    if (pattern[pi] == "**") {
      for (size_t k = ci; k <= components.size(); ++k)
        if (rec(pi + 1, k)) return true;
      return false;
    }
    if (ci == components.size()) return false;
    if (!match_any(pattern[pi], components[ci], true)) return false;
    return rec(pi + 1, ci + 1);
  };
  return rec(0, 0);
}

unsigned levenshtein(const std::string& a, const std::string& b) {
  std::vector<unsigned> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      unsigned sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggest_similar(const std::string& target, const std::vector<std::string>& names) {
  // stap's levenshtein_suggest: at most 5 names within distance 7, the closest ones.
  std::vector<std::pair<unsigned, std::string>> scored;
  for (auto& n : names) {
    if (n.empty() || n == target) continue;
    unsigned d = levenshtein(target, n);
    if (d <= 7) scored.push_back({d, n});
  }
  std::sort(scored.begin(), scored.end());
  scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
  std::vector<std::string> picked;
  for (auto& [d, n] : scored) {
    if (std::find(picked.begin(), picked.end(), n) != picked.end()) continue;
    picked.push_back(n);
    if (picked.size() == 5) break;
  }
  std::sort(picked.begin(), picked.end());
  std::string out;
  for (auto& n : picked) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace ukstap::probes
