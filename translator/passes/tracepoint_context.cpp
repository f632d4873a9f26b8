// Which context a kernel.trace probe reads: the event's record (a perf-event tracepoint
// program, format-file fields $next_pid, $prev_comm) or the tracepoint's C arguments (a tp_btf
// program, BTF arguments $prev, $next).
//
// One probe reads one of them. The record is what the event's TP_fast_assign wrote into the
// ring buffer; a tp_btf program runs before that, at the trace call, with only the
// arguments: there is no record to read. A probe could be split into two programs, but they
// would run at two moments of one event and a script's `if ($next->pid == $next_pid)` would
// compare values from different runs. So:
//   - a name that is both a field and an argument (sched_switch's prev_state) is read from
//     wherever the probe's other names are: the record normally, the argument in a tp_btf
//     probe (they mean the same thing, though the kernel may have massaged the record's copy);
//   - a record-only field in a probe that reads a BTF-only argument is one error naming both.
// Which one is decided twice. Before symbols are resolved (prefer_tracepoint_btf): the probe is
// a tp_btf probe when the script's own code names a BTF-only argument anywhere (even under
// @defined), or a tapset alias's code does outside a @defined choice; @defined of a record-only
// field is then 0, so a tapset alias can serve both kinds of probe with
// @choose_defined($dev, <the same value from the arguments>) (tapsets/ioblock.stp). After
// resolution (choose_tracepoint_context) from what the probe really reads.
// tp_btf needs no trampoline (it attaches to the tracepoint like a raw tracepoint, with BTF
// typed arguments); this kernel, without fentry, accepts it (process.begin uses it too).
#include <set>

#include "driver/diagnostics.h"
#include "passes/elaborate_steps.h"
#include "passes/kernel_types.h"

namespace ukstap::passes {

namespace {

struct TargetUses : ast::TraversingVisitor {
  std::vector<const ast::TargetSymbol*> uses;
  void visit(ast::TargetSymbol& e) override {
    uses.push_back(&e);
    ast::TraversingVisitor::visit(e);
  }
};

bool string_field(const probes::TraceField& f) {
  return f.type.rfind("__data_loc", 0) == 0 ||
         (f.type.find("char") != std::string::npos && f.type.find('[') != std::string::npos);
}

// A BTF-only argument: not a record field, or used with members/address (`$prev->pid`).
bool btf_only_use(const probes::TracepointPoint& tp, const ast::TargetSymbol& e) {
  const auto* a = tracepoint_btf_arg(tp, e.name);
  return a && (!tracepoint_field(tp, e.name) || !e.components.empty() || e.addressof);
}

// Finds a BTF-only use; in a tapset's code, not one under @defined or in a branch a @defined
// condition chooses (the alias offers it as a fallback, it does not ask for it).
struct BtfPreference : ast::TraversingVisitor {
  const probes::TracepointPoint& tp;
  bool tapset = false;
  int guarded = 0;
  bool found = false;
  explicit BtfPreference(const probes::TracepointPoint& t) : tp(t) {}
  static bool has_defined(ast::Expression* e) {
    struct Finder : ast::TraversingVisitor {
      bool any = false;
      void visit(ast::DefinedOp&) override { any = true; }
    } f;
    if (e) e->accept(f);
    return f.any;
  }
  void visit(ast::TargetSymbol& e) override {
    if ((!tapset || !guarded) && btf_only_use(tp, e)) found = true;
    ast::TraversingVisitor::visit(e);
  }
  void visit(ast::DefinedOp& e) override {
    ++guarded;
    ast::TraversingVisitor::visit(e);
    --guarded;
  }
  void visit(ast::TernaryExpression& e) override {
    bool g = has_defined(e.condition);
    guarded += g;
    ast::TraversingVisitor::visit(e);
    guarded -= g;
  }
  void visit(ast::IfStatement& st) override {
    bool g = has_defined(st.condition);
    guarded += g;
    ast::TraversingVisitor::visit(st);
    guarded -= g;
  }
};

// $bio in a block tracepoint whose argument is the request (block_rq_complete, ...): the
// request's first bio, $rq->bio. SystemTap's ioblock.end is bio_endio's kprobe, with $bio; here
// it is also block_rq_complete (a blk-mq device completes requests, not bios), and ioblock's
// scripts key their arrays by $bio (io/ioblktime.stp).
struct RequestBio : ast::TraversingVisitor {
  void visit(ast::TargetSymbol& e) override {
    ast::TraversingVisitor::visit(e);
    if (e.name != "$bio") return;
    ast::TargetComponent c;
    c.kind = ast::TargetComponent::Kind::StructMember;
    c.tok = e.tok;
    c.member = "bio";
    e.name = "$rq";
    e.components.insert(e.components.begin(), c);
  }
};

}  // namespace

void prefer_tracepoint_btf(
    DerivedProbe& p,
    const std::vector<std::pair<const ast::Statement*, ast::StapFile*>>& piece_owners,
    const ast::StapFile* user_file) {
  auto* tp = p.family.get<probes::TracepointPoint>();
  if (!tp || tp->btf_args.empty() || !p.body) return;
  if (tp->system == "block" && !tracepoint_btf_arg(*tp, "$bio") && tracepoint_btf_arg(*tp, "$rq")) {
    RequestBio rb;
    p.body->accept(rb);
    if (p.condition) p.condition->accept(rb);
  }
  BtfPreference find(*tp);
  for (auto* st : p.body->statements) {
    const ast::StapFile* file = user_file;
    for (auto& [piece, f] : piece_owners)
      if (piece == st) file = f;
    find.tapset = file && file->is_tapset;
    st->accept(find);
  }
  find.tapset = false;
  if (p.condition) p.condition->accept(find);
  tp->use_btf_args = find.found;
}

bool tracepoint_field_unreadable(const DerivedProbe& p, const ast::TargetSymbol& e) {
  const auto* tp = p.family.get<probes::TracepointPoint>();
  return tp && tp->use_btf_args && tracepoint_field(*tp, e.name) &&
         !tracepoint_btf_arg(*tp, e.name);
}

int choose_tracepoint_context(Session& s, DerivedProbe& p) {
  auto* tp = p.family.get<probes::TracepointPoint>();
  if (!tp || tp->btf_args.empty()) return 0;
  TargetUses walk;
  if (p.body) p.body->accept(walk);
  if (p.condition) p.condition->accept(walk);
  const ast::TargetSymbol* btf_use = nullptr;
  const ast::TargetSymbol* record_use = nullptr;
  for (const auto* e : walk.uses) {
    const auto* f = tracepoint_field(*tp, e->name);
    const auto* a = tracepoint_btf_arg(*tp, e->name);
    bool shaped = !e->components.empty() || e->addressof;
    if (a && (!f || shaped)) {
      if (!btf_use) btf_use = e;
    } else if ((f && (!a || string_field(*f))) || e->name == "$$vars" || e->name == "$$parms" ||
               e->name == "$$locals") {
      if (!record_use) record_use = e;
    }
  }
  tp->use_btf_args = false;  // the preference (prefer_tracepoint_btf) gives way to the uses
  if (!btf_use) return 0;
  if (record_use) {
    s.diag.semantic_error(SemanticError(
        "tracepoint field '" + record_use->name + "' cannot be read with BTF argument '" +
            btf_use->name + "' in one probe (the argument makes it a tp_btf probe, which has no "
            "event record): read it through the arguments (e.g. $next->pid for $next_pid)",
        record_use->tok));
    return 1;
  }
  tp->use_btf_args = true;
  return 0;
}

}  // namespace ukstap::passes
