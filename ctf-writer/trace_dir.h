// `--ctf=DIR`: may ukstap write a trace there? Checked before anything is compiled or attached.
//  - DIR absent: made (0755; its parent must exist).
//  - DIR a symbolic link, or anything but a directory: refused (a planted link is never followed).
//  - DIR a directory owned by someone else than root or the effective user, or writable by group
//    or others: refused (they could plant links among the trace's files while it is written; the
//    rule of loader/owned_files.h).
//  - DIR an empty directory: used; the trace goes to DIR/ukstap/ (sink.ctf.fs makes its
//    directory itself, inside DIR, where nobody else can write). DIR holding only a previous
//    ukstap trace (DIR/ukstap/ whose "metadata" names ukstap as the tracer): its files are
//    removed first (unlinked, never followed). Anything else in DIR: refused (someone's data,
//    or another tracer's trace). `babeltrace2 DIR` finds the trace below DIR, as in LTTng's
//    DIR/ust/uid/0/64-bit/ layout.
#pragma once

#include <string>

namespace ukstap::ctf {

// True when DIR is ready for a new trace; false with `why` (one line naming DIR).
bool prepare_trace_dir(const std::string& dir, std::string& why);

// True when `metadata_text` (a CTF trace's metadata file) was written by ukstap's writer.
bool is_ukstap_metadata(const std::string& metadata_text);

// The trace's directory in DIR (also the trace's name).
inline constexpr const char* kTraceSubdir = "ukstap";

// The environment entry that marks a ukstap trace (trace_writer.cpp writes it): producer =
// "ukstap" (tracer_name = "ukstap" in traces of ukstap before it declared LTTng-UST's layout).
inline constexpr const char* kTracerName = "ukstap";
inline constexpr const char* kProducerKey = "producer";

}  // namespace ukstap::ctf
