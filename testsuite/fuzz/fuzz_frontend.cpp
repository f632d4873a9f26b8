// libFuzzer target for the front end: the input is a script given as with -e; it is parsed
// (pass 1, which also parses the tapsets) and, when that succeeds, elaborated (pass 2).
// All diagnostics and outputs are discarded; only crashes, sanitizer reports, hangs and
// runaway memory count.
//
//   make fuzz && testsuite/fuzz/fuzz_frontend -max_len=4096 corpus-dir...
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <streambuf>
#include <string>

#include "driver/diagnostics.h"
#include "driver/passes.h"
#include "driver/session.h"

namespace {

class NullBuf : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static NullBuf buf;
  static std::ostream null_out(&buf);

  ukstap::Session s(null_out);
  s.opts.have_script_text = true;
  s.opts.script_text.assign(reinterpret_cast<const char*>(data), size);
  s.opts.last_pass = 2;
  try {
    if (ukstap::pass1_parse(s) == 0 && s.diag.parse_errors() == 0) {
      ukstap::print_pass1(s, null_out);
      if (ukstap::pass2_elaborate(s) == 0 && s.diag.semantic_errors() == 0)
        ukstap::print_pass2(s, null_out);
    }
  } catch (const ukstap::ParseError&) {
    // Passes should report through s.diag rather than throw, but escaping user errors are
    // not crashes; anything else (std::logic_error, bad_alloc, ...) propagates and is reported.
  } catch (const ukstap::SemanticError&) {
  }
  return 0;
}
