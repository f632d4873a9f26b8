// Symbols for the ecosystem: the events that let babeltrace2's flt.lttng-utils.debug-info
// (`babeltrace2 --debug-info`) and Trace Compass resolve a `--ctf` trace's user addresses
// themselves, with the files on the reading machine (or under its target-prefix).
//
// 1. LTTng-UST's statedump events, with LTTng-UST 2.13's names, fields and meanings
//    (bin_info.h): lttng_ust_statedump:start, bin_info (baddr, memsz, path, is_pic,
//    has_build_id, has_debug_link), build_id (baddr, build_id[]), debug_link (baddr, crc,
//    filename), end. One bin_info per file-backed mapping that a stack of the process references,
//    emitted before the first event that references it, in that event's stream at its timestamp
//    (so every reader has seen it when the event comes); the first ones of a process are
//    bracketed by start/end. A mapping that overlaps one emitted before for another file (exec,
//    munmap + mmap of another file, a reused pid) restarts the process's statedump: `start`
//    makes the readers forget the process's old files (babeltrace2's debug-info filter does on
//    a statedump start), then the files in use are emitted again as stacks need them.
// 2. One `ukstap:callstack_user_frame` event per distinct user frame address of a process (per
//    statedump: a restart sends them again), after the first stack event that has it, same
//    stream and timestamp, with the frame's address in the common context's `ip`: the filter
//    resolves only that field (one address per event; it never looks into the callstack_user
//    sequence), so an address becomes resolvable by being an event of its own, and once is
//    enough: a reader names a stack's frames by looking its addresses up among the process's
//    frame events before it (the names of an address cannot change without a restart, which
//    the readers see). Per event instead, a 5-frame stack cost 5 more events (~4x the writer's
//    work and bytes of the stack event). Payload: depth (in the first stack that had the
//    address; 0 = the leaf) and address (the stack's entry as callstack_user has it). For caller frames
//    ip is the return address - 1 (the call instruction: a call can end a function, and its
//    return address is then the next function's first byte), as ukstap's own resolver does,
//    so the filter's function names are ukstap's; the leaf frame and a frame whose symbol
//    starts exactly at the address (the signal trampoline) keep the address itself.
//
// Per process, what the readers were told lives as long as the VMA tracker keeps the process's
// history (vma::Tracker::life): a process whose pid the tracker has freed (exited, beyond its
// retention) is forgotten here too, so a long system-wide trace of many short-lived processes
// keeps memory bounded; a pid reused by a new process starts over (a statedump start, its frames
// again), whatever its files and addresses.
//
// Kernel frames get neither: LTTng describes no kernel image with bin_info and the filter only
// resolves user space (per vpid); callstack_kernel stays addresses plus ukstap's names.
//
// Requirements on the trace (the writer's, checked by the filter's
// is_event_common_ctx_dbg_info_compatible): the event common context has `vpid` (signed,
// 32 bits) and `ip` (unsigned); event class ids are dense (babeltrace2 2.0.4's filter aborts on
// a gap, and sink.ctf.fs writes only classes that had events): every class here is defined when
// its first event is emitted.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ctf-writer/bin_info.h"
#include "loader/stack_frame.h"

namespace ukstap::vma {
class Tracker;
}

namespace ukstap::ctf {

// The event classes' fields, in LTTng's types: what EventOut implementations map to the trace.
enum class FieldKind : uint8_t { U8, U32, U64, U64Hex, String, U8SeqHex };
struct FieldDef {
  std::string name;
  FieldKind kind;
};
// One field's value: `u` for the integers, `s` for a string, `bytes` for the sequence.
struct FieldValue {
  uint64_t u = 0;
  std::string s;
  std::vector<uint8_t> bytes;
};

// Where the events go (the CTF writer in ukstap; a recorder in the unit tests).
class EventOut {
 public:
  virtual ~EventOut() = default;
  // A new event class; returns its id for emit().
  virtual uint32_t define(const std::string& name, const std::vector<FieldDef>& fields) = 0;
  // One event: the common context's vpid = pid, vtid = tid, ip = ip; `values` as the class's fields.
  virtual void emit(uint32_t cls, uint64_t ts_ns, uint32_t cpu, int pid, int tid, uint64_t ip,
                    const std::vector<FieldValue>& values) = 0;
};

// The event a stack belongs to.
struct StackEvent {
  int pid = 0, tid = 0;  // pid 0 (begin/end probes): no process, nothing is emitted
  uint32_t cpu = 0;
  uint64_t ts_ns = 0;    // the event's timestamp: CLOCK_MONOTONIC ns, the VMA tracker's clock too
};

class Statedump {
 public:
  Statedump(EventOut& out, vma::Tracker& tracker) : out_(out), tracker_(tracker) {}

  // Before the event: the statedump events its user frames (leaf first; kernel frames and
  // frames without an address, a profile's "[user stack cut short]" note, are skipped) need. `extra_ip`: the event's own ip when it is not frames[0] (0: none).
  void before(const StackEvent& e, const std::vector<loader::Frame>& frames, uint64_t extra_ip = 0);
  // After the event: one ukstap:callstack_user_frame per user frame address new to the process.
  void after(const StackEvent& e, const std::vector<loader::Frame>& frames);

  // The address a frame's event carries in `ip` (above).
  static uint64_t frame_ip(const loader::Frame& f, size_t depth);

  struct Stats {
    uint64_t bin_infos = 0, build_ids = 0, debug_links = 0, starts = 0, restarts = 0;
    uint64_t frame_events = 0;
    uint64_t processes = 0;        // processes known now (memory: bounded by the tracker's)
    uint64_t processes_freed = 0;  // forgotten: exited and freed by the tracker, or pid reused
    uint64_t unreadable_files = 0;  // mapped files not readable as ELF: no events, no error
  };
  Stats stats() const {
    Stats s = stats_;
    s.unreadable_files = facts_.unreadable;
    s.processes = procs_.size();
    return s;
  }

 private:
  struct Bin {
    uint64_t end;      // baddr + memsz
    std::string file;  // path + dev + ino
  };
  // An address whose bin before() has looked up: while the tracker's generation is `gen` and an
  // event's time is inside the mapping's [since, until), the lookup would give the same mapping,
  // so the readers already know what they need for it (no lookup per frame per event).
  struct Checked {
    uint64_t since, until, gen;
  };
  struct Proc {
    uint64_t life = 0;  // the tracker's life of the pid when last seen (0: not known then)
    bool started = false;
    std::map<uint64_t, Bin> bins;  // by baddr: what the readers know of this process
    std::unordered_map<uint64_t, Checked> checked;  // by frame ip
    std::unordered_set<uint64_t> frames_sent;       // frame ips with a frame event since the (re)start
  };
  struct Pending {
    uint64_t baddr;
    std::string file, path;
    const ElfFacts* facts;
  };
  // The bin this address needs in process `pid` at time t, if a readable file is mapped there.
  // `c` gets the covering mapping's lifetime (false when no mapping covers addr).
  bool needed(int pid, uint64_t addr, uint64_t t_ns, Pending& p, Checked& c, bool& mapped);
  void emit_bin(const StackEvent& e, const Pending& p);
  // The process of an event: a fresh one when the tracker says the pid names a new process.
  Proc& proc(int pid, uint64_t t_ns);
  // Forgets the processes the tracker no longer keeps; amortized (when the table doubled).
  void prune();
  uint32_t cls(uint32_t& id, const char* name, const std::vector<FieldDef>& fields);

  EventOut& out_;
  vma::Tracker& tracker_;
  ElfFactsCache facts_;
  std::unordered_map<int, Proc> procs_;
  static constexpr size_t kPruneMin = 256;
  size_t prune_at_ = kPruneMin;
  Stats stats_;
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t c_start_ = kNone, c_bin_ = kNone, c_build_id_ = kNone, c_debug_link_ = kNone,
           c_end_ = kNone, c_frame_ = kNone;
};

}  // namespace ukstap::ctf
