// Pass 3: which of the runtime's global BPF functions a module calls (runtime_functions.h).
#include "codegen/runtime_functions.h"
#include "driver/text_lines.h"

#include <cctype>
#include <string_view>
#include <unordered_set>

namespace ukstap::codegen {

// The callers: every macro and function of runtime/bpf and runtime/common that calls the
// function, directly or through another (a grep of the runtime's text, closed transitively;
// native/ excluded: it has functions of the same names that call none of these).
const std::vector<RuntimeFunction>& runtime_functions() {
  static const std::vector<RuntimeFunction> fns = {
      {"stp_bpf_strcmp", {"stp__str_cmp", "stp_str_cmp"}},
      {"stp_bpf_sfmt_long",
       {"stp_sfmt_long", "stp_sfmt_char",
        "stp__pcs_hex", "stp__ustack_hex", "_stp_ustack_hex", "stp__kstack_hex",
        "_stp_kstack_hex"}},
      {"stp_bpf_sfmt_num",
       {"stp_sfmt_long", "stp_sfmt_char", "stp_long_to_str", "stp__text_str", "_stp_text_str"}},
      {"stp_bpf_sfmt_str", {"stp__sfmt_str", "stp_sfmt_str", "stp_sfmt_lit"}},
      {"stp_bpf_sfmt_mem", {"stp__sfmt_mem", "stp_sfmt_mem"}},
      {"stp_bpf_text_escape", {"stp__text_str", "_stp_text_str"}},
      {"stp_bpf_substr", {"_stp_substr"}},
      {"stp_bpf_strpos", {"_stp_strpos"}},
      {"stp_bpf_str_replace", {"_stp_str_replace"}},
      {"stp_bpf_tokenize", {"_stp_tokenize"}},
      {"stp_bpf_flags_str", {"_stp_flags_str"}},
      {"stp_bpf_strtol", {"_stp_strtol"}},
      {"stp_bpf_buf_hash",
       {"stp__stack_str", "stp__ustack_str", "_stp_ustack_print_str", "_stp_ustack_sprint_str",
        "_stp_kstack_print_str", "_stp_kstack_sprint_str"}},
      {"stp_uwalk_frame",
       {"stp__uwalk", "stp__uwalk_pcs_opt", "stp__uwalk_cb", "stp__ustack_hex", "stp__ustack_hex_token", "stp__ustack_id",
        "stp__ustack_print", "stp__ustack_sprint", "_stp_ustack_hex", "_stp_ustack_hex_token",
        "_stp_ustack_id", "_stp_ustack_print", "_stp_ustack_sprint"}},
      {"stp_cfi_row_key",
       {"stp__cfi_row", "stp__leaf_row", "stp_uwalk_frame", "stp__uwalk", "stp__uwalk_pcs_opt",
        "stp__uwalk_cb", "stp__ustack_hex", "stp__ustack_hex_token", "stp__ustack_id",
        "stp__ustack_print", "stp__ustack_sprint", "_stp_ustack_hex", "_stp_ustack_hex_token",
        "_stp_ustack_id", "_stp_ustack_print", "_stp_ustack_sprint"}},
      {"stp_uread_refill",
       {"stp__uread", "STP_UNWIND_READ_REGS", "stp_uwalk_frame", "stp__uwalk", "stp__uwalk_pcs_opt",
        "stp__uwalk_cb", "stp__ustack_hex", "stp__ustack_hex_token", "stp__ustack_id",
        "stp__ustack_print", "stp__ustack_sprint", "_stp_ustack_hex", "_stp_ustack_hex_token",
        "_stp_ustack_id", "_stp_ustack_print", "_stp_ustack_sprint"}},
      {"stp_pc_file",
       {"stp__cfi_row", "stp__leaf_row", "stp_uwalk_frame", "stp__uwalk",
        "stp__uwalk_pcs_opt", "stp__uwalk_cb", "stp__ustack_hex", "stp__ustack_hex_token",
        "stp__ustack_id", "stp__ustack_print", "stp__ustack_sprint", "_stp_ustack_hex",
        "_stp_ustack_hex_token", "_stp_ustack_id", "_stp_ustack_print", "_stp_ustack_sprint"}},
      {"stp_cfi_row_search",
       {"stp_cfi_row_key", "stp__cfi_row", "stp__leaf_row", "stp_uwalk_frame", "stp__uwalk",
        "stp__uwalk_pcs_opt", "stp__uwalk_cb", "stp__ustack_hex", "stp__ustack_hex_token",
        "stp__ustack_id", "stp__ustack_print", "stp__ustack_sprint", "_stp_ustack_hex",
        "_stp_ustack_hex_token", "_stp_ustack_id", "_stp_ustack_print", "_stp_ustack_sprint"}},
      {"stp_chain_check",
       {"stp__chain_hit", "stp__chain_take", "stp__uwalk_pcs_opt", "stp__uwalk", "stp__ustack_hex", "stp__ustack_hex_token",
        "stp__ustack_id", "stp__ustack_print", "stp__ustack_sprint", "_stp_ustack_hex",
        "_stp_ustack_hex_token", "_stp_ustack_id", "_stp_ustack_print", "_stp_ustack_sprint"}},
      {"stp_ustack_print_rec", {"stp__ustack_print", "_stp_ustack_print"}},
      {"stp_ustack_sprint_rec", {"stp__ustack_sprint", "_stp_ustack_sprint"}},
      {"stp_kwalk_hash",
       {"stp__kwalk", "stp__kernel_pc", "stp__kstack_hex", "stp__kstack_id", "stp__kstack_print",
        "stp__kstack_sprint", "_stp_kernel_pc", "_stp_kstack_hex", "_stp_kstack_id",
        "_stp_kstack_print", "_stp_kstack_sprint"}},
  };
  return fns;
}

namespace {

bool ident_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }

// The identifiers of the lines that the BPF compile sees, as far as the generated C's own
// conditionals tell: lines under `#ifdef __UKSTAP_NATIVE__` or `#ifndef __UKSTAP_BPF__` (and the
// #else of their opposites) are skipped. Conditionals on anything else are read both ways.
std::unordered_set<std::string_view> bpf_identifiers(std::string_view src) {
  enum Side : char { Both, NativeOnly, BpfOnly };
  std::vector<Side> stack;  // one entry per open #if
  int native_depth = 0;     // open entries that are NativeOnly
  std::unordered_set<std::string_view> ids;
  for (std::string_view line : text_lines(src)) {
    size_t b = line.find_first_not_of(" \t");
    if (b != std::string_view::npos && line[b] == '#') {
      std::string_view d = line.substr(b + 1);
      d.remove_prefix(std::min(d.size(), d.find_first_not_of(" \t")));
      auto starts = [&](std::string_view p) { return d.substr(0, p.size()) == p; };
      auto names = [&](std::string_view n) { return d.find(n) != std::string_view::npos; };
      Side side = Both;
      if (starts("ifdef") && names("__UKSTAP_NATIVE__")) side = NativeOnly;
      else if (starts("ifndef") && names("__UKSTAP_BPF__")) side = NativeOnly;
      else if (starts("ifdef") && names("__UKSTAP_BPF__")) side = BpfOnly;
      else if (starts("ifndef") && names("__UKSTAP_NATIVE__")) side = BpfOnly;
      if (starts("if")) {
        stack.push_back(side);
        native_depth += side == NativeOnly;
        continue;
      }
      if ((starts("else") || starts("elif")) && !stack.empty()) {
        Side& top = stack.back();
        native_depth -= top == NativeOnly;
        top = starts("else") && top == BpfOnly ? NativeOnly : Both;
        native_depth += top == NativeOnly;
        continue;
      }
      if (starts("endif") && !stack.empty()) {
        native_depth -= stack.back() == NativeOnly;
        stack.pop_back();
        continue;
      }
    }
    if (native_depth > 0) continue;
    for (size_t i = 0; i < line.size();) {
      if (!ident_char(line[i])) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < line.size() && ident_char(line[j])) ++j;
      if (!std::isdigit(static_cast<unsigned char>(line[i]))) ids.insert(line.substr(i, j - i));
      i = j;
    }
  }
  return ids;
}

}  // namespace

std::vector<std::string> used_runtime_functions(const std::string& source) {
  // Only what follows the runtime's #include: the -D lines before it are the user's.
  std::string_view src = source;
  if (size_t inc = src.find("#include \"stp_runtime.h\""); inc != std::string_view::npos)
    src.remove_prefix(inc);
  auto ids = bpf_identifiers(src);
  std::vector<std::string> used;
  for (auto& f : runtime_functions()) {
    bool called = ids.count(f.name) > 0;
    for (const char* c : f.callers) called = called || ids.count(c) > 0;
    if (called) used.push_back(f.name);
  }
  return used;
}

std::string select_runtime_functions(const std::string& source) {
  const std::string include = "#include \"stp_runtime.h\"";
  size_t at = source.find(include);
  if (at == std::string::npos) return source;
  auto used = used_runtime_functions(source);
  std::string defs = "#define STP_RT_SELECT 1  /* the runtime's global functions: STP_USES_* */\n";
  for (auto& f : runtime_functions()) {
    bool u = false;
    for (auto& n : used) u = u || n == f.name;
    defs += std::string("#define STP_USES_") + f.name + (u ? " 1\n" : " 0\n");
  }
  std::string out = source;
  out.insert(at, defs);
  return out;
}

}  // namespace ukstap::codegen
