#include "btf/kernel_access.h"

#include <bpf/btf.h>

#include "driver/diagnostics.h"
#include "probes/provider.h"

namespace ukstap::btf {

namespace {

struct Member {
  uint32_t type = 0;
  uint32_t bitfield_bits = 0;  // 0 when not a bitfield
};

// `name` in struct/union `id`, looking through anonymous members as C does.
bool find_member(const KernelBtf& k, uint32_t id, const std::string& name, Member& out) {
  const struct btf_type* t = k.type(k.strip(id));
  if (!t || !btf_is_composite(t)) return false;
  const struct btf_member* m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); ++i) {
    const char* n = btf__name_by_offset(k.raw(), m[i].name_off);
    if (n && *n) {
      if (name == n) {
        out.type = m[i].type;
        out.bitfield_bits = btf_member_bitfield_size(t, i);
        return true;
      }
    } else if (find_member(k, m[i].type, name, out)) {
      return true;
    }
  }
  return false;
}

bool is_char(const KernelBtf& k, uint32_t id) {
  const struct btf_type* t = k.type(k.strip(id));
  return t && btf_is_int(t) && t->size == 1;
}

class Walker {
 public:
  Walker(const KernelBtf& k, const AccessStart& st, const Token* tok, CodeSink* sink)
      : k_(k), tok_(tok), sink_(sink), text_(st.what), value_(st.value.empty() ? "0" : st.value),
        cur_(st.type_id), points_to_(st.points_to) {}

  void member(const ast::TargetComponent& c) {
    const struct btf_type* t = current();
    std::string via = text_;
    text_ += "->" + c.member;
    uint32_t composite = 0;
    if (is_pointer(t)) {
      uint32_t to = pointee(t);
      const struct btf_type* tt = k_.type(k_.strip(to));
      if (!tt || !btf_is_composite(tt))
        fail("'" + via + "' is " + k_.describe(current_id()) + ", not a pointer to a struct or union", c.tok);
      composite = to;
      parent_ = deref_base(to, c.tok);
      path_ = parent_ + "->" + c.member;
    } else if (t && btf_is_composite(t)) {
      if (path_.empty()) fail("'" + via + "' is a struct value the program cannot address", c.tok);
      composite = cur_;
      parent_ = "(&(" + path_ + "))";
      path_ += "." + c.member;
    } else {
      fail("'->" + c.member + "' on '" + via + "', which is " + describe_current() +
               ", not a struct, union or pointer",
           c.tok);
    }
    Member m;
    if (!find_member(k_, composite, c.member, m)) {
      std::string msg = k_.describe(k_.strip(composite)) + " has no member '" + c.member + "'";
      std::string similar = probes::suggest_similar(c.member, k_.member_names(composite));
      if (!similar.empty()) msg += " (similar: " + similar + ")";
      fail(msg, c.tok);
    }
    cur_ = m.type;
    bitfield_ = m.bitfield_bits != 0;
    bitfield_name_ = c.member;
  }

  void index(const ast::TargetComponent& c) {
    const struct btf_type* t = current();
    std::string via = text_;
    std::string idx;
    pending_index_.clear();
    if (c.kind == ast::TargetComponent::Kind::LiteralIndex) {
      idx = std::to_string(c.num_index) + "LL";
      text_ += "[" + std::to_string(c.num_index) + "]";
    } else {
      std::string v = sink_ ? sink_->eval_long(c.expr_index) : "0";
      idx = "i" + std::to_string(nindex_++) + "__";
      pending_index_ = "int64_t " + idx + " = " + v + "; ";
      text_ += "[...]";
    }
    if (t && btf_is_array(t)) {
      const struct btf_array* a = btf_array(t);
      if (c.kind == ast::TargetComponent::Kind::LiteralIndex && a->nelems > 0 &&
          (c.num_index < 0 || c.num_index >= (int64_t)a->nelems))
        fail("index " + std::to_string(c.num_index) + " is out of range for '" + via + "' (" +
                 k_.describe(current_id()) + ")",
             c.tok);
      if (path_.empty()) fail("'" + via + "' is an array value the program cannot address", c.tok);
      path_ += "[" + idx + "]";
      decls_ += pending_index_;
      cur_ = a->type;
    } else if (is_pointer(t)) {
      uint32_t to = pointee(t);
      path_ = deref_base(to, c.tok) + "[" + idx + "]";
      decls_ += pending_index_;
      cur_ = to;
    } else {
      fail("'" + via + "' is " + describe_current() + ", not an array or pointer: it cannot be indexed", c.tok);
    }
    bitfield_ = false;
  }

  AccessResult finish(bool addressof, bool want_string) {
    AccessResult r;
    if (points_to_) {  // @cast(p, "T") with no member: p itself; &@cast(p, "T") too, the
      // address of what p points to (type_defined's `@defined(&@cast(0, "T"))`)
      r.value = "((int64_t)(" + value_ + "))";
      return r;
    }
    if (addressof) {
      if (path_.empty()) fail("cannot take the address of '" + text_ + "' (not in memory)", tok_);
      if (bitfield_) fail("cannot take the address of bitfield '" + text_ + "'", tok_);
      r.value = read("(int64_t)(unsigned long)__builtin_preserve_access_index(&(" + path_ + "))");
      return r;
    }
    const struct btf_type* t = current();
    if (t && btf_is_array(t) && is_char(k_, btf_array(t)->type)) {
      // A char array is its address, as in SystemTap (kernel_string($next->comm)); where a
      // string is wanted, its characters (kernel_string's semantics), at most the array's
      // length: a full array has no NUL of its own.
      r.char_array = true;
      if (path_.empty()) fail("'" + text_ + "' is an array value the program cannot address", tok_);
      if (!want_string) {
        r.value = read("(int64_t)(unsigned long)__builtin_preserve_access_index(&(" + path_ + "))");
        return r;
      }
      r.type = ast::Type::String;
      if (sink_) {
        r.value = sink_->tmp_str();
        sink_->line("{ " + decls_ + "STP_KREAD_CHARS(" + r.value + ", " + path_ + "); }");
      }
      return r;
    }
    if (t && btf_is_array(t) && !path_.empty()) {
      // Any other array: its address, as SystemTap gives it.
      r.value = read("(int64_t)(unsigned long)__builtin_preserve_access_index(&(" + path_ + "))");
      return r;
    }
    if (t && (btf_is_composite(t) || btf_is_array(t)))
      fail("'" + text_ + "' is " + describe_current() +
               ": read a member or an element of it (pretty-printing it is not supported yet)",
           tok_);
    if (!t || !(btf_is_int(t) || btf_is_enum(t) || btf_is_enum64(t) || is_pointer(t)))
      fail("'" + text_ + "' is " + describe_current() + ", which ukstap cannot read as a number", tok_);
    if (bitfield_) {
      r.value = read("(int64_t)BPF_CORE_READ_BITFIELD_PROBED(" + parent_ + ", " + bitfield_name_ + ")");
      return r;
    }
    bool is_signed = (btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_SIGNED)) ||
                     ((btf_is_enum(t) || btf_is_enum64(t)) && btf_kflag(t));
    if (path_.empty()) {
      // The value itself (a tp_btf argument: a u64 slot): narrowed as its type says.
      if (is_pointer(t) || t->size >= 8 || points_to_) {
        r.value = "((int64_t)(" + value_ + "))";
      } else {
        std::string w = std::to_string(t->size * 8);
        r.value = std::string("((int64_t)(") + (is_signed ? "int" : "uint") + w + "_t)(" + value_ + "))";
      }
      return r;
    }
    r.value = read(std::string("STP_KREAD_INT(") + path_ + ", " + (is_signed ? "1" : "0") + ")");
    return r;
  }

 private:
  [[noreturn]] void fail(const std::string& msg, const Token* tok) {
    throw SemanticError(msg, tok ? tok : tok_);
  }

  uint32_t current_id() const { return cur_; }
  const struct btf_type* current() const {
    if (points_to_) return nullptr;  // handled by is_pointer/pointee
    return k_.type(k_.strip(cur_));
  }
  bool is_pointer(const struct btf_type* t) const {
    return points_to_ || (t && btf_is_ptr(t));
  }
  uint32_t pointee(const struct btf_type* t) const { return points_to_ ? points_to_ : t->type; }
  std::string describe_current() const {
    return points_to_ ? k_.describe(points_to_) + "*" : k_.describe(cur_);
  }

  // The current pointer's value as a C pointer to `to`, in a local of the generated block
  // (b__): a read first when the pointer is itself in memory (`$p->mm->start_code` reads
  // p->mm, then start_code through it). Locals, because everything inside
  // __builtin_preserve_access_index becomes a CO-RE relocation, the context's own fields
  // (where temps live) included, and those are not kernel types.
  std::string deref_base(uint32_t to, const Token* tok) {
    std::string ctype = k_.c_name(to);
    if (ctype.empty())
      fail("'" + text_ + "': " + k_.describe(to) + " has no C name for the generated code", tok);
    std::string v = value_;
    if (!path_.empty()) v = read("STP_KREAD_INT(" + path_ + ", 0)");
    points_to_ = 0;
    decls_ = ctype + " *b__ = (" + ctype + " *)(unsigned long)(" + v + "); ";
    return "b__";
  }

  // A read of the current path into a new temp (pass 3); "0" in pass 2.
  std::string read(const std::string& expr) {
    if (!sink_) return "0";
    std::string t = sink_->tmp_long();
    sink_->line("{ " + decls_ + t + " = " + expr + "; }");
    return t;
  }

  const KernelBtf& k_;
  const Token* tok_;
  CodeSink* sink_;
  std::string text_;   // the access so far as the script wrote it, for messages
  std::string value_;  // the starting value (C), used while path_ is empty
  uint32_t cur_;
  uint32_t points_to_;
  std::string path_;    // a C lvalue in kernel memory, once a pointer has been followed
  std::string parent_;  // pointer to the struct holding the last member (bitfields)
  bool bitfield_ = false;
  std::string bitfield_name_;
  std::string decls_;  // the block's locals the path uses: b__, i0__, ...
  int nindex_ = 0;
  std::string pending_index_;
};

}  // namespace

AccessResult walk_access(const KernelBtf& k, const AccessStart& start,
                         const std::vector<ast::TargetComponent>& comps, bool addressof,
                         const Token* tok, CodeSink* sink, bool want_string) {
  Walker w(k, start, tok, sink);
  for (const auto& c : comps) {
    switch (c.kind) {
      case ast::TargetComponent::Kind::StructMember:
        w.member(c);
        break;
      case ast::TargetComponent::Kind::LiteralIndex:
      case ast::TargetComponent::Kind::ExpressionIndex:
        w.index(c);
        break;
      case ast::TargetComponent::Kind::PrettyPrint:
        throw SemanticError("pretty-printing kernel types ('" + c.member +
                                "') is not supported by ukstap yet",
                            c.tok ? c.tok : tok);
    }
  }
  return w.finish(addressof, want_string);
}

}  // namespace ukstap::btf
