// Pass 2: the tracefs format of each tracepoint probe's event (field names, offsets, sizes),
// looked up once here -- resolution already read it -- so pass 3 never queries tracefs.
#pragma once

#include <map>

#include "driver/session.h"
#include "probes/tracefs.h"

namespace ukstap::passes {

struct TracepointFormats {
  // Owned by the session's probe cache (s.probe_cache), which lives as long as the session.
  std::map<const DerivedProbe*, const probes::TraceEvent*> events;
  const probes::TraceEvent* of(const DerivedProbe& p) const;  // null: none (or unreadable)
};

TracepointFormats read_tracepoint_formats(Session& s);

}  // namespace ukstap::passes
