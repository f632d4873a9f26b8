// The writer process's libbabeltrace2 source component class: its message iterator reads the
// wire messages (wire.h) from a descriptor and makes them trace-IR objects and messages, which
// graph.h's graph hands to sink.ctf.fs. One stream per CPU (LTTng's layout: packet context
// cpu_id), packets closed every kPacketEvents events, after kPacketSeconds, when the input idles
// for kIdleMs, and when it ends (EOF: ukstap exited, or was killed).
//
// Event classes are made when their Class message arrives, at any time: a stream class takes new
// event classes after its first stream began (sink.ctf.fs writes the metadata at the end). So a
// new kind of event (the script's, or LTTng-UST-style statedump events: bin_info, build_id,
// debug_link) needs nothing here: ukstap defines it through CtfTrace::define_class() and emits
// it through CtfTrace::emit() (trace_writer.h) like any other.
#pragma once

#include <babeltrace2/babeltrace.h>

namespace ukstap::ctf {

constexpr int kPacketEvents = 4096;
constexpr int kPacketSeconds = 1;
constexpr int kIdleMs = 500;

// The component class "ukstap" (its initialize method data: a `const int*`, the fd to read).
bt_component_class_source* make_source_class();

}  // namespace ukstap::ctf
