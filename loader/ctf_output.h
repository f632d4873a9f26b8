// `ukstap --ctf=DIR`: the script's output records become CTF events (the writer:
// ctf-writer/README.md). Output (output.h) hands over every record that carries an event
// context (common/stp_records.h STP_REC_CTX_FLAG: the module was compiled with -DSTP_CTF).
//
// Granularity: one event per output statement (printf/print*/log/print of a histogram), named
// after its probe point as the script names it (pn(): "syscall.openat", not the tracepoint), at the time the probe was hit; a backtrace the same probe hit
// prints (print_ubacktrace(), print_backtrace(), print_ustack(...)) joins that event as its
// callstack_user / callstack_kernel instead of being an event of its own, as LTTng records a
// callstack context with the event it belongs to. Per statement, not per probe hit: each
// statement's fields are fixed (its format's conversions), while what one hit prints depends on
// the script's control flow (a loop in an end probe prints thousands of lines).
//
// Event classes are made when first seen, one per (probe, statement, which stacks): payload =
// the statement's values, typed (%d/%i signed 64-bit, %u/%x/%o/%p/%c unsigned 64-bit with the
// display base of the conversion, %s/%m strings), named as format_arg_names.h says; then
// "callstack_user_symbols" / "callstack_kernel_symbols" (the frames as strings, "func+0xOFF/0xSIZE
// [module]"). Every event's common context, as LTTng names its contexts: vpid, vtid, procname,
// ip (the first user frame, 0 without one) and, when the script uses stacks at all,
// callstack_user / callstack_kernel (sequences of addresses, innermost first; empty when the
// event has none). Packet context cpu_id; clock "monotonic" (bpf_ktime_get_ns) with its offset
// to the realtime clock.
//
// Statedump and other extra events: trace() is the CtfTrace (ctf-writer/trace_writer.h);
// define_class() there, then begin_event(), emit_common() and the class's values, end_event().
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ctf-writer/statedump.h"
#include "ctf-writer/trace_writer.h"
#include "loader/stack_frame.h"

struct stp_rec_ctx;

namespace ukstap {
class Session;
namespace codegen {
struct ModuleInfo;
}

namespace loader {

class CtfOutput {
 public:
  CtfOutput(Session& s, const codegen::ModuleInfo& m);
  // Checks DIR, starts the writer, sends the trace's description. False with `why`.
  bool open(const std::string& dir, std::string& why);
  ctf::CtfTrace& trace() { return trace_; }

  // A printed value of a statement.
  struct Value {
    bool is_string = false;
    int64_t num = 0;
    std::string str;
  };
  // A PRINTF record's values (format `fmt_id`), a log() line, a printed histogram.
  void statement(const stp_rec_ctx& x, int fmt_id, std::vector<Value> values);
  void log(const stp_rec_ctx& x, std::string text);
  void histogram(const stp_rec_ctx& x, std::string text);
  // A backtrace's frames (leaf first).
  void stack(const stp_rec_ctx& x, bool kernel, std::vector<Frame> frames);
  // The common context of an event of process `pid`, thread `tid` (values in init's order).
  // `ip`: the ip context when given (else the first user frame).
  void emit_common(ctf::Encoder& e, uint32_t pid, uint32_t tid, const std::string& comm,
                   const std::vector<uint64_t>* ustack = nullptr, const std::vector<uint64_t>* kstack = nullptr,
                   const uint64_t* ip = nullptr);
  // Symbols for babeltrace2 --debug-info and Trace Compass (ctf-writer/statedump.h): the
  // LTTng-UST statedump events and one event per user frame around every event with a user
  // stack, from the mappings `tracker` saw.
  void enable_statedump(vma::Tracker& tracker);
  // The run's count of events lost with the records the ring buffer had no room for
  // (stp_session.drop_events: an event with a stack is 2 records, counted once): what it
  // gained since the last flush() goes into the trace as discarded events (CTF's way to say a
  // trace lost events), in the stream of the last event's CPU (one ring serves every CPU: which
  // CPU lost them is not known).
  void watch_drops(const volatile uint64_t* drops) { drops_ = drops; }
  // Writes out the events being assembled whose hits are over, and sends what is buffered.
  // A hit's records (a statement, then its stacks) come from one run of a BPF program, but the
  // event loop drains the ring every 20 ms whatever it holds: a drain between a printf record
  // and its stack record is common (a walk takes microseconds to milliseconds). An event is
  // therefore written only once it is sealed (the next hit on its CPU and slot has begun) or
  // kHoldNs after its hit, else it would be written without its stack and the stack as an
  // event of its own (run_lttng_live's flake). Events go out in the ring's order of their
  // first records (one queue for every CPU): --lttng re-emits them through LTTng-UST, which
  // stamps them when sent, so a CPU's event may not overtake an older one of another CPU.
  void flush();
  static constexpr uint64_t kHoldNs = 100'000'000;
  // Finishes the trace (the writer closes packets, streams and writes the metadata).
  bool close(std::string& why);

 private:
  enum Kind { kNone = -1, kLog = -2, kHist = -3 };
  // Where a hit ran: its CPU and context slot (0, or 1 for NMI: the top bit of the record's cpu,
  // STP_REC_CTX_SLOT1).
  struct Place {
    uint32_t cpu = 0, slot = 0;
  };
  static Place place_of(const stp_rec_ctx& x);
  struct Pending {
    bool sealed = false;  // its hit's CPU and slot have begun another event: nothing joins it
    uint64_t time_ns = 0;
    Place at;
    uint32_t probe_id = 0, pid = 0, tid = 0;
    std::string comm;
    int kind = kNone;  // a format id, kLog, kHist or kNone (a stack alone)
    std::vector<Value> values;
    bool has_u = false, has_k = false;
    std::vector<Frame> ustack, kstack;
  };
  // Where the open event of x's CPU and slot is kept (*result null: none); null for a record
  // whose CPU is not a possible one (counted, dropped). A hit's records are consecutive among those of its CPU
  // and slot: its program runs to the end there, and a nested probe on the same slot finds the
  // context busy and is skipped. A perf_event probe (slot 1, NMI) may interrupt a slot-0 hit
  // between two of its records on the same CPU, and the ring is shared, so other CPUs' records
  // may come between them too.
  Pending** open_event(const stp_rec_ctx& x);
  Pending*& open_at(Place at);  // open_'s entry for a CPU and slot
  bool same_hit(const Pending& p, const stp_rec_ctx& x) const;
  Pending& start(const stp_rec_ctx& x, Pending*& open);
  void emit_pending(Pending& p);
  enum Finished { kSealed, kSealedOrOld, kAll };
  void emit_finished(Finished which);
  struct Class {
    uint32_t id;
    std::vector<bool> is_string;  // per statement value: a string (else an integer)
  };
  const Class& class_for(const Pending& p);

  Session& s_;
  const codegen::ModuleInfo& m_;
  ctf::CtfTrace trace_;
  bool with_ustack_ = false, with_kstack_ = false;
  std::deque<Pending> queue_;     // events not written yet, in the ring's order (first records)
  std::vector<Pending*> open_;    // by CPU * 2 + slot: its event still being assembled, in queue_
  uint32_t ncpus_ = 0;            // possible CPUs (libbpf_num_possible_cpus)
  uint64_t bad_cpu_records_ = 0;  // records naming a CPU beyond them: dropped, warned at close
  const std::string no_comm_;
  const std::string* emitting_comm_ = &no_comm_;  // the comm of the event being written (only then)
  // Frame texts ("func+0xOFF/0xSIZE [module]") by what makes them, each sent to the writer
  // once (wire.h Symbol) and named by its id in every event that has the frame.
  struct FrameKey {
    uint64_t addr, offset, size;
    std::string_view name, module;  // into `owned` for stored keys
    std::shared_ptr<const std::string> owned;
    bool operator==(const FrameKey& o) const {
      return addr == o.addr && offset == o.offset && size == o.size && name == o.name && module == o.module;
    }
  };
  struct FrameKeyHash {
    size_t operator()(const FrameKey& k) const;
  };
  uint32_t symbol_of(const Frame& f);
  std::unordered_map<FrameKey, uint32_t, FrameKeyHash> symbols_;
  std::vector<uint32_t> sym_scratch_;
  std::vector<uint64_t> ua_, ka_;              // per-event scratch, kept for their capacity
  std::vector<const Frame*> uf_, kf_;
  void report_drops();
  const volatile uint64_t* drops_ = nullptr;
  uint64_t drops_reported_ = 0;
  uint64_t last_ts_ = 0;   // the time of the last event sent
  uint32_t last_cpu_ = 0;  // the CPU of the last event sent
  std::map<std::tuple<uint32_t, int, bool, bool>, Class> classes_;
  std::unique_ptr<ctf::EventOut> statedump_out_;
  std::unique_ptr<ctf::Statedump> statedump_;
};

}  // namespace loader
}  // namespace ukstap
