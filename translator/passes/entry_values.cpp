// @entry(expr) in a .return probe: expr is evaluated when the function (or system call) is
// entered, and the return probe reads that value (SystemTap's NEWS 1.x: "automatically saving
// an expression at entry time for use in a .return probe").
//
// Like SystemTap's translator, pass 2 rewrites the program: for each return probe that uses
// @entry it adds an entry probe at the matching entry point, which evaluates each @entry operand
// and saves it in a synthetic global keyed by thread; the return probe starts with a prologue
// that takes the saved values into locals (and forgets them), and each @entry(expr) then reads
// its local. The entry points:
//  - process(..).function(F).return (a uretprobe): the uprobe at F's entry; likewise
//    kernel.function(F).return (fexit or kretprobe): fentry or kprobe on F. Calls nest
//    (recursion, or F and G both probed), so a per-thread depth counter numbers the frames and
//    the values are keyed by (thread, depth);
//  - kernel.trace("syscalls:sys_exit_X") (syscall.X.return): syscalls:sys_enter_X. A thread is
//    in one system call at a time: keyed by thread.
// A return whose entry was not seen (tracing began during the call) skips the handler, as a
// kretprobe instance that was never armed never fires. The maps wrap (`%`): an entry whose
// return never comes (exit(), a longjmp out of F) is overwritten instead of filling the map.
#include <map>
#include <sstream>

#include "parse/parser.h"
#include "passes/elaborate_steps.h"
#include "probes/family_point.h"
#include "probes/provider.h"

namespace ukstap::passes {

namespace {

struct EntryFinder : ast::TraversingVisitor {
  std::vector<ast::EntryOp*> ops;
  void visit(ast::EntryOp& e) override {
    ops.push_back(&e);  // its operand is evaluated at entry: not searched for nested @entry
  }
};

// The sys_enter_X tracepoint of a sys_exit_X one; "" when `p` is not a syscall exit.
std::string syscall_entry_event(const DerivedProbe& p) {
  auto* tp = p.family.get<probes::TracepointPoint>();
  if (!tp || tp->system != "syscalls" || tp->event.rfind("sys_exit_", 0) != 0) return "";
  return "sys_enter_" + tp->event.substr(9);
}

bool is_function_return(const DerivedProbe& p) {
  auto* up = p.family.get<probes::UprobePoint>();
  auto* kf = p.family.get<probes::KernelFunctionPoint>();
  return (up && up->is_return && !up->sdt) || (kf && kf->is_return);
}

// The entry probe of a uretprobe: the same function, its uprobe.
DerivedProbe* uprobe_entry(Session& s, const DerivedProbe& ret) {
  auto* dp = new_derived_probe(s);
  auto* pp = s.arena.make<ast::ProbePoint>(*ret.point);
  if (!pp->components.empty() && pp->components.back().functor == "return")
    pp->components.pop_back();
  dp->point = pp;
  dp->chain = {pp};
  if (auto* kf = ret.family.get<probes::KernelFunctionPoint>()) {  // kernel.function(F).return
    probes::KernelFunctionPoint entry = *kf;
    entry.is_return = false;
    dp->family = entry;
  } else {
    probes::UprobePoint up = *ret.family.get<probes::UprobePoint>();
    up.is_return = false;
    dp->family = up;
  }
  for (auto& v : ret.target_vars)
    if (v.first != "$return") dp->target_vars.push_back(v);
  return dp;
}

// The entry probe of a sys_exit_X tracepoint probe: kernel.trace("syscalls:sys_enter_X").
DerivedProbe* syscall_entry(Session& s, const DerivedProbe& ret, const std::string& event) {
  auto* pp = s.arena.make<ast::ProbePoint>();
  pp->tok = ret.point->tok;
  auto* arg = s.arena.node<ast::LiteralString>(ret.point->tok);
  arg->value = "syscalls:" + event;
  arg->type = ast::Type::String;
  pp->components = {{"kernel", nullptr, ret.point->tok}, {"trace", arg, ret.point->tok}};
  std::vector<probes::ResolvedPoint> rs;
  probes::resolve_builtin(s, *pp, rs);
  if (rs.empty())
    throw SemanticError("@entry: no tracepoint syscalls:" + event + " for this return probe",
                        ret.point->tok);
  auto* dp = new_derived_probe(s);
  dp->point = rs[0].point;
  dp->chain = {rs[0].point};
  dp->family = rs[0].family;
  dp->target_vars = rs[0].target_vars;
  return dp;
}

ast::Block* block_of(Session& s, const Token* tok, std::vector<ast::Statement*> sts) {
  auto* b = s.arena.node<ast::Block>(tok);
  b->statements = std::move(sts);
  return b;
}

}  // namespace

int add_entry_probes(Session& s, std::vector<DerivedProbe*>& probes,
                     std::vector<std::pair<const ast::Statement*, ast::StapFile*>>& owners) {
  int errors = 0;
  // What each return probe needs, in the order of the text below.
  struct Plan {
    DerivedProbe* ret;
    DerivedProbe* entry;
    std::vector<ast::EntryOp*> ops;
    std::vector<int> ids;  // one saved-value map per @entry
    int depth = -1;        // the depth map of a function return (per source probe)
  };
  std::vector<Plan> plans;
  std::map<const ast::Probe*, int> depth_of;
  // The k-th @entry of every probe derived from one script probe shares one map (so
  // `syscall.*.return` has one map per @entry, not one per system call): a thread is in one
  // system call at a time, and function frames of one script probe nest as a stack.
  std::map<std::pair<const ast::Probe*, size_t>, int> id_of;
  int next_id = 0, next_depth = 0;
  for (auto* p : probes) {
    EntryFinder f;
    p->body->accept(f);
    if (p->condition) p->condition->accept(f);
    if (f.ops.empty()) continue;
    try {
      Plan plan{p, nullptr, f.ops, {}, -1};
      if (is_function_return(*p)) {
        plan.entry = uprobe_entry(s, *p);
        auto [it, fresh] = depth_of.try_emplace(p->source, next_depth);
        if (fresh) ++next_depth;
        plan.depth = it->second;
      } else if (std::string ev = syscall_entry_event(*p); !ev.empty()) {
        plan.entry = syscall_entry(s, *p, ev);
      } else {
        throw SemanticError("@entry is only valid in a .return probe (a function's or a system "
                            "call's)", f.ops[0]->tok);
      }
      for (size_t k = 0; k < f.ops.size(); ++k) {
        auto [it, fresh] = id_of.try_emplace({p->source, k}, next_id);
        if (fresh) ++next_id;
        plan.ids.push_back(it->second);
      }
      plans.push_back(plan);
    } catch (const SemanticError& e) {
      s.diag.semantic_error(e);
      ++errors;
    }
  }
  if (plans.empty()) return errors;

  // The synthetic globals and the two pieces of each pair, as script text: one probe per piece
  // (`never`: only their bodies are used).
  // Whose entry a return pairs with: the thread's, or in a kernel function reached from an
  // idle CPU's interrupt (every CPU's idle task has tid 0) that CPU's. Keyed by tid alone, the
  // idle tasks of all CPUs shared one stack of entries: one CPU's return took another's entry.
  static const char* const kEntryKey = "(tid() ? tid() : -1 - cpu())";
  std::ostringstream t;
  for (int id = 0; id < next_id; ++id) t << "global __entry_" << id << "%\n";
  for (int d = 0; d < next_depth; ++d) t << "global __entry_depth_" << d << "%\n";
  for (auto& pl : plans) {
    if (pl.depth >= 0) {
      std::string d = "__entry_depth_" + std::to_string(pl.depth);
      // entry: push a frame
      t << "probe never {\n  __entry_d = ++" << d << "[" << kEntryKey << "]\n";
      for (size_t k = 0; k < pl.ids.size(); ++k)
        t << "  __entry_" << pl.ids[k] << "[" << kEntryKey << ", __entry_d] = __entry_t" << k << "\n";
      t << "}\n";
      // return: pop it
      t << "probe never {\n  if (!([" << kEntryKey << "] in " << d << ")) next\n  __entry_d = " << d
        << "[" << kEntryKey << "]\n";
      for (size_t k = 0; k < pl.ids.size(); ++k)
        t << "  __entry_v" << pl.ids[k] << " = __entry_" << pl.ids[k] << "[" << kEntryKey << ", __entry_d]\n"
          << "  delete __entry_" << pl.ids[k] << "[" << kEntryKey << ", __entry_d]\n";
      t << "  if (__entry_d <= 1) delete " << d << "[" << kEntryKey << "] else " << d
        << "[" << kEntryKey << "] = __entry_d - 1\n}\n";
    } else {
      t << "probe never {\n";
      for (size_t k = 0; k < pl.ids.size(); ++k)
        t << "  __entry_" << pl.ids[k] << "[" << kEntryKey << "] = __entry_t" << k << "\n";
      t << "}\n";
      t << "probe never {\n  if (!([" << kEntryKey << "] in __entry_" << pl.ids[0] << ")) next\n";
      for (size_t k = 0; k < pl.ids.size(); ++k)
        t << "  __entry_v" << pl.ids[k] << " = __entry_" << pl.ids[k] << "[" << kEntryKey << "]\n"
          << "  delete __entry_" << pl.ids[k] << "[" << kEntryKey << "]\n";
      t << "}\n";
    }
  }
  const SourceFile* src = s.add_source("<@entry>", t.str(), /*is_tapset=*/true);
  parse::MacroLibrary no_macros;
  ast::StapFile* file = parse::parse_file(s, src, no_macros);
  if (!file || file->probes.size() != 2 * plans.size()) {
    s.diag.semantic_error(SemanticError("internal error: the @entry helper code did not parse"));
    return errors + 1;
  }
  for (auto* g : file->globals) {
    g->is_global = true;
    g->synthetic = true;
    g->from_tapset = true;
  }
  s.tapset_files.push_back(file);

  auto* source = s.arena.node<ast::Probe>(nullptr);
  source->synthetic = true;
  source->privileged = true;
  for (size_t n = 0; n < plans.size(); ++n) {
    Plan& pl = plans[n];
    DerivedProbe* ret = pl.ret;
    ast::StapFile* user = s.user_file;
    // Entry: the operands, in the user's file (their names are the user's), then the saves.
    std::vector<ast::Statement*> evals;
    for (size_t k = 0; k < pl.ops.size(); ++k) {
      const Token* tok = pl.ops[k]->tok;
      auto* tmp = s.arena.node<ast::Symbol>(tok);
      tmp->name = "__entry_t" + std::to_string(k);
      auto* as = s.arena.node<ast::AssignmentExpr>(tok);
      as->left = tmp;
      as->op = "=";
      as->right = pl.ops[k]->operand;
      auto* st = s.arena.node<ast::ExprStatement>(tok);
      st->value = as;
      evals.push_back(st);
    }
    DerivedProbe* entry = pl.entry;
    entry->source = source;
    entry->body = block_of(s, ret->point->tok, {});
    ast::Block* evals_piece = block_of(s, ret->point->tok, evals);
    entry->body->statements.push_back(evals_piece);
    owners.push_back({evals_piece, user});
    ast::Block* save_piece = file->probes[2 * n]->body;
    entry->body->statements.push_back(save_piece);
    owners.push_back({save_piece, file});

    // Return: each @entry now reads its local; the pop runs first, before the condition.
    for (size_t k = 0; k < pl.ops.size(); ++k) {
      auto* v = s.arena.node<ast::Symbol>(pl.ops[k]->tok);
      v->name = "__entry_v" + std::to_string(pl.ids[k]);
      pl.ops[k]->operand = v;
    }
    ast::Block* pop_piece = file->probes[2 * n + 1]->body;
    std::vector<ast::Statement*> front{pop_piece};
    owners.push_back({pop_piece, file});
    if (ret->condition) {
      auto* neg = s.arena.node<ast::UnaryExpression>(ret->condition->tok);
      neg->op = "!";
      neg->operand = ret->condition;
      auto* skip = s.arena.node<ast::IfStatement>(ret->condition->tok);
      skip->condition = neg;
      skip->then_stmt = s.arena.node<ast::NextStatement>(ret->condition->tok);
      ast::Block* cond_piece = block_of(s, ret->condition->tok, {skip});
      front.push_back(cond_piece);
      owners.push_back({cond_piece, user});
      ret->condition = nullptr;
    }
    ret->body->statements.insert(ret->body->statements.begin(), front.begin(), front.end());
    probes.push_back(entry);
  }
  return errors;
}

}  // namespace ukstap::passes
