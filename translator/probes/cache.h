// The per-session cache of translator/probes/ (Session::probe_cache).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "probes/elf_symbols.h"
#include "probes/tracefs.h"

namespace ukstap::probes {

struct Cache {
  std::unique_ptr<Tracefs> tracefs;  // null until first needed
  std::string tracefs_error;         // why it is unavailable, once tried
  bool tracefs_tried = false;
  std::map<std::string, std::shared_ptr<const ElfInfo>> elfs;  // by canonical path
};

}  // namespace ukstap::probes
