// ukstap's side of `--ctf=DIR`: starts the CTF writer process and sends it the trace's
// description, event classes and events (wire.h). The process (ukstap itself, re-executed as
// "ukstap-ctf-writer DIR" with the socket on fd 3: writer_main.h) owns the libbabeltrace2 graph,
// so the trace is finished (packets and streams closed, metadata written) when ukstap exits in
// any way, kill -9 included: the socket's EOF is the writer's signal to finish.
//
// Adding an event kind (the hook for statedump events: lttng_ust_statedump:bin_info,
// build_id, debug_link, ...): define_class() it once with its fields (wire.h FieldSpec: the
// LTTng names and types), then for each event begin_event(), encode the common-context values
// (the ones init() declared, in order) and the class's field values, end_event(). Events may come
// in any order among the script's; each stream (cpu) keeps its timestamps non-decreasing.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctf-writer/wire.h"

namespace ukstap::ctf {

class CtfTrace {
 public:
  CtfTrace() = default;
  CtfTrace(const CtfTrace&) = delete;
  CtfTrace& operator=(const CtfTrace&) = delete;
  ~CtfTrace();

  // Checks DIR (trace_dir.h) and starts the writer process; false with `why` (one line).
  bool open(const std::string& dir, std::string& why);
  // `ukstap --lttng` (lttng-writer/README.md): starts the program `exe` as the writer instead
  // (same socket on fd 3, same protocol), with `env` ("NAME=value") added to ukstap's
  // environment; `who` names it in messages.
  bool open_exe(const std::string& exe, const std::string& who, const std::vector<std::string>& env,
                std::string& why);
  bool is_open() const { return fd_ >= 0; }
  // ukstap's "a stop signal arrived" (loader/interrupt.h interrupted()): a send the writer does not
  // take (stopped, or DIR on hung storage) is given up kStopGraceMs after it turns true, so ^C
  // still ends ukstap and detaches its probes.
  void set_stop_check(bool (*stop_requested)()) { stop_requested_ = stop_requested; }
  const std::string& dir() const { return dir_; }

  // Once, before any class: the clock (CLOCK_MONOTONIC ns; `realtime_offset_ns` = CLOCK_REALTIME
  // - CLOCK_MONOTONIC), the trace environment (tracer_name=ukstap is added) and the fields of
  // the stream's event common context.
  void init(uint64_t realtime_offset_ns, std::vector<std::pair<std::string, std::string>> env,
            const std::vector<FieldSpec>& common);
  // A new event class; its id (dense, from 0).
  uint32_t define_class(const std::string& name, const std::vector<FieldSpec>& fields);
  // A string for SymbolSeq values; its id (dense, from 0). Not between begin_event() and
  // end_event(): it is a message of its own.
  uint32_t define_symbol(std::string_view text);
  // One event: values are appended to the returned encoder (u64 for integers, str, sequences:
  // u32 n then the elements), then end_event().
  Encoder& begin_event(uint32_t class_id, uint64_t ts_ns, uint32_t cpu);
  void end_event();
  // `count` events lost before `ts_ns`, reported in cpu's stream (wire.h Discarded). Not
  // between begin_event() and end_event().
  void discarded(uint32_t cpu, uint64_t ts_ns, uint64_t count);
  // Sends what is buffered (also done every 64 KiB).
  void flush();
  // EOF to the writer, then waits until it has finished the trace, at most kFinishSeconds: a
  // writer still running then is SIGKILLed (the trace may be incomplete). False with `why` when
  // the writer failed, was killed or a send failed.
  bool close(std::string& why);

  uint64_t events = 0;      // events sent
  uint64_t bytes_sent = 0;  // wire bytes sent
  int send_errno = 0;       // first failed send (the writer died or was stuck): later events are dropped

  static constexpr int kStopGraceMs = 2000;
  static constexpr int kSocketBytes = 8 << 20;  // the socket's send buffer
  static constexpr int kFinishSeconds = 5;

 private:
  void begin_message(Kind kind);
  void end_message();
  bool start(const std::string& exe, const std::vector<std::string>& args, const std::vector<std::string>& env,
             std::string& why);
  int fd_ = -1;
  std::string who_;  // the writer, in messages
  pid_t pid_ = -1;
  std::string dir_;
  Encoder enc_;
  size_t msg_start_ = 0;
  uint32_t classes_ = 0;
  uint32_t symbols_ = 0;
  bool (*stop_requested_)() = nullptr;
};

}  // namespace ukstap::ctf
