// What `ukstap --profile` wrote, told to the person at the terminal when it finishes (as perf
// record and perf report do): the samples, the file and format, and the functions that were
// running in most samples. A few lines for stderr; printed when stderr is a terminal, as the
// "sampling at ... Hz" line before it (a script that runs --profile reads the file instead).
#pragma once

#include <string>

#include "loader/profile.h"

namespace ukstap::profile {

// The summary of `p` written as `format` to `dest` ("" or "-": standard output), `seconds` of
// sampling; at most `top` functions, by self samples (the leaf frame of a sample: where it was
// running), each with its share of all samples.
std::string summary(const Profile& p, const std::string& format, const std::string& dest,
                    double seconds, size_t top = 5);

}  // namespace ukstap::profile
