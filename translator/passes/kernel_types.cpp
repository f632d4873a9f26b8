#include "passes/kernel_types.h"

#include <optional>

#include "driver/diagnostics.h"
#include "passes/cast_layout.h"
#include "passes/kernel_function_vars.h"

namespace ukstap::passes {

const probes::TraceBtfArg* tracepoint_btf_arg(const probes::TracepointPoint& tp, const std::string& name) {
  for (const auto& a : tp.btf_args)
    if ("$" + a.name == name) return &a;
  return nullptr;
}

const probes::TraceField* tracepoint_field(const probes::TracepointPoint& tp, const std::string& name) {
  for (const auto& f : tp.fields)
    if ("$" + f.name == name && probes::trace_field_visible(f)) return &f;
  return nullptr;
}

const btf::KernelBtf& kernel_btf_or_throw(const Token* tok) {
  std::string why;
  const btf::KernelBtf* k = btf::KernelBtf::get(why);
  if (!k) throw SemanticError("kernel types are unavailable: " + why, tok);
  return *k;
}

namespace {

bool is_char_array_field(const probes::TraceField& f) {
  return f.type.rfind("__data_loc", 0) != 0 && f.type.find("char") != std::string::npos &&
         f.type.find('[') != std::string::npos;
}

// `$next_comm[0]`: a character of a char array field of the record, a number.
ast::Type field_components_type(const probes::TraceField& f, const ast::TargetSymbol& e) {
  if (e.addressof)
    throw SemanticError("cannot take the address of tracepoint field '" + e.name + "'", e.tok);
  const auto& c = e.components.front();
  bool index = c.kind == ast::TargetComponent::Kind::LiteralIndex ||
               c.kind == ast::TargetComponent::Kind::ExpressionIndex;
  // `$filename$`: SystemTap prints a char * as the quoted user string; not done here.
  if (c.kind == ast::TargetComponent::Kind::PrettyPrint && f.type.find("char") != std::string::npos &&
      f.type.find('*') != std::string::npos)
    throw SemanticError("pretty-printing ('$') of the char * tracepoint field '" + e.name +
                            "' is not supported: use user_string_quoted(" + e.name + ")",
                        c.tok ? c.tok : e.tok);
  if (!is_char_array_field(f) || e.components.size() != 1 || !index)
    throw SemanticError("'" + e.name + "' is the tracepoint field " + f.type + " " + f.name +
                            ": only a char array field can be indexed, and nothing has members",
                        c.tok ? c.tok : e.tok);
  if (c.kind == ast::TargetComponent::Kind::LiteralIndex &&
      (c.num_index < 0 || c.num_index >= f.size))
    throw SemanticError("index " + std::to_string(c.num_index) + " is out of range for '" +
                            e.name + "' (char[" + std::to_string(f.size) + "])",
                        c.tok ? c.tok : e.tok);
  return ast::Type::Long;
}

}  // namespace

std::optional<btf::AccessStart> netfilter_target_start(const DerivedProbe* p, const ast::TargetSymbol& e) {
  if (!p || !p->family.is(probes::ProbeKind::Netfilter) || (e.components.empty() && !e.addressof))
    return std::nullopt;
  const char* type = e.name == "$skb" ? "struct sk_buff"
                     : e.name == "$in" || e.name == "$out" ? "struct net_device"
                                                          : nullptr;
  if (!type) return std::nullopt;
  const btf::KernelBtf& k = kernel_btf_or_throw(e.tok);
  btf::AccessStart st;
  st.what = e.name;
  st.points_to = k.find_type(type);
  if (!st.points_to) throw SemanticError(std::string("kernel type '") + type + "' is not in BTF", e.tok);
  // runtime/bpf/stp_bpf_netfilter.h: the pointers of the program's struct bpf_nf_ctx.
  st.value = e.name == "$skb" ? "STP_NF_SKB(c)" : e.name == "$in" ? "STP_NF_IN(c)" : "STP_NF_OUT(c)";
  return st;
}

bool kernel_target_type(const DerivedProbe& p, const ast::TargetSymbol& e, bool quiet, ast::Type& out,
                        bool* char_array) {
  // The type of e's access path from `start` (BTF); quiet: an error types it Unknown.
  auto walk_from = [&](auto&& start) {
    try {
      std::optional<btf::AccessStart> st = start();
      if (!st) return false;
      auto r = btf::walk_access(kernel_btf_or_throw(e.tok), *st, e.components, e.addressof, e.tok, nullptr);
      out = r.type;
      if (char_array) *char_array = r.char_array;
    } catch (const SemanticError&) {
      if (!quiet) throw;
      out = ast::Type::Unknown;
    }
    return true;
  };
  if (p.family.is(probes::ProbeKind::Netfilter))
    return walk_from([&] { return netfilter_target_start(&p, e); });
  if (p.family.is(probes::ProbeKind::KernelFunction))  // $count, $file->f_inode, $return
    return walk_from([&] { return kernel_function_start(&p, e); });
  const auto* tp = p.family.get<probes::TracepointPoint>();
  if (!tp) return false;
  const probes::TraceField* f = tracepoint_field(*tp, e.name);
  const probes::TraceBtfArg* a = tracepoint_btf_arg(*tp, e.name);
  if (!a && !(f && (!e.components.empty() || e.addressof))) return false;
  // A name that is both (sched_switch's prev_state) keeps the record field's meaning in
  // pass 2; it is read from the argument only in a tp_btf probe (choose_tracepoint_context).
  if (f && e.components.empty() && !e.addressof) return false;
  if (f && !a) {
    try {
      out = field_components_type(*f, e);
    } catch (const SemanticError&) {
      if (!quiet) throw;
      out = ast::Type::Unknown;
    }
    return true;
  }
  return walk_from([&] {
    btf::AccessStart st;
    st.what = e.name;
    st.type_id = a->type_id;
    return std::optional<btf::AccessStart>(st);
  });
}

btf::AccessStart cast_start(const btf::KernelBtf& k, const ast::CastOp& e) {
  // SystemTap's module argument: "kernel", "kernel<linux/sched.h>" (headers: BTF has every
  // type already), or a module/binary whose DWARF ukstap does not read.
  if (!e.module.empty() && e.module.rfind("kernel", 0) != 0)
    throw SemanticError("@cast(..., \"" + e.type_name + "\", \"" + e.module +
                            "\"): only kernel types (from BTF) are supported",
                        e.tok);
  uint32_t id = k.find_type(e.type_name);
  if (!id)
    throw SemanticError("@cast: unknown type '" + e.type_name + "' (not in the kernel's BTF)", e.tok);
  btf::AccessStart st;
  st.what = "@cast(..., \"" + e.type_name + "\")";
  st.points_to = id;
  return st;
}

ast::Type kernel_cast_type(const ast::CastOp& e, bool quiet, bool* char_array) {
  try {
    if (cast_layout_pattern(e)) {  // sizeof/offsetof: a number (passes/cast_layout.h)
      cast_layout_value(e);
      return ast::Type::Long;
    }
    const btf::KernelBtf& k = kernel_btf_or_throw(e.tok);
    auto r = btf::walk_access(k, cast_start(k, e), e.components, e.addressof, e.tok, nullptr);
    if (char_array) *char_array = r.char_array;
    return r.type;
  } catch (const SemanticError&) {
    if (!quiet) throw;
    return ast::Type::Unknown;
  }
}

}  // namespace ukstap::passes
