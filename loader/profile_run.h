// `ukstap --profile`'s pass 5 (driver/profile_mode.h): runs the sampling script with its samples
// collected as structs from the records (Output::collect_samples: no text in between), then
// writes them as a profile (profile.h) in the chosen format.
#pragma once

#include <string>

#include "driver/session.h"
#include "loader/profile.h"

namespace ukstap::loader {

// Pass 5 of the sampling script (passes 1-4 done), then the profile written to `dest` ("" or
// "-": standard output) as `format` (folded, svg or pprof). Returns the exit status; a failure
// has been reported (pass 5's own messages, or one "ukstap:" line).
int run_profile(Session& s, const std::string& format, const std::string& dest);

// Writes `p` to `dest` ("" or "-": standard output) as `format`. False with a one-line `why`.
bool write_profile(const profile::Profile& p, const std::string& format, const std::string& dest,
                   std::string& why);

}  // namespace ukstap::loader
