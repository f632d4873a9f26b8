// FamilyPoint's questions that the kind table and the families' fields answer (family_point.h).
#include "probes/family_point.h"

namespace ukstap::probes {

namespace {
const std::string kNoString;
}  // namespace

bool FamilyPoint::native() const {
  switch (kind_info(kind()).side) {
    case Side::Native: return true;
    case Side::Kernel: return false;
    case Side::PerPoint: break;
  }
  const TimerPoint* t = get<TimerPoint>();
  return t && t->kind != TimerPoint::Kind::Profile;
}

int64_t FamilyPoint::priority() const {
  if (auto* b = get<BeginPoint>()) return b->priority;
  if (auto* e = get<EndPoint>()) return e->priority;
  if (auto* e = get<ErrorPoint>()) return e->priority;
  return 0;
}

const std::string& FamilyPoint::binary_path() const {
  if (auto* p = get<ProcessPoint>()) return p->path;
  if (auto* u = get<UprobePoint>()) return u->path;
  return kNoString;
}

const std::string& FamilyPoint::function() const {
  if (auto* u = get<UprobePoint>()) return u->symbol;
  if (auto* k = get<KernelFunctionPoint>()) return k->function;
  return kNoString;
}

const std::string& FamilyPoint::unavailable_reason() const {
  if (auto* p = get<PerfPoint>()) return p->unavailable_reason;
  if (auto* k = get<KernelFunctionPoint>()) return k->unavailable_reason;
  return kNoString;
}

}  // namespace ukstap::probes
