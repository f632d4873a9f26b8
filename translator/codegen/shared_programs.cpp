// Syscall probes with the same handler share one program: see shared_programs.h.
#include "codegen/shared_programs.h"
#include "driver/text_lines.h"

#include <algorithm>

namespace ukstap::codegen {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
}

// The three places the emitter writes a dispatched probe's id (emitter.cpp emit_probe,
// probe_macro); any other mention keeps two handlers apart, which only costs a program.
const char* const kIdForms[][2] = {
    {"STP_PROBE_SYSCALL(", ", "}, {"STP_PROBE_ENTER(", ");"}, {"c->l.p", "."}};

// Where the record is filled: then it holds the number (stp_bpf_probes.h stp__sysrec_fill).
const std::string kFill = "  stp__sysrec_fill(&c->k, ctx, ";

// Not in any C the emitter writes: c_escape writes control characters in octal.
const std::string kLiteral = "\x01L\x01";

// `  stp_str_copy(c, DST, "TEXT");` -> the offset of the literal's opening quote, its length.
bool copied_literal(const std::string& line, size_t& at, size_t& len) {
  static const std::string head = "stp_str_copy(c, ", tail = ");";
  size_t h = line.find_first_not_of(' ');
  if (h == std::string::npos || line.compare(h, head.size(), head) != 0) return false;
  if (line.size() < tail.size() || line.compare(line.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  size_t q = line.find(", \"", h + head.size());
  if (q == std::string::npos || line.find('"', h) != q + 2) return false;
  at = q + 2;
  len = line.size() - tail.size() - at;
  // One literal to the end: every quote inside escaped.
  if (len < 2 || line[at + len - 1] != '"') return false;
  for (size_t i = at + 1; i + 1 < at + len; ++i) {
    if (line[i] == '\\') ++i;
    else if (line[i] == '"') return false;
  }
  return true;
}

}  // namespace

std::string SharedSyscallPrograms::canonical(int id, const std::string& body,
                                             std::vector<std::string>* literals) {
  std::string s = body, ids = std::to_string(id);
  for (auto& [pre, post] : kIdForms) replace_all(s, pre + ids + post, std::string(pre) + "@" + post);
  if (!literals) return s;
  std::string out;
  for (std::string_view view : text_lines(s)) {
    std::string line(view);
    size_t at, len;
    if (copied_literal(line, at, len)) {
      literals->push_back(line.substr(at, len));
      line.replace(at, len, kLiteral);
    }
    out += line;
    out += '\n';
  }
  if (!s.empty() && s.back() != '\n') out.pop_back();  // the body's last line had no '\n'
  return out;
}

int SharedSyscallPrograms::add(int id, bool exit, int slot, int nr, const std::string& head,
                               const std::string& body, const std::vector<std::string>& frame) {
  // The table of a group maps a number to one probe: one direction and one dispatcher slot.
  // A body without the record's fill (not what emit_probe writes) stays a program of its own.
  std::string key = std::string(exit ? "x" : "e") + std::to_string(slot) + "\n";
  if (body.find(kFill) == std::string::npos) key = "own " + std::to_string(id) + "\n";
  for (auto& f : frame) key += f + "\n";
  Member m{nr, id, {}};
  std::string canon = canonical(id, body, &m.literals);
  key += canon;
  auto [it, added] = by_key_.try_emplace(key, groups_.size());
  if (added) groups_.push_back(Group{id, head, canon, {}});
  Group& g = groups_[it->second];
  g.members.push_back(std::move(m));
  return g.rep;
}

std::string SharedSyscallPrograms::text() const {
  std::string out;
  for (auto& g : groups_) {
    std::string rep = std::to_string(g.rep), defs, body = g.body;
    // Literals: the same in every member, written as they were; else a table by number.
    const auto& first = g.members.front().literals;
    for (size_t j = 0; j < first.size(); ++j) {
      bool same = true;
      size_t width = 0;
      for (auto& m : g.members) {
        same = same && m.literals[j] == first[j];
        width = std::max(width, m.literals[j].size() - 1);  // >= its bytes + NUL
      }
      std::string use = first[j];
      if (!same) {
        std::string name = "stp__shared_str_" + rep + "_" + std::to_string(j);
        defs += "STP_SYSCALL_SHARED_STRS(" + name + ", " + std::to_string(width) + ") = {";
        for (size_t i = 0; i < g.members.size(); ++i)
          defs += std::string(i % 4 ? " " : "\n  ") + "[" + std::to_string(g.members[i].nr) +
                  "] = " + g.members[i].literals[j] + ",";
        defs += "\n};\n";
        use = name + "[STP_SYSCALL_SHARED_NR(c)]";
      }
      body.replace(body.find(kLiteral), kLiteral.size(), use);
    }
    // The id back where the probe's own stood (canonical() took it out).
    for (auto& [pre, post] : kIdForms) replace_all(body, std::string(pre) + "@" + post, pre + rep + post);
    if (g.members.size() == 1) {
      out += g.head + body;
      continue;
    }
    // Which probe runs, by syscall number: id + 1 (0: none).
    std::string table = "stp__shared_ids_" + rep;
    std::string def = "#ifdef __UKSTAP_BPF__\nSTP_SYSCALL_SHARED_IDS(" + table + ") = {";
    for (size_t i = 0; i < g.members.size(); ++i)
      def += std::string(i % 8 ? " " : "\n  ") + "[" + std::to_string(g.members[i].nr) +
             "] = " + std::to_string(g.members[i].id + 1) + ",";
    def += "\n};\n" + defs + "#endif\n";
    size_t at = body.find('\n', body.find(kFill));  // add() grouped only bodies that fill
    body.insert(at + 1, "  STP_SYSCALL_SHARED_PROBE(c, " + table + ", " + rep + ");  /* and " +
                            std::to_string(g.members.size() - 1) + " more probes */\n");
    out += def + g.head + body;
  }
  return out;
}

}  // namespace ukstap::codegen
