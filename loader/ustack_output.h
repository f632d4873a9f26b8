// Pass 5's user-stack printer: USTACK records (common/stp_records.h) -> SystemTap's backtrace
// and symbol texts (docs/STAP-FORMATS.md §4), resolved against the mappings the VMA tracker saw at the
// event's time, so stacks of processes that have exited since still symbolize.
//
// A record's pcs are resolved into Frames (stack_frame.h); the text is made from those, and a
// profile takes the Frames themselves (frames()). print_* records are formatted at once, in
// stream order. Records with a token define what a
// deferred token ("\x1eU<16 hex>\x1f") in a script string stands for; expand() replaces the
// tokens when the string is printed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "loader/stack_frame.h"
#include "loader/stack_text_cache.h"

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
class DeferredUnwind;

class UserStacks {
 public:
  UserStacks(vma::Tracker& tracker, sym::Symbolizer& symbolizer);

  // The pid that addresses from native probes (pid 0) resolve against first: -c / -x.
  void set_target(int pid) { target_pid_ = pid; }
  // Function names demangled (C++ `_Z...` -> `ns::f(int)`, vma-tracker/symbol_demangle.h) in
  // every text and frame from here on; off: the ELF names, as SystemTap prints them.
  void set_demangle(bool on) { demangle_ = on; }
  // Probe points by probe id, for `<no user backtrace at PP>`.
  void set_probe_points(std::vector<std::string> pps) { pps_ = std::move(pps); }
  // Where ustack_id() stacks are read (the BPF map "stp_ustacks"; null: none).
  void set_stack_ids(const StackIds* ids) { stack_ids_ = ids; }
  // Finishes walks that stopped for a table not loaded yet (null: unwind tables off).
  void set_deferred(DeferredUnwind* d) { deferred_ = d; }
  // A USNAP record (common/stp_usnap.h): the stack copy for the next record of its thread.
  void snapshot(const unsigned char* p, size_t n);
  // Where ubacktrace() keys kept as ids are read (the BPF map "stp_ubtstacks"; null: none).
  void set_hex_stack_ids(const StackIds* ids) { hex_stack_ids_ = ids; }

  // One USTACK record: `flags` = header id. Returns text to print now ("" for token records),
  // valid until the next call (a repeated stack's text is the cache's own: no copy per record).
  // `error` is set to a runtime error message (umodname of an unknown address).
  const std::string& record(uint16_t flags, const stp_ustack& u, const unsigned char* payload,
                            size_t n, std::string& error);
  // The same record's frames, resolved and cut as record() prints them (a profile sample's
  // print_ubacktrace()); none for a context without a user stack, a token or a symbol record.
  std::vector<Frame> sample_frames(uint16_t flags, const stp_ustack& u, const unsigned char* payload,
                            size_t n);
  // Both at once, the record decoded once (its deferred walk finished once): --ctf's trace
  // takes the frames while -o FILE gets the text of the same stack.
  std::string record_frames(uint16_t flags, const stp_ustack& u, const unsigned char* payload, size_t n,
                            std::string& error, std::vector<Frame>& frames);
  // Replaces every token in `s` (strings without '\x1e' come back unchanged).
  std::string expand(const std::string& s) const;
  static bool has_token(const char* s, size_t n);

  // Walks by stop reason (for -v and the exit summary).
  uint64_t stops[16] = {};  // by enum stp_unwind_stop (STP_STOP_MASK)
  uint64_t stacks = 0, frames = 0, unresolved_frames = 0;
  uint64_t cut_frames = 0;  // inexact frames outside any executable mapping: not printed

 private:
  struct Pc {
    uint64_t pc;
    bool inexact;
  };
  // One address. `caller` frames look up pc-1 (a return address may sit just past the end of a
  // call at a function's end). `in_text`: inside an executable mapping (file-backed or not).
  Frame resolve(int pid, uint64_t pc, uint64_t t_ns, bool caller, bool want_line = false,
                bool* in_text = nullptr);
  int pick_pid(int pid, uint64_t pc, uint64_t t_ns);
  // Resolves `pcs` into `frames` and/or their `text` (either may be null); an inexact frame
  // outside code ends the stack.
  // `end` (may be null) is set to how the printed stack ends: its last frame is an outermost
  // one (stack_cut_note.h), or user space cut it at a frame outside code.
  // `valid` (may be null): the event times [lo, hi) in which every pc the walk looked at falls
  // in the same mapping (all_mapped: each one had a mapping), for StackTextCache.
  struct WalkEnd {
    bool outermost = false;
    bool cut_here = false;
  };
  struct WalkValid {
    uint64_t lo = 0, hi = UINT64_MAX;
    bool all_mapped = true;
  };
  void walk(int pid, uint64_t t_ns, const std::vector<Pc>& pcs, int flags,
            std::vector<Frame>* frames, std::string* text, WalkEnd* end = nullptr,
            WalkValid* valid = nullptr);
  // `text` += the note of a stack stopped for `stop` (stack_cut_note.h) in the multi-line
  // backtrace formats.
  static void add_cut_note(std::string& text, int flags, uint32_t stop, const WalkEnd& end);
  // The same for a profile sample: a last frame "[user stack cut short: REASON]".
  static void add_cut_frame(std::vector<Frame>* frames, uint32_t stop, const WalkEnd& end);
  // Both outputs of record(): the text, or (frames non-null) the frames instead.
  // `cached` (may be null): set instead of copying when a printed stack's text is the stack text
  // cache's (then the returned text is empty).
  std::string decode(uint16_t flags, const stp_ustack& u, const unsigned char* p, size_t n,
                     std::string& error, std::vector<Frame>* frames,
                     const std::string** cached = nullptr);
  static std::string format_one(const Frame& f, int flags);
  // print_usyms/sprint_usyms (_STP_SYM_LIST): ` ADDR : usymdata\n` per address of `list` as
  // written (space-separated), resolved in process `pid` at time `t_ns`.
  std::string format_list(int pid, uint64_t t_ns, const std::string& list);
  // usymfile/usymline/usymfileline (_STP_SYM_FILE, _STP_SYM_LINE): the address's source file
  // and line from DWARF line tables; the hex address when the one asked for is unknown.
  std::string source_text(int pid, uint64_t addr, uint64_t t_ns, int flags);

  // Resolved and formatted frames by (mapping, pc, caller, flags, inexact): profiles repeat the
  // same call sites; the mapping (its serial: never reused, unlike the address of a freed one) changes
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
  // it reaches this many entries (~300 bytes each).
  static constexpr size_t kFrameCacheMax = 65536;
  // A run prints text or collects profile samples, never both: each has its cache, so a text
  // run's entries stay as small as its text (a Frame's strings would double them).
  struct TextEntry {
    std::string text;
    bool outermost;  // the frame's function starts every stack (stack_cut_note.h)
  };
  std::unordered_map<FrameKey, TextEntry, FrameKeyHash> text_cache_;
  bool text_too_ = false;  // record_frames(): decode() makes the text besides the frames
  std::unordered_map<FrameKey, Frame, FrameKeyHash> frame_cache_;
  StackTextCache stack_text_;  // whole printed stacks (stack_text_cache.h)
  std::string record_text_;    // record()'s text when not the cache's
  std::vector<uint64_t> raw_;  // decode()'s pcs of the record at hand
  uint64_t drained_at_ns_ = 0;  // events before this time: their mappings are all known

  vma::Tracker& tracker_;
  sym::Symbolizer& sym_;
  int target_pid_ = 0;
  bool demangle_ = false;
  std::vector<std::string> pps_;
  std::unordered_map<uint64_t, std::string> tokens_;
  const StackIds* stack_ids_ = nullptr;
  DeferredUnwind* deferred_ = nullptr;
  const StackIds* hex_stack_ids_ = nullptr;
};

}  // namespace ukstap::loader
