// pprof output (profile.h): the profile as perftools.profiles.Profile (proto/profile.proto,
// compiled by protoc at build time), serialized by libprotobuf and gzipped with zlib.
//
// Locations are per (module, address): ASLR gives each process its own addresses, so the same
// function in two processes is two locations of one Function. Mappings are per module file
// (pprof wants an address range per mapping: the range its locations span). Kernel frames
// belong to a "[kernel.kallsyms]" mapping as perf names it, and their function's file is
// "kernel" (or the kernel module's name): names carry no folded-stack "_[k]" suffix.
#include <zlib.h>

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "loader/profile.h"
#include "profile.pb.h"

namespace ukstap::profile {

namespace {

class Strings {
 public:
  explicit Strings(perftools::profiles::Profile& p) : p_(p) { id(""); }
  int64_t id(const std::string& s) {
    auto [it, added] = ids_.try_emplace(s, static_cast<int64_t>(ids_.size()));
    if (added) p_.add_string_table(s);
    return it->second;
  }

 private:
  perftools::profiles::Profile& p_;
  std::unordered_map<std::string, int64_t> ids_;
};

bool gzip(const std::string& in, std::string& out) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  out.resize(deflateBound(&z, in.size()) + 64);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END;
}

}  // namespace

bool to_pprof(const Profile& prof, std::string& out, std::string& why) {
  perftools::profiles::Profile p;
  Strings str(p);
  auto* st = p.add_sample_type();
  st->set_type(str.id("samples"));
  st->set_unit(str.id("count"));
  st = p.add_sample_type();
  st->set_type(str.id("cpu"));
  st->set_unit(str.id("nanoseconds"));
  int64_t period = prof.hz > 0 ? 1000000000LL / prof.hz : 0;
  p.mutable_period_type()->set_type(str.id("cpu"));
  p.mutable_period_type()->set_unit(str.id("nanoseconds"));
  p.set_period(period);
  p.set_time_nanos(prof.start_ns);
  p.set_duration_nanos(prof.duration_ns);
  p.add_comment(str.id(prof.title));

  // Mappings: one per module, spanning the addresses seen in it.
  struct Span { uint64_t lo = UINT64_MAX, hi = 0, id = 0; };
  std::map<std::string, Span> maps;
  auto module_of = [](const Frame& f) { return f.kernel ? std::string("[kernel.kallsyms]") : f.module; };
  for (const Sample& s : prof.samples)
    for (const Frame& f : s.frames) {
      Span& m = maps[module_of(f)];
      m.lo = std::min(m.lo, f.addr);
      m.hi = std::max(m.hi, f.addr + 1);
    }
  for (auto& [name, m] : maps) {
    auto* mp = p.add_mapping();
    m.id = static_cast<uint64_t>(p.mapping_size());
    mp->set_id(m.id);
    mp->set_memory_start(m.lo);
    mp->set_memory_limit(m.hi);
    mp->set_filename(str.id(name.empty() ? "[unknown]" : name));
    mp->set_has_functions(true);
  }

  // Functions by (name, file): a kernel function and a user one of the same name stay two.
  std::map<std::pair<std::string, std::string>, uint64_t> functions;  // -> id
  std::map<std::pair<std::string, uint64_t>, uint64_t> locations;     // (module, addr) -> id
  auto function_id = [&](const Frame& f) {
    std::string label = frame_name(f);
    auto [it, added] = functions.try_emplace({label, f.module}, functions.size() + 1);
    if (added) {
      auto* fn = p.add_function();
      fn->set_id(it->second);
      fn->set_name(str.id(label));
      fn->set_system_name(str.id(f.name.empty() ? label : f.name));
      fn->set_filename(str.id(f.module));
    }
    return it->second;
  };
  auto location_id = [&](const Frame& f) {
    auto key = std::make_pair(module_of(f), f.addr);
    auto [it, added] = locations.try_emplace(key, static_cast<uint64_t>(p.location_size()) + 1);
    if (added) {
      auto* loc = p.add_location();
      loc->set_id(it->second);
      loc->set_mapping_id(maps[key.first].id);
      loc->set_address(f.addr);
      loc->add_line()->set_function_id(function_id(f));
    }
    return it->second;
  };
  // The process name as the outermost frame, as in the folded and SVG outputs; plus pid and
  // comm as labels. A name has no address: its location is keyed by the name (keyed by
  // (module, 0) every process took the first sample's name, e.g. the -c child's "ukstap"
  // before its exec).
  std::map<std::string, uint64_t> process_locations;  // name -> location id
  auto process_location_id = [&](const std::string& comm) {
    Frame proc;
    proc.name = comm.empty() ? "[unknown]" : comm;
    proc.module = "[process]";
    auto [it, added] = process_locations.try_emplace(proc.name, static_cast<uint64_t>(p.location_size()) + 1);
    if (added) {
      auto* loc = p.add_location();
      loc->set_id(it->second);
      loc->add_line()->set_function_id(function_id(proc));
    }
    return it->second;
  };
  for (const Sample& s : prof.samples) {
    auto* ps = p.add_sample();
    for (const Frame& f : s.frames) ps->add_location_id(location_id(f));
    ps->add_location_id(process_location_id(s.comm));
    ps->add_value(static_cast<int64_t>(s.count));
    ps->add_value(static_cast<int64_t>(s.count) * period);
    auto* l = ps->add_label();
    l->set_key(str.id("pid"));
    l->set_num(s.pid);
    l = ps->add_label();
    l->set_key(str.id("comm"));
    l->set_str(str.id(s.comm));
  }

  std::string raw;
  if (!p.SerializeToString(&raw)) {
    why = "cannot encode the pprof profile";
    return false;
  }
  if (!gzip(raw, out)) {
    why = "cannot compress the pprof profile";
    return false;
  }
  return true;
}

}  // namespace ukstap::profile
