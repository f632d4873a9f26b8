// POSIX ERE → syntax tree → Thompson NFA → DFA by subset construction (regex_dfa.h).
#include "codegen/regex_dfa.h"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <map>
#include <sstream>
#include <stdexcept>

namespace ukstap::codegen {

namespace {

using ByteSet = std::bitset<256>;

// ---------------------------------------------------------------------------- syntax tree
struct Re {
  enum Kind { Set, Cat, Alt, Repeat, Empty, Bol, Eol } kind = Empty;
  ByteSet set;
  std::vector<int> kids;
  int min = 0, max = -1;  // Repeat: -1 = unbounded
};

constexpr int kMaxRepeat = 255;  // RE_DUP_MAX

class Parser {
 public:
  explicit Parser(const std::string& re) : re_(re) {}
  std::vector<Re> nodes;

  int parse() {
    int r = alt();
    if (pos_ != re_.size()) fail("unmatched )");
    return r;
  }

 private:
  [[noreturn]] void fail(const std::string& why) { throw std::runtime_error(why); }
  bool at_end() const { return pos_ >= re_.size(); }
  char peek() const { return re_[pos_]; }
  int add(Re r) {
    nodes.push_back(std::move(r));
    return static_cast<int>(nodes.size()) - 1;
  }

  int alt() {
    Re a;
    a.kind = Re::Alt;
    a.kids.push_back(cat());
    while (!at_end() && peek() == '|') {
      ++pos_;
      a.kids.push_back(cat());
    }
    return a.kids.size() == 1 ? a.kids[0] : add(a);
  }
  int cat() {
    Re c;
    c.kind = Re::Cat;
    while (!at_end() && peek() != '|' && peek() != ')') c.kids.push_back(piece());
    if (c.kids.empty()) return add(Re{});
    return c.kids.size() == 1 ? c.kids[0] : add(c);
  }
  int piece() {
    int a = atom();
    while (!at_end()) {
      char q = peek();
      Re r;
      r.kind = Re::Repeat;
      if (q == '*') {
        r.min = 0, r.max = -1;
      } else if (q == '+') {
        r.min = 1, r.max = -1;
      } else if (q == '?') {
        r.min = 0, r.max = 1;
      } else if (q == '{') {
        bound(r);
        r.kids = {a};
        a = add(r);
        continue;
      } else {
        break;
      }
      ++pos_;
      r.kids = {a};
      a = add(r);
    }
    return a;
  }
  int number() {
    if (at_end() || !isdigit(static_cast<unsigned char>(peek()))) fail("invalid repetition count");
    long v = 0;
    while (!at_end() && isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (peek() - '0');
      if (v > kMaxRepeat) fail("repetition count above 255");
      ++pos_;
    }
    return static_cast<int>(v);
  }
  void bound(Re& r) {
    ++pos_;  // {
    r.min = number();
    r.max = r.min;
    if (!at_end() && peek() == ',') {
      ++pos_;
      r.max = (!at_end() && peek() == '}') ? -1 : number();
    }
    if (at_end() || peek() != '}') fail("unmatched {");
    ++pos_;
    if (r.max >= 0 && r.max < r.min) fail("invalid repetition range");
  }
  int atom() {
    char ch = peek();
    ++pos_;
    Re r;
    switch (ch) {
      case '(': {
        int inner = alt();
        if (at_end() || peek() != ')') fail("unmatched (");
        ++pos_;
        return inner;
      }
      case '*': case '+': case '?': case '{':
        fail(std::string("nothing to repeat before '") + ch + "'");
      case '.':
        r.kind = Re::Set;
        r.set.set();
        r.set.reset(0);
        return add(r);
      case '^':
        r.kind = Re::Bol;
        return add(r);
      case '$':
        r.kind = Re::Eol;
        return add(r);
      case '[':
        r.kind = Re::Set;
        r.set = bracket();
        return add(r);
      case '\\':
        if (at_end()) fail("trailing backslash");
        ch = peek();
        ++pos_;
        if (isdigit(static_cast<unsigned char>(ch)) && ch != '0') fail("back-references");
        [[fallthrough]];
      default:
        r.kind = Re::Set;
        r.set.set(static_cast<unsigned char>(ch));
        return add(r);
    }
  }
  ByteSet bracket() {
    ByteSet s;
    bool negate = false;
    if (!at_end() && peek() == '^') {
      negate = true;
      ++pos_;
    }
    bool first = true;
    for (;;) {
      if (at_end()) fail("unmatched [");
      unsigned char ch = static_cast<unsigned char>(peek());
      if (ch == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      if (ch == '[' && pos_ + 1 < re_.size() &&
          (re_[pos_ + 1] == ':' || re_[pos_ + 1] == '.' || re_[pos_ + 1] == '=')) {
        char kind = re_[pos_ + 1];
        size_t end = re_.find(std::string(1, kind) + "]", pos_ + 2);
        if (end == std::string::npos) fail("unmatched [");
        std::string name = re_.substr(pos_ + 2, end - pos_ - 2);
        if (kind != ':') fail("collating elements");
        class_set(name, s);
        pos_ = end + 2;
        continue;
      }
      ++pos_;
      unsigned char lo = ch, hi = ch;
      if (!at_end() && peek() == '-' && pos_ + 1 < re_.size() && re_[pos_ + 1] != ']') {
        hi = static_cast<unsigned char>(re_[pos_ + 1]);
        pos_ += 2;
        if (hi < lo) fail("invalid range");
      }
      for (unsigned v = lo; v <= hi; ++v) s.set(v);
    }
    if (negate) s.flip();
    s.reset(0);
    return s;
  }
  void class_set(const std::string& name, ByteSet& s) {
    int (*fn)(int) = nullptr;
    if (name == "alpha") fn = isalpha;
    else if (name == "digit") fn = isdigit;
    else if (name == "alnum") fn = isalnum;
    else if (name == "upper") fn = isupper;
    else if (name == "lower") fn = islower;
    else if (name == "space") fn = isspace;
    else if (name == "blank") fn = isblank;
    else if (name == "punct") fn = ispunct;
    else if (name == "print") fn = isprint;
    else if (name == "graph") fn = isgraph;
    else if (name == "cntrl") fn = iscntrl;
    else if (name == "xdigit") fn = isxdigit;
    else fail("unknown character class [:" + name + ":]");
    for (int v = 1; v < 128; ++v)  // the C locale: ASCII
      if (fn(v)) s.set(v);
  }

  const std::string& re_;
  size_t pos_ = 0;
};

// ------------------------------------------------------------------------------------ NFA
struct NState {
  enum Kind { Chars, Eps, Bol, Eol, Match } kind = Eps;
  int set = -1;  // Chars: index into sets
  int out1 = -1, out2 = -1;
};

class Nfa {
 public:
  Nfa(const std::vector<Re>& tree) : tree_(tree) {}
  std::vector<NState> st;
  std::vector<ByteSet> sets;
  int start = -1;

  void build(int root) {
    auto [s, e] = frag(root);
    int m = add({NState::Match});
    st[e].out1 = m;
    start = s;
  }

 private:
  static constexpr size_t kMaxNfa = 20000;
  int add(NState n) {
    if (st.size() >= kMaxNfa) throw std::runtime_error("expression too large");
    st.push_back(n);
    return static_cast<int>(st.size()) - 1;
  }
  // A fragment: its start, and its end (an Eps whose out1 the caller sets).
  std::pair<int, int> frag(int i) {
    const Re& r = tree_[i];
    switch (r.kind) {
      case Re::Empty: {
        int e = add({});
        return {e, e};
      }
      case Re::Set: {
        sets.push_back(r.set);
        int e = add({});
        int s = add({NState::Chars, static_cast<int>(sets.size()) - 1, e});
        return {s, e};
      }
      case Re::Bol:
      case Re::Eol: {
        int e = add({});
        int s = add({r.kind == Re::Bol ? NState::Bol : NState::Eol, -1, e});
        return {s, e};
      }
      case Re::Cat: {
        auto [s, e] = frag(r.kids[0]);
        for (size_t k = 1; k < r.kids.size(); ++k) {
          auto [s2, e2] = frag(r.kids[k]);
          st[e].out1 = s2;
          e = e2;
        }
        return {s, e};
      }
      case Re::Alt: {
        int end = add({});
        int s = -1, prev_split = -1;
        for (size_t k = 0; k < r.kids.size(); ++k) {
          auto [ks, ke] = frag(r.kids[k]);
          st[ke].out1 = end;
          int split = add({NState::Eps, -1, ks});
          if (prev_split < 0) s = split;
          else st[prev_split].out2 = split;
          prev_split = split;
        }
        return {s, end};
      }
      case Re::Repeat: {
        // min mandatory copies, then max-min optional ones (or a loop when unbounded).
        int s = add({}), e = s;
        for (int k = 0; k < r.min; ++k) {
          auto [ks, ke] = frag(r.kids[0]);
          st[e].out1 = ks;
          e = ke;
        }
        if (r.max < 0) {
          auto [ks, ke] = frag(r.kids[0]);
          int loop = add({NState::Eps, -1, ks});
          int end = add({});
          st[loop].out2 = end;
          st[ke].out1 = loop;
          st[e].out1 = loop;
          return {s, end};
        }
        int end = add({});
        for (int k = r.min; k < r.max; ++k) {
          auto [ks, ke] = frag(r.kids[0]);
          int opt = add({NState::Eps, -1, ks});
          st[opt].out2 = end;
          st[e].out1 = opt;
          e = ke;
        }
        st[e].out1 = end;
        return {s, end};
      }
    }
    throw std::runtime_error("internal error");
  }
  const std::vector<Re>& tree_;
};

// The states reachable from `from` without reading a byte. Kept: Chars, Match and (unless
// followed) Eol states, which are what a DFA state is made of.
std::vector<int> closure(const Nfa& n, const std::vector<int>& from, bool bol, bool eol) {
  std::vector<char> seen(n.st.size(), 0);
  std::vector<int> stack(from), out;
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    if (i < 0 || seen[i]) continue;
    seen[i] = 1;
    const NState& s = n.st[i];
    switch (s.kind) {
      case NState::Chars:
      case NState::Match:
        out.push_back(i);
        break;
      case NState::Eol:
        if (eol) stack.push_back(s.out1);
        else out.push_back(i);
        break;
      case NState::Bol:
        if (bol) stack.push_back(s.out1);
        break;
      case NState::Eps:
        stack.push_back(s.out1);
        stack.push_back(s.out2);
        break;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool has_match(const Nfa& n, const std::vector<int>& set) {
  for (int i : set)
    if (n.st[i].kind == NState::Match) return true;
  return false;
}

}  // namespace

RegexDfa compile_regex_dfa(const std::string& re, uint32_t max_states) {
  Parser p(re);
  int root = p.parse();
  Nfa n(p.nodes);
  n.build(root);

  RegexDfa d;
  // Byte classes: bytes that every set treats alike. NUL (the end) is a class of its own.
  std::map<std::vector<bool>, int> sig_class;
  for (int b = 0; b < 256; ++b) {
    std::vector<bool> sig{b == 0};
    for (auto& s : n.sets) sig.push_back(s.test(b));
    auto [it, fresh] = sig_class.try_emplace(sig, static_cast<int>(sig_class.size()));
    d.cls[b] = static_cast<uint8_t>(it->second);
  }
  d.ncls = static_cast<uint32_t>(sig_class.size());
  std::vector<int> rep(d.ncls, 0);
  for (int b = 255; b >= 0; --b) rep[d.cls[b]] = b;

  // Subset construction. State 0: position 0 (`^` holds); it is never shared with a later
  // state, where `^` no longer holds. Every later state also restarts the match (search).
  std::vector<std::vector<int>> sets;
  std::map<std::vector<int>, int> index;
  sets.push_back(closure(n, {n.start}, true, false));
  for (size_t i = 0; i < sets.size(); ++i) {
    bool matched = has_match(n, sets[i]);
    for (uint32_t c = 0; c < d.ncls; ++c) {
      int next;
      if (matched || rep[c] == 0) {
        next = static_cast<int>(i);  // a match stays a match; NUL is never read
      } else {
        std::vector<int> moved{n.start};
        for (int s : sets[i]) {
          const NState& ns = n.st[s];
          if (ns.kind == NState::Chars && n.sets[ns.set].test(rep[c])) moved.push_back(ns.out1);
        }
        std::vector<int> to = closure(n, moved, false, false);
        auto it = index.find(to);
        if (it == index.end()) {
          if (sets.size() >= max_states)
            throw std::runtime_error("more than " + std::to_string(max_states) +
                                     " automaton states");
          it = index.emplace(to, static_cast<int>(sets.size())).first;
          sets.push_back(to);
        }
        next = it->second;
      }
      d.next.push_back(static_cast<uint16_t>(next));
    }
    uint8_t f = 0;
    if (matched) f |= 3;
    std::vector<int> eols;
    for (int s : sets[i])
      if (n.st[s].kind == NState::Eol) eols.push_back(s);
    if (!eols.empty()) {
      std::vector<int> after;
      for (int s : eols) after.push_back(n.st[s].out1);
      if (has_match(n, closure(n, after, i == 0, true))) f |= 2;
    }
    d.flags.push_back(f);
  }
  d.nstates = static_cast<uint32_t>(sets.size());
  return d;
}

bool RegexDfa::matches(const std::string& s) const {
  uint32_t st = 0;
  if (flags[st] & 1) return true;
  for (unsigned char ch : s) {
    if (ch == 0) break;
    st = next[st * ncls + cls[ch]];
    if (flags[st] & 1) return true;
  }
  return flags[st] & 2;
}

std::string regex_dfa_c(const RegexDfa& d, const std::string& name) {
  std::ostringstream o;
  // const volatile: clang neither folds the tables (the verifier needs the bound checks) nor
  // drops one it folded completely (clang 14 then leaves it in .rodata's BTF at offset 0, and
  // the kernel refuses the BTF).
  o << "static const volatile uint8_t " << name << "_cls[256] = {";
  for (int b = 0; b < 256; ++b) o << (b ? "," : "") << unsigned(d.cls[b]);
  o << "};\nstatic const volatile uint16_t " << name << "_next[" << d.next.size() << "] = {";
  for (size_t k = 0; k < d.next.size(); ++k) o << (k ? "," : "") << d.next[k];
  o << "};\nstatic const volatile uint8_t " << name << "_flags[" << d.flags.size() << "] = {";
  for (size_t k = 0; k < d.flags.size(); ++k) o << (k ? "," : "") << unsigned(d.flags[k]);
  o << "};\n#define " << name << "_NSTATES " << d.nstates << "\n#define " << name << "_NCLS "
    << d.ncls << "\n";
  return o.str();
}

}  // namespace ukstap::codegen
