// The command-line parser run on a list of arguments, as the unit tests of options use it.
#pragma once

#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "driver/options.h"
#include "driver/session.h"

namespace ukstap::test {

struct ParsedArgs {
  Options opts;
  CommandLine cl;
  std::string err;  // what the parser wrote to its error stream
};

// parse_command_line on "ukstap" followed by `args`.
inline ParsedArgs parse_args(std::initializer_list<const char*> args) {
  std::vector<std::string> storage{"ukstap"};
  for (const char* a : args) storage.emplace_back(a);
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  ParsedArgs p;
  std::ostringstream err;
  p.cl = parse_command_line(static_cast<int>(storage.size()), argv.data(), p.opts, err);
  p.err = err.str();
  return p;
}

}  // namespace ukstap::test
