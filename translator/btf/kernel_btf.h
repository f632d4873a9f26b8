// The running kernel's types, from its BTF (/sys/kernel/btf/vmlinux) through libbpf's BTF API:
// what `$next->pid`, `@cast(p, "task_struct")->tgid` and a tracepoint's C arguments resolve
// against in pass 2, and what pass 3 names in the generated BPF C (whose vmlinux.h is dumped
// from the same BTF, so every name printed here exists there).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

struct btf;
struct btf_type;

namespace ukstap::btf {

class KernelBtf {
 public:
  // The kernel's BTF, loaded once per process; null when the kernel has none (`why` says).
  static const KernelBtf* get(std::string& why);

  const struct btf_type* type(uint32_t id) const;
  std::string name(uint32_t id) const;  // the type's own name; "" when anonymous
  // Skips typedef, const, volatile, restrict and type tags: the type a value really has.
  uint32_t strip(uint32_t id) const;
  // A struct, union or typedef named so ("task_struct", "struct task_struct", "union x",
  // "pid_t"); 0 when there is none.
  uint32_t find_type(const std::string& name) const;
  // The C spelling of a type for a cast in the generated code ("struct task_struct *",
  // "pid_t", "unsigned int"); "" when it cannot be named (an anonymous struct).
  std::string c_name(uint32_t id) const;
  // Human-readable, for messages and -L: the same, or "struct <anonymous>".
  std::string describe(uint32_t id) const;
  // Member names of a struct or union, anonymous members' members included.
  std::vector<std::string> member_names(uint32_t id) const;

  struct btf* raw() const { return btf_; }
  // A function of the kernel's with the tracepoint's parameters, named (__traceiter_<event>
  // and the like, see the .cpp); 0 when there is none.
  uint32_t trace_glue(const std::string& event) const;

  ~KernelBtf();

 private:
  explicit KernelBtf(struct btf* b) : btf_(b) {}
  struct btf* btf_;
  mutable bool glue_indexed_ = false;
  mutable std::unordered_map<std::string, uint32_t> glue_;
};

// A tracepoint's C argument (after the tracing glue's `void *__data`): its name as the
// kernel's __traceiter_<event> function declares it, its index in a tp_btf program's context
// (ctx[index]) and its type.
struct TraceArg {
  std::string name;  // without '$'
  int index = 0;
  uint32_t type_id = 0;
};
// The arguments of tracepoint `event`; empty when BTF does not declare them.
std::vector<TraceArg> tracepoint_args(const KernelBtf& k, const std::string& event);

}  // namespace ukstap::btf
