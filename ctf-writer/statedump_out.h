// The statedump's events (statedump.h) into the --ctf trace (trace_writer.h): its field kinds as
// wire FieldSpecs; each event's common context is written by the trace's owner (`common`: the
// values of process `pid`, thread `tid` with `ip` as the ip context, in the trace's order).
#pragma once

#include <functional>
#include <vector>

#include "ctf-writer/statedump.h"
#include "ctf-writer/trace_writer.h"
#include "ctf-writer/wire.h"

namespace ukstap::ctf {

class TraceStatedumpOut : public EventOut {
 public:
  using CommonFn = std::function<void(Encoder&, int pid, int tid, uint64_t ip)>;
  TraceStatedumpOut(CtfTrace& trace, CommonFn common) : trace_(trace), common_(std::move(common)) {}
  uint32_t define(const std::string& name, const std::vector<FieldDef>& fields) override;
  void emit(uint32_t cls, uint64_t ts_ns, uint32_t cpu, int pid, int tid, uint64_t ip,
            const std::vector<FieldValue>& values) override;

 private:
  CtfTrace& trace_;
  CommonFn common_;
  std::vector<std::vector<FieldKind>> kinds_;  // by class id
};

}  // namespace ukstap::ctf
