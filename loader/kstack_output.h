// Pass 5's kernel-stack printer: KSTACK records (common/stp_records.h) -> SystemTap's backtrace
// and symbol texts (docs/STAP-FORMATS.md §4) with kernel symbols from /proc/kallsyms (ksym.h):
//   print_backtrace   ` 0xffffffff81234567 : do_sys_openat2+0x74/0x130 [kernel]` per frame
//   sprint_backtrace  `do_sys_openat2+0x74 [kernel]` + "\n" per frame
//   symname/symdata   `do_sys_openat2` / `do_sys_openat2+0x74/0x130 [kernel]`
// An address no symbol covers prints bare (` 0x…`); a context without a kernel stack (a
// user-mode sample, a uprobe, begin/end) prints `<no kernel backtrace at PP>`.
//
// A record's pcs are resolved into Frames (stack_frame.h); the text is made from those, and a
// profile takes the Frames themselves (frames()).
//
// Records with a token define what a "\x1eK<16 hex>\x1f" token in a script string stands for;
// expand() replaces them when the string is printed.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loader/stack_frame.h"

struct stp_ustack;

namespace ukstap::ksym {
class Kallsyms;
}

namespace ukstap::loader {

class StackIds;

class KernelStacks {
 public:
  explicit KernelStacks(const ksym::Kallsyms& syms) : syms_(syms) {}

  // Probe points by probe id, for `<no kernel backtrace at PP>`.
  void set_probe_points(std::vector<std::string> pps) { pps_ = std::move(pps); }
  // Where kstack_id() stacks are read (the BPF map "stp_kstacks"; null: none).
  void set_stack_ids(const StackIds* ids) { stack_ids_ = ids; }

  // One KSTACK record: `flags` = header id. Returns the text to print now ("" for token
  // records, whose text expand() substitutes later).
  std::string record(uint16_t flags, const stp_ustack& u, const unsigned char* payload, size_t n);
  // The same record's frames (a profile sample's print_backtrace()); none for a context
  // without a kernel stack, a token or a symbol record.
  std::vector<Frame> sample_frames(uint16_t flags, const stp_ustack& u, const unsigned char* payload,
                            size_t n);
  // Replaces every kernel token in `s`.
  std::string expand(const std::string& s) const;

  uint64_t stacks = 0, frames = 0, unresolved_frames = 0;

 private:
  // `caller`: a return address (frames after the first): named after the byte before it, so
  // a call that is a function's last instruction is not put in the next function.
  Frame resolve(uint64_t pc, bool caller);
  static std::string format_one(const Frame& f, int flags);
  // Resolves `pcs` into `frames` and/or their `text` (either may be null).
  void walk(const std::vector<uint64_t>& pcs, int flags, std::vector<Frame>* frames,
            std::string* text);
  // Both outputs of record(): the text, or (frames non-null) the frames instead.
  std::string decode(uint16_t flags, const stp_ustack& u, const unsigned char* p, size_t n,
                     std::vector<Frame>* frames);
  std::string format_list(const std::string& list);
  std::string no_stack(uint16_t probe_id, const std::string& native_pp) const;

  const ksym::Kallsyms& syms_;
  std::vector<std::string> pps_;
  const StackIds* stack_ids_ = nullptr;
  std::unordered_map<uint64_t, std::string> tokens_;
  struct FrameKey {
    uint64_t pc;
    uint32_t bits;  // flags << 1 | caller
    bool operator==(const FrameKey& o) const { return pc == o.pc && bits == o.bits; }
  };
  struct FrameKeyHash {
    size_t operator()(const FrameKey& k) const { return std::hash<uint64_t>()(k.pc * 31 + k.bits); }
  };
  // A run prints text or collects profile samples, never both: each has its cache, so a text
  // run's entries stay as small as its text (a Frame's strings would double them).
  struct CachedText {
    std::string text;
    bool unresolved = false;
  };
  std::unordered_map<FrameKey, CachedText, FrameKeyHash> text_cache_;
  std::unordered_map<FrameKey, Frame, FrameKeyHash> frame_cache_;
};

}  // namespace ukstap::loader
