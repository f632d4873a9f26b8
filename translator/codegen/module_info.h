// What pass 3 tells passes 4 and 5 about the module it generated: the C text, and the tables the
// kernel side refers to by number (formats, error locations, probes, maps) so records stay small.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ast/ast.h"
#include "probes/family_point.h"

namespace ukstap::codegen {

struct ProbeInfo {
  int id = 0;               // stp_probe_<id> in the generated C
  bool native = false;      // runs in user space (module.so): begin/end/error/interval timers
  probes::FamilyPoint family;  // DerivedProbe::family: the kind and its typed fields
  // Behind the syscall dispatcher (a syscalls:sys_* tracepoint with TracepointPoint::
  // syscall_nr): the probe's place among the probes of its number; -1 when attached directly.
  int syscall_slot = -1;
  // Runs in the program of probe `program` (stp_probe_<program>) with other syscall probes of
  // the same code (codegen/shared_programs.h); -1: in its own, stp_probe_<id>.
  int program = -1;
  std::string pp;           // pp(): the concrete point
  std::string pn;           // pn(): the alias name or the point as written
  int64_t priority = 0;     // begin(N)/end(N)/error(N)
  std::string location;     // the script's probe point: "<input>:1:7"
};

struct FormatInfo {
  std::string text;  // the format string (unescaped)
  std::vector<ast::FormatComponent> components;
  std::vector<std::string> arg_names;  // per argument: its CTF field name (format_arg_names.h)
};

// Key/value layout of a map, for decoding and for messages.
struct MapInfo {
  std::string name;       // script name ("names")
  std::string bpf_name;   // "stp_map_names"
  bool stats = false;
  bool scalar = false;    // a stats scalar (key struct stp_key_unit)
  std::vector<ast::Type> key_types;
  std::vector<bool> token_keys;  // string keys that hold only ubacktrace() tokens (sized so)
  // String keys that hold symbol placeholders: user space merges the entries whose keys print
  // the same text before it reads the map (passes/symbol_key_merge.h, loader/symbol_key_merge.h).
  std::vector<bool> text_keys;
  bool text_keys_keep_one = false;  // merged by keeping one entry's value (all equal), not a sum
  ast::Type value_type = ast::Type::Long;
  int hist_kind = 0;      // 0 none, 1 log, 2 linear (STP_HIST_*)
  int64_t hist_start = 0, hist_stop = 0, hist_interval = 0;
  int hist_buckets = 0;
  int variance_shift = 0;  // @variance(NAME, shift): the precision its mean/m2 are kept at
  bool variance = true;    // some @variance reads it (else no running mean/m2 is kept)
  uint32_t key_size = 0, value_size = 0;
  int64_t max_entries = 0;
  bool wrap = false;
};

struct ModuleInfo {
  std::string source;                  // the generated C
  std::vector<ProbeInfo> probes;
  std::vector<FormatInfo> formats;     // printf formats by id
  std::vector<std::string> locations;  // error locations by id: "operator '/' at FILE:4:13"
  std::vector<MapInfo> maps;
  std::vector<MapInfo> stats;          // stats maps, by stats id (for HIST records)
  std::map<std::string, std::string> limits;  // MAXSTRINGLEN, MAXMAPENTRIES, ... as compiled
  bool has_kernel_probes = false;
  bool has_native_probes = false;
  // Some function emits user stacks or user symbols (_stp_ustack_*, _stp_usym_*): pass 5 then
  // runs the VMA tracker and the symbolizer.
  bool uses_user_stacks = false;
  // Some function emits kernel stacks or kernel symbols (_stp_kstack_*, _stp_ksym_*): pass 5
  // then reads /proc/kallsyms.
  bool uses_kernel_stacks = false;
};

}  // namespace ukstap::codegen
