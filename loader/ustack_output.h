// Pass 5's user-stack printer: USTACK records (common/stp_records.h) -> SystemTap's backtrace
// and symbol texts (STAP-FORMATS §4), resolved against the mappings the VMA tracker saw at the
// event's time, so stacks of processes that have exited since still symbolize.
//
// print_* records are formatted at once, in stream order. Records with a token define what a
// deferred token ("\x1eU<16 hex>\x1f") in a script string stands for; expand() replaces the
// tokens when the string is printed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct stp_ustack;

namespace ukstap::vma {
class Tracker;
struct Mapping;
}
namespace ukstap::sym {
class Symbolizer;
}

namespace ukstap::loader {

class StackIds;

class UserStacks {
 public:
  UserStacks(vma::Tracker& tracker, sym::Symbolizer& symbolizer);

  // The pid that addresses from native probes (pid 0) resolve against first: -c / -x.
  void set_target(int pid) { target_pid_ = pid; }
  // Probe points by probe id, for `<no user backtrace at PP>`.
  void set_probe_points(std::vector<std::string> pps) { pps_ = std::move(pps); }
  // Where ustack_id() stacks are read (the BPF map "stp_ustacks"; null: none).
  void set_stack_ids(const StackIds* ids) { stack_ids_ = ids; }

  // One USTACK record: `flags` = header id. Returns text to print now ("" for token records).
  // `error` is set to a runtime error message (umodname of an unknown address).
  std::string record(uint16_t flags, const stp_ustack& u, const unsigned char* payload, size_t n,
                     std::string& error);
  // Replaces every token in `s` (strings without '\x1e' come back unchanged).
  std::string expand(const std::string& s) const;
  static bool has_token(const char* s, size_t n);

  // Walks by stop reason (for -v and the exit summary).
  uint64_t stops[16] = {};  // by enum stp_unwind_stop (STP_STOP_MASK)
  uint64_t stacks = 0, frames = 0, unresolved_frames = 0;
  uint64_t cut_frames = 0;  // inexact frames outside any executable mapping: not printed

 private:
  struct Frame {
    uint64_t pc;
    bool inexact;
  };
  // One address: fills symbol/module texts. `caller` frames look up pc-1 (a return address may
  // sit just past the end of a call at a function's end).
  struct Resolved {
    bool have_module = false, have_symbol = false;
    bool in_text = false;  // inside an executable mapping (file-backed or not)
    std::string module;  // full path, or "[vdso]"
    std::string symbol;
    uint64_t offset = 0, size = 0;          // symbol offset/size
    uint64_t mod_offset = 0, mod_size = 0;  // within the module's mappings
    std::string src;                        // "FILE:LINE" when asked and known
  };
  Resolved resolve(int pid, uint64_t pc, uint64_t t_ns, bool caller, bool want_line = false);
  int pick_pid(int pid, uint64_t pc, uint64_t t_ns);
  std::string format_frames(int pid, uint64_t t_ns, const std::vector<Frame>& frames, int flags);
  std::string format_one(const Resolved& r, uint64_t pc, int flags, bool inexact);

  // Formatted frames by (mapping, pc, caller, flags, inexact): profiles repeat the same call
  // sites; the mapping (its serial: never reused, unlike the address of a freed one) changes
  // when an address is remapped, so a hit is still right.
  struct FrameKey {
    uint64_t mapping;
    uint64_t pc;
    uint32_t bits;
    bool operator==(const FrameKey& o) const { return mapping == o.mapping && pc == o.pc && bits == o.bits; }
  };
  struct FrameKeyHash {
    size_t operator()(const FrameKey& k) const {
      return std::hash<uint64_t>()(k.pc * 31 + k.mapping * 0x9e3779b97f4a7c15ull) ^ k.bits;
    }
  };
  // Bounds the cache (a busy system's short processes each bring new addresses): cleared when
  // it reaches this many entries (~150 bytes each).
  static constexpr size_t kFrameCacheMax = 65536;
  std::unordered_map<FrameKey, std::string, FrameKeyHash> frame_cache_;
  uint64_t drained_at_ns_ = 0;  // events before this time: their mappings are all known

  vma::Tracker& tracker_;
  sym::Symbolizer& sym_;
  int target_pid_ = 0;
  std::vector<std::string> pps_;
  std::unordered_map<uint64_t, std::string> tokens_;
  const StackIds* stack_ids_ = nullptr;
};

}  // namespace ukstap::loader
