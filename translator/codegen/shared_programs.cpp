// Syscall probes with the same handler share one program: see shared_programs.h.
#include "codegen/shared_programs.h"

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

}  // namespace

std::string SharedSyscallPrograms::canonical(int id, const std::string& body) {
  std::string s = body, ids = std::to_string(id);
  for (auto& [pre, post] : kIdForms) replace_all(s, pre + ids + post, std::string(pre) + "@" + post);
  return s;
}

int SharedSyscallPrograms::add(int id, bool exit, int slot, int nr, const std::string& head,
                               const std::string& body, const std::vector<std::string>& frame) {
  // The table of a group maps a number to one probe: one direction and one dispatcher slot.
  // A body without the record's fill (not what emit_probe writes) stays a program of its own.
  std::string key = std::string(exit ? "x" : "e") + std::to_string(slot) + "\n";
  if (body.find(kFill) == std::string::npos) key = "own " + std::to_string(id) + "\n";
  for (auto& f : frame) key += f + "\n";
  key += canonical(id, body);
  auto [it, added] = by_key_.try_emplace(key, groups_.size());
  if (added) groups_.push_back(Group{id, head, body, {}});
  Group& g = groups_[it->second];
  g.members.emplace_back(nr, id);
  return g.rep;
}

std::string SharedSyscallPrograms::text() const {
  std::string out;
  for (auto& g : groups_) {
    if (g.members.size() == 1) {
      out += g.head + g.body;
      continue;
    }
    // Which probe runs, by syscall number: id + 1 (0: none).
    std::string table = "stp__shared_ids_" + std::to_string(g.rep);
    std::string def = "#ifdef __UKSTAP_BPF__\nSTP_SYSCALL_SHARED_IDS(" + table + ") = {";
    for (size_t i = 0; i < g.members.size(); ++i)
      def += std::string(i % 8 ? " " : "\n  ") + "[" + std::to_string(g.members[i].first) +
             "] = " + std::to_string(g.members[i].second + 1) + ",";
    def += "\n};\n#endif\n";
    std::string body = g.body;
    size_t at = body.find('\n', body.find(kFill));  // add() grouped only bodies that fill
    body.insert(at + 1, "  STP_SYSCALL_SHARED_PROBE(c, " + table + ", " + std::to_string(g.rep) +
                            ");  /* and " + std::to_string(g.members.size() - 1) +
                            " more probes */\n");
    out += def + g.head + body;
  }
  return out;
}

}  // namespace ukstap::codegen
