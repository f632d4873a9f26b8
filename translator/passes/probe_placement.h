// Pass 2: where each derived probe's handler runs. Kernel probes become BPF programs; probes
// that nothing in the kernel fires (begin, end, error, interval timers) run in user space, in
// the native module; `never` probes run nowhere. Pass 3 compiles each handler, and the
// functions it reaches, for its side only (each side has its own abilities: regular
// expressions and sorted foreach are native-only, for instance).
#pragma once

#include <map>

#include "driver/session.h"

namespace ukstap::passes {

enum class ProbeSide { Kernel, Native, None };

// The side of one probe, from its family: the one place this is decided.
ProbeSide probe_side(const DerivedProbe& p);

struct ProbePlacement {
  std::map<const DerivedProbe*, ProbeSide> side;  // every probe of s.probes
  ProbeSide of(const DerivedProbe& p) const;
};

ProbePlacement place_probes(const Session& s);

}  // namespace ukstap::passes
