// SystemTap prints, at the end of a run, every global of the user's script that some probe
// writes and nothing reads (docs/STAP-FORMATS.md §2). Like stap, we synthesize one `probe end` per
// such global, in declaration order, written in the script language itself.
#include <set>
#include <sstream>

#include "parse/parser.h"
#include "passes/elaborate_steps.h"

namespace ukstap::passes {

namespace {

// Which globals are read and which are written anywhere in the code that will run.
class UseFinder : public ast::TraversingVisitor {
 public:
  std::set<const ast::Vardecl*> read, written;

  void visit(ast::Symbol& e) override { read.insert(e.referent); }
  void visit(ast::AssignmentExpr& e) override {
    if (e.op == "=" || e.op == "<<<") {
      if (auto* v = target_of(e.left)) {
        written.insert(v);
        if (auto* ai = dynamic_cast<ast::ArrayIndex*>(e.left))
          for (auto* i : ai->indexes)
            if (i) i->accept(*this);
        e.right->accept(*this);
        return;
      }
    }
    if (auto* v = target_of(e.left)) written.insert(v);
    TraversingVisitor::visit(e);
  }
  // SystemTap regards x++ as a pure write (its PR6954), so `c[name]++` counters get displayed.
  void crement(ast::Expression* operand) {
    if (auto* v = target_of(operand)) {
      written.insert(v);
      if (auto* ai = dynamic_cast<ast::ArrayIndex*>(operand))
        for (auto* i : ai->indexes)
          if (i) i->accept(*this);
      return;
    }
    operand->accept(*this);
  }
  void visit(ast::PreCrement& e) override { crement(e.operand); }
  void visit(ast::PostCrement& e) override { crement(e.operand); }

 private:
  static const ast::Vardecl* target_of(ast::Expression* lhs) {
    if (auto* sym = dynamic_cast<ast::Symbol*>(lhs)) return sym->referent;
    if (auto* ai = dynamic_cast<ast::ArrayIndex*>(lhs))
      if (auto* sym = dynamic_cast<ast::Symbol*>(ai->base)) return sym->referent;
    return nullptr;
  }
};

std::string stats_fields(const std::string& of) {
  return "@count(" + of + "), @min(" + of + "), @max(" + of + "), @sum(" + of + "), @avg(" + of +
         ")";
}

const char* kStatsFormat = " @count=%d @min=%d @max=%d @sum=%d @avg=%d\\n";

std::string display_probe(const ast::Vardecl& g) {
  std::ostringstream o;
  const std::string& n = g.name;
  o << "probe end {\n";
  if (g.arity <= 0) {
    if (g.type == ast::Type::Stats)
      o << "  if (@count(" << n << ")) printf(\"" << n << kStatsFormat << "\", "
        << stats_fields(n) << ")\n  else printf(\"" << n << " @count=0x0\\n\")\n";
    else if (g.type == ast::Type::String)
      o << "  printf(\"" << n << "=\\\"%s\\\"\\n\", " << n << ")\n";
    else
      o << "  printf(\"" << n << "=%d\\n\", " << n << ")\n";
  } else {
    std::string keys, fmt;
    for (int k = 0; k < g.arity; ++k) {
      if (k) keys += ", ", fmt += ",";
      keys += "__k" + std::to_string(k + 1);
      fmt += g.index_types[k] == ast::Type::String ? "\\\"%s\\\"" : "%d";
    }
    std::string elem = n + "[" + keys + "]";
    o << "  foreach ([" << keys << "] in " << n << "-)\n";
    if (g.type == ast::Type::Stats)
      o << "    printf(\"" << n << "[" << fmt << "]" << kStatsFormat << "\", " << keys << ", "
        << stats_fields(elem) << ")\n";
    else if (g.type == ast::Type::String)
      o << "    printf(\"" << n << "[" << fmt << "]=\\\"%s\\\"\\n\", " << keys << ", " << elem
        << ")\n";
    else
      o << "    printf(\"" << n << "[" << fmt << "]=%d\\n\", " << keys << ", " << elem << ")\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace

std::vector<DerivedProbe*> add_global_display(Session& s, const SymbolTable&) {
  std::vector<DerivedProbe*> added;
  if (!s.user_file) return added;
  UseFinder uses;
  for (auto* p : s.probes) {
    p->body->accept(uses);
    if (p->condition) p->condition->accept(uses);
  }
  for (auto* f : s.functions)
    if (f->body) f->body->accept(uses);

  std::string text;
  for (auto* g : s.user_file->globals) {
    if (!uses.written.count(g) || uses.read.count(g)) continue;
    if (g->type == ast::Type::Unknown) continue;
    text += display_probe(*g);
  }
  if (text.empty()) return added;
  const SourceFile* src = s.add_source("<global display>", text, /*is_tapset=*/true);
  parse::MacroLibrary no_macros;
  ast::StapFile* file = parse::parse_file(s, src, no_macros);
  if (!file) return added;
  for (auto* p : file->probes) {
    p->synthetic = true;
    for (auto* loc : p->locations) {
      auto* dp = new_derived_probe(s);
      dp->point = loc;
      dp->chain = {loc};
      dp->source = p;
      dp->body = p->body;
      dp->family = probes::EndPoint{};
      added.push_back(dp);
    }
  }
  return added;
}

}  // namespace ukstap::passes
