// `ukstap --lttng`'s writer process (README.md): reads the events ukstap's CTF path encodes
// (ctf-writer/wire.h) from fd 3 and emits each as one ukstap:event LTTng-UST tracepoint
// (ukstap_tp.h), which the LTTng sessions that enabled it record: local, --live through
// lttng-relayd, snapshot. A process of its own, started by ukstap (ctf-writer/trace_writer.h
// open_exe), so that liblttng-ust (its constructor registers with the session daemons and starts
// threads) is never loaded into ukstap itself, and so that ^C and kill -9 of ukstap end it
// through the socket's EOF after the last event.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "ctf-writer/wire.h"
#include "lttng-writer/event_text.h"
#include "lttng-writer/ust_emit.h"

using namespace ukstap::ctf;
using ukstap::lttng::EventValues;

namespace {

struct ClassDef {
  std::string name;
  std::vector<FieldSpec> fields;
};

struct Writer {
  std::vector<FieldSpec> common;
  std::vector<ClassDef> classes;
  std::vector<std::string> symbols;  // Symbol messages' texts, by id
  uint64_t events = 0, unrecorded = 0, bad = 0, discarded = 0;
  bool warned = false;

  void on_event(Decoder& d) {
    uint32_t id = d.u32();
    EventValues v;
    v.hit_ns = d.u64();
    v.cpu = d.u32();
    if (!d.ok || id >= classes.size()) {
      ++bad;
      return;
    }
    const ClassDef& c = classes[id];
    v.name = c.name;
    v.symbols = &symbols;
    for (const FieldSpec& f : common) v.read(d, f, /*common=*/true);
    for (const FieldSpec& f : c.fields) v.read(d, f, /*common=*/false);
    if (!d.ok) {
      ++bad;
      return;
    }
    ++events;
    if (!ukstap_lttng_enabled()) {
      // No session has ukstap:event enabled: say so once now and count what is not recorded.
      if (!warned)
        std::fprintf(stderr,
                     "ukstap: --lttng: no LTTng session has ukstap:event enabled: events are not recorded "
                     "(lttng enable-event --userspace 'ukstap:*')\n");
      warned = true;
      ++unrecorded;
      return;
    }
    struct ukstap_lttng_event e = v.to_event();
    ukstap_lttng_emit(&e);
  }

  void on_message(Decoder& d) {
    switch (static_cast<Kind>(d.u8())) {
      case Kind::Init: {
        d.u64();  // the clock offset: LTTng's clock is its own (CLOCK_MONOTONIC, like hit_ns)
        d.str();
        uint32_t nenv = d.u32();
        for (uint32_t i = 0; i < nenv && d.ok; ++i) d.str(), d.str();
        uint32_t nc = d.u32();
        for (uint32_t i = 0; i < nc && d.ok; ++i) common.push_back(d.spec());
        break;
      }
      case Kind::Class: {
        uint32_t id = d.u32();
        ClassDef c;
        c.name = d.str();
        uint32_t nf = d.u32();
        for (uint32_t i = 0; i < nf && d.ok; ++i) c.fields.push_back(d.spec());
        if (d.ok && id == classes.size()) classes.push_back(std::move(c));
        else ++bad;
        break;
      }
      case Kind::Event: on_event(d); break;
      case Kind::Symbol: {
        uint32_t id = d.u32();
        std::string text = d.str();
        if (d.ok && id == symbols.size()) symbols.push_back(std::move(text));
        else ++bad;
        break;
      }
      case Kind::Discarded: {
        // LTTng-UST gives an application no way to add to a channel's discarded-events count:
        // the loss is said on stderr at the end (ukstap also reports its dropped records).
        d.u32();
        d.u64();
        uint64_t n = d.u64();
        if (d.ok) discarded += n;
        else ++bad;
        break;
      }
      default: ++bad;
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  (void)argv;
  // ^C and SIGTERM reach ukstap's process group: this process ends on EOF only, after ukstap has
  // sent its last event.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::prctl(PR_SET_NAME, "ukstap-lttng");
  Writer w;
  MessageReader in;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(3, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(chunk, static_cast<size_t>(n));
    for (Decoder d{nullptr, 0}; in.next(d);) w.on_message(d);
    in.compact();
  }
  if (w.unrecorded)
    std::fprintf(stderr, "ukstap: --lttng: %" PRIu64 " of %" PRIu64 " events were not recorded: no LTTng session had ukstap:event enabled\n",
                 w.unrecorded, w.events);
  if (w.discarded)
    std::fprintf(stderr, "ukstap: --lttng: %" PRIu64 " ring-buffer records were lost before reaching the LTTng trace\n",
                 w.discarded);
  if (w.bad) {
    std::fprintf(stderr, "ukstap: --lttng: %" PRIu64 " malformed messages from ukstap were dropped\n", w.bad);
    return 1;
  }
  return 0;
}
