// --ctf/--lttng's event assembly (loader/ctf_output.h) fed records as Output hands them over, in
// ring order, with the writer replaced by `cat` of the wire stream into a file: the events
// written, in the order they were sent, are decoded with the wire format (ctf-writer/wire.h).
// Truth: the order and grouping of the records fed (a hit's statement and stacks are one
// event; events go out in the order their first records came).
#include "test_util.h"
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <time.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/module_info.h"
#include "common/stp_records.h"
#include "ctf-writer/wire.h"
#include "driver/session.h"
#include "loader/ctf_output.h"

using ukstap::test::TempDir;
using namespace ukstap;

namespace {

struct Written {
  std::string msg;  // the log() text
  uint32_t cpu = 0, tid = 0;
  bool has_user_stack = false;
  size_t user_frames = 0;
};

uint64_t mono_now() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

stp_rec_ctx ctx(uint32_t cpu, uint64_t t, uint32_t tid, uint32_t probe) {
  stp_rec_ctx x{};
  x.time_ns = t;
  x.cpu = cpu;
  x.probe_id = probe;
  x.pid = tid;
  x.tid = tid;
  std::snprintf(x.comm, sizeof x.comm, "t%u", tid);
  return x;
}

std::vector<loader::Frame> frames(int n) {
  std::vector<loader::Frame> fs(n);
  for (int i = 0; i < n; ++i) fs[i].addr = 0x1000 + i, fs[i].name = "f" + std::to_string(i), fs[i].module = "m";
  return fs;
}

// A CtfOutput whose writer is `cat` into t/wire; events() decodes what it received.
struct Harness {
  TempDir t{"ctfout"};
  std::ostringstream err;
  Session s{err};
  codegen::ModuleInfo m;
  std::unique_ptr<loader::CtfOutput> out;

  Harness() {
    m.uses_user_stacks = true;
    out = std::make_unique<loader::CtfOutput>(s, m);
    std::string w = t.write("writer", "#!/bin/sh\nexec cat <&3 >'" + (t / "wire") + "'\n");
    ::chmod(w.c_str(), 0755);
    std::string why;
    REQUIRE(out->trace().open_exe(w, "the test's writer", {}, why));
    REQUIRE(out->open(t / "unused", why));
  }

  std::vector<Written> close_and_read() {
    std::string why;
    REQUIRE(out->close(why));
    std::ifstream f(t / "wire", std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string bytes = ss.str();
    ctf::MessageReader r;
    r.append(bytes.data(), bytes.size());
    std::map<uint32_t, std::vector<std::string>> fields;  // class id -> payload field names
    std::vector<Written> ev;
    ctf::Decoder d{nullptr, 0};
    while (r.next(d)) {
      auto kind = (ctf::Kind)d.u8();
      if (kind == ctf::Kind::Class) {
        uint32_t id = d.u32();
        d.str();
        uint32_t n = d.u32();
        for (uint32_t i = 0; i < n; ++i) {
          d.u8(), d.u8(), d.u8(), d.u8();
          fields[id].push_back(d.str());
        }
      } else if (kind == ctf::Kind::Event) {
        Written w;
        uint32_t cls = d.u32();
        d.u64();  // time
        w.cpu = d.u32();
        d.u64();  // vpid
        w.tid = (uint32_t)d.u64();
        d.str();  // procname
        d.u64();  // ip
        uint32_t n = d.u32();  // callstack_user
        for (uint32_t i = 0; i < n; ++i) d.u64();
        for (const std::string& f : fields[cls]) {
          if (f == "msg") w.msg = d.str();
          if (f == "callstack_user_symbols") {
            w.has_user_stack = true;
            w.user_frames = d.u32();
            for (size_t i = 0; i < w.user_frames; ++i) d.u32();
          }
        }
        REQUIRE(d.ok);
        ev.push_back(w);
      }
    }
    return ev;
  }
};

}  // namespace

TEST_CASE("CtfOutput: events go out in the order of their first records, whatever the CPU", "[ctf]") {
  // A on cpu0, B and C on cpu1, D on cpu0 (the review's interleaving): C's start seals B, but
  // A (older) is still open; D seals A. --lttng stamps events when sent: B before A would
  // reorder them (the old per-CPU rule wrote B, A, C, D).
  Harness h;
  const uint64_t t = mono_now();
  h.out->log(ctx(0, t, 100, 1), "A");
  h.out->log(ctx(1, t + 10, 200, 1), "B");
  h.out->log(ctx(1, t + 20, 201, 1), "C");
  h.out->flush();  // a drain here: A is young and open, so nothing may overtake it
  h.out->stack(ctx(0, t, 100, 1), false, frames(3));  // A's stack, after the drain
  h.out->log(ctx(0, t + 30, 101, 1), "D");
  auto ev = h.close_and_read();
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].msg == "A");
  CHECK(ev[0].has_user_stack);
  CHECK(ev[0].user_frames == 3);
  CHECK(ev[1].msg == "B");
  CHECK(ev[2].msg == "C");
  CHECK(ev[3].msg == "D");
  CHECK(ev[1].cpu == 1);
  CHECK(ev[3].cpu == 0);
}

TEST_CASE("CtfOutput: a slot-1 (NMI) hit between a hit's statement and its stack splits nothing", "[ctf]") {
  // A perf_event probe's records carry STP_REC_CTX_SLOT1 in cpu (bpf/stp_bpf_output.h); it may
  // interrupt a slot-0 hit on the same CPU between two of its records.
  Harness h;
  const uint64_t t = mono_now();
  h.out->log(ctx(0, t, 100, 1), "A");
  h.out->log(ctx(0 | STP_REC_CTX_SLOT1, t + 5, 100, 2), "N");
  h.out->stack(ctx(0 | STP_REC_CTX_SLOT1, t + 5, 100, 2), false, frames(1));
  h.out->stack(ctx(0, t, 100, 1), false, frames(2));
  h.out->log(ctx(0, t + 10, 100, 1), "B");
  auto ev = h.close_and_read();
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].msg == "A");
  CHECK(ev[0].user_frames == 2);
  CHECK(ev[1].msg == "N");
  CHECK(ev[1].user_frames == 1);
  CHECK(ev[1].cpu == 0);  // the slot bit is not a CPU
  CHECK(ev[2].msg == "B");
  CHECK(!ev[2].has_user_stack);
}

TEST_CASE("CtfOutput: a record naming an impossible CPU is left out, counted in one warning", "[ctf]") {
  Harness h;
  const uint64_t t = mono_now();
  h.out->log(ctx(0, t, 100, 1), "A");
  h.out->log(ctx(1u << 24, t, 100, 1), "X");
  auto ev = h.close_and_read();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].msg == "A");
  CHECK(h.err.str().find("1 record(s) named a CPU beyond the") != std::string::npos);
}
