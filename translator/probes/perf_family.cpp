// perf.type(T).config(C) and the named perf.sw.* / perf.hw.* events, each with an optional
// .sample(N) or .hz(N), then .process / .process("PATH"), then .counter("NAME").
#include <sys/stat.h>

#include <string>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/internal.h"

namespace ukstap::probes {

namespace {

struct NamedEvent {
  const char* group;  // "sw" or "hw"
  const char* name;
  int type;           // PERF_TYPE_SOFTWARE = 1, PERF_TYPE_HARDWARE = 0
  int config;
};

const NamedEvent kNamed[] = {
    {"sw", "cpu_clock", 1, 0},          {"sw", "task_clock", 1, 1},
    {"sw", "page_faults", 1, 2},        {"sw", "context_switches", 1, 3},
    {"sw", "cpu_migrations", 1, 4},     {"sw", "page_faults_min", 1, 5},
    {"sw", "page_faults_maj", 1, 6},    {"sw", "alignment_faults", 1, 7},
    {"sw", "emulation_faults", 1, 8},   {"hw", "cpu_cycles", 0, 0},
    {"hw", "instructions", 0, 1},       {"hw", "cache_references", 0, 2},
    {"hw", "cache_misses", 0, 3},       {"hw", "branch_instructions", 0, 4},
    {"hw", "branch_misses", 0, 5},      {"hw", "bus_cycles", 0, 6},
    {"hw", "stalled_cycles_frontend", 0, 7}, {"hw", "stalled_cycles_backend", 0, 8},
    {"hw", "ref_cpu_cycles", 0, 9},
};

constexpr int64_t kDefaultSamplePeriod = 1000000;  // stap's default

bool have_cpu_pmu() {
  struct stat st;
  for (const char* p : {"/sys/bus/event_source/devices/cpu", "/sys/bus/event_source/devices/cpu_core",
                        "/sys/bus/event_source/devices/armv8_pmuv3_0"})
    if (stat(p, &st) == 0) return true;
  return false;
}

void build_perf(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  int64_t type = 0, config = 0;
  if (m.has("type")) {
    type = m.num("type");
    config = m.num("config");
    if (type < 0 || type > 0xffffffffLL)
      throw SemanticError("invalid perf type " + std::to_string(type), m.tok("type"));
    if (config < 0) throw SemanticError("invalid perf config " + std::to_string(config), m.tok("config"));
  } else {
    const std::string& group = m.pattern->comps[1].name;
    const std::string& name = m.pattern->comps[2].name;
    for (auto& e : kNamed)
      if (group == e.group && name == e.name) type = e.type, config = e.config;
  }
  ResolvedPoint rp;
  rp.point = make_point(s, *m.pp, concrete_components(m));
  PerfPoint perf;
  perf.type = static_cast<uint32_t>(type);
  perf.config = static_cast<uint64_t>(config);
  if (m.has("hz")) {
    int64_t hz = m.num("hz");
    if (hz <= 0) throw SemanticError("invalid perf sample frequency " + std::to_string(hz), m.tok("hz"));
    perf.freq = static_cast<uint64_t>(hz);
  } else {
    int64_t period = m.has("sample") ? m.num("sample") : kDefaultSamplePeriod;
    if (period <= 0)
      throw SemanticError("invalid perf sample period " + std::to_string(period), m.tok("sample"));
    perf.sample_period = static_cast<uint64_t>(period);
  }
  if (m.has("process")) {
    perf.per_process = true;
    perf.process_path = m.str("process", "");  // "" = the -c/-x target
  }
  if (m.has("counter")) {
    std::string c = m.str("counter");
    if (c.empty()) throw SemanticError("empty perf counter name", m.tok("counter"));
    perf.counter = c;
  }
  // Hardware events need a CPU PMU; say so now, the backend reports it if the script runs.
  if ((type == 0 || type == 3) && !have_cpu_pmu()) {
    perf.unavailable_reason =
        "hardware perf events are not supported on this machine (no CPU PMU under "
        "/sys/bus/event_source/devices); use perf.sw.cpu_clock or timer.profile instead";
  }
  rp.family = std::move(perf);
  out.push_back(std::move(rp));
}

void add_with_suffixes(std::vector<Pattern>& out, const std::vector<PatternComponent>& base) {
  const std::vector<std::vector<PatternComponent>> rate = {
      {}, {{"sample", ArgKind::Number}}, {{"hz", ArgKind::Number}}};
  const std::vector<std::vector<PatternComponent>> proc = {
      {}, {{"process", ArgKind::None}}, {{"process", ArgKind::String}}};
  const std::vector<std::vector<PatternComponent>> counter = {{}, {{"counter", ArgKind::String}}};
  for (auto& r : rate)
    for (auto& p : proc)
      for (auto& c : counter) {
        Pattern pat;
        pat.comps = base;
        pat.comps.insert(pat.comps.end(), r.begin(), r.end());
        pat.comps.insert(pat.comps.end(), p.begin(), p.end());
        pat.comps.insert(pat.comps.end(), c.begin(), c.end());
        pat.build = build_perf;
        out.push_back(std::move(pat));
      }
}

}  // namespace

void add_perf_patterns(std::vector<Pattern>& out) {
  add_with_suffixes(out, {{"perf", ArgKind::None}, {"type", ArgKind::Number}, {"config", ArgKind::Number}});
  for (auto& e : kNamed)
    add_with_suffixes(out, {{"perf", ArgKind::None}, {e.group, ArgKind::None}, {e.name, ArgKind::None}});
}

}  // namespace ukstap::probes
