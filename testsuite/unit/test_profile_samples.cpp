// --profile's samples as structs: the records of one sample (the sampling script's header
// printf, then print_backtrace()'s KSTACK record) decoded by loader/Output into Samples and
// Frames (loader/stack_frame.h), with no text in between, and the frames equal to what the
// same records print as text. Truth: a synthetic kallsyms file and the answers written here by
// hand (a symbol's offset and its size to the next symbol, as /proc/kallsyms gives them).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/module_info.h"
#include "common/stp_records.h"
#include "driver/profile_mode.h"
#include "driver/session.h"
#include "loader/kstack_output.h"
#include "loader/ksym.h"
#include "loader/output.h"
#include "loader/profile.h"
#include "parse/parser.h"

using namespace ukstap;

namespace {

const char* kSyms =
    "ffffffff81000000 T entry_SYSCALL_64\n"
    "ffffffff81000100 T do_syscall_64\n"
    "ffffffff81000200 T ksys_read\n"
    "ffffffffc0001000 t xfs_file_read_iter\t[xfs]\n"
    "ffffffffc0002000 t xfs_last\t[xfs]\n";

// Records as the BPF side writes them (common/stp_records.h).
class Records {
 public:
  void header(uint16_t fmt, int64_t pid, int64_t tid, const std::string& comm) {
    std::vector<unsigned char> p;
    put(p, &pid, 8);
    put(p, &tid, 8);
    uint32_t n = (uint32_t)comm.size();
    put(p, &n, 4);
    put(p, comm.data(), comm.size());
    p.resize(16 + STP_REC_STR_SIZE(n), 0);
    rec(STP_REC_PRINTF, fmt, p);
  }
  void kstack(const std::vector<uint64_t>& pcs) {
    stp_ustack u{};
    u.kind = pcs.empty() ? STP_USTACK_NO_USER : STP_USTACK_PCS;
    u.nr = (uint16_t)pcs.size();
    u.exact = u.nr;
    std::vector<unsigned char> p;
    put(p, &u, sizeof u);
    if (!pcs.empty()) put(p, pcs.data(), pcs.size() * 8);
    p.resize((p.size() + 7) / 8 * 8, 0);
    rec(STP_REC_KSTACK, _STP_SYM_FULL, p);
  }
  const std::vector<unsigned char>& bytes() const { return b_; }

 private:
  static void put(std::vector<unsigned char>& v, const void* p, size_t n) {
    auto* c = static_cast<const unsigned char*>(p);
    v.insert(v.end(), c, c + n);
  }
  void rec(uint16_t type, uint16_t id, const std::vector<unsigned char>& payload) {
    stp_rec_hdr h{type, id, (uint32_t)payload.size()};
    put(b_, &h, sizeof h);
    put(b_, payload.data(), payload.size());
  }
  std::vector<unsigned char> b_;
};

codegen::ModuleInfo module_with_header() {
  codegen::ModuleInfo m;
  codegen::FormatInfo other;
  other.text = "x=%d\n";
  other.components = parse::parse_format(other.text);
  m.formats.push_back(other);
  codegen::FormatInfo h;
  h.text = std::string(profile_mode::kSampleTag) + "%d %d %s\n";
  h.components = parse::parse_format(h.text);
  m.formats.push_back(h);
  return m;
}

}  // namespace

TEST_CASE("profile samples: records become Samples and Frames, as the text names them", "[profile_samples]") {
  std::ostringstream err;
  Session s(err);
  codegen::ModuleInfo m = module_with_header();
  ksym::Kallsyms k;
  k.parse(kSyms);

  Records r;
  r.kstack({0xffffffff81000110});  // before any header: no sample to belong to
  r.header(1, 123, 124, "sort worker");
  // a leaf, a return address right after a call that ends do_syscall_64 (named after the byte
  // before it), an address no symbol covers, a module's function
  r.kstack({0xffffffffc0001010, 0xffffffff81000200, 0xffffffff80000000, 0xffffffff81000005});
  r.header(1, 7, 8, "idle");
  r.kstack({});  // a user-mode sample: no kernel stack

  std::vector<loader::Sample> samples;
  {
    loader::KernelStacks ks(k);
    loader::Output out(s, m);
    out.set_kernel_stacks(&ks);
    out.collect_samples(&samples);
    std::string why;
    REQUIRE(out.open("", why));
    CHECK(out.fd() == -1);  // nothing is printed, not even to standard output
    out.record(r.bytes().data(), r.bytes().size());
    CHECK(out.malformed == 0);
  }
  REQUIRE(samples.size() == 2);
  const loader::Sample& a = samples[0];
  CHECK(a.pid == 123);
  CHECK(a.tid == 124);
  CHECK(a.comm == "sort worker");
  REQUIRE(a.frames.size() == 4);
  CHECK(a.frames[0].addr == 0xffffffffc0001010ull);
  CHECK(a.frames[0].name == "xfs_file_read_iter");
  CHECK(a.frames[0].module == "xfs");
  CHECK(a.frames[0].offset == 0x10);
  CHECK(a.frames[0].size == 0x1000);
  CHECK(a.frames[1].name == "do_syscall_64");
  CHECK(a.frames[1].module == "kernel");
  CHECK(a.frames[1].offset == 0x100);
  CHECK(a.frames[1].size == 0x100);
  CHECK(a.frames[2].name.empty());
  CHECK(a.frames[2].module.empty());
  CHECK(a.frames[3].name == "entry_SYSCALL_64");
  for (const auto& f : a.frames) {
    CHECK(f.kernel);
    CHECK_FALSE(f.inexact);
  }
  CHECK(samples[1].comm == "idle");
  CHECK(samples[1].frames.empty());

  // The same records as text: the frame lines name what the Frames hold.
  std::string text;
  {
    loader::KernelStacks ks(k);
    stp_ustack u{};
    u.kind = STP_USTACK_PCS;
    std::vector<uint64_t> pcs = {0xffffffffc0001010, 0xffffffff81000200, 0xffffffff80000000,
                                 0xffffffff81000005};
    u.nr = u.exact = (uint16_t)pcs.size();
    text = ks.record(_STP_SYM_FULL, u, reinterpret_cast<const unsigned char*>(pcs.data()), pcs.size() * 8);
  }
  CHECK(text ==
        " 0xffffffffc0001010 : xfs_file_read_iter+0x10/0x1000 [xfs]\n"
        " 0xffffffff81000200 : do_syscall_64+0x100/0x100 [kernel]\n"
        " 0xffffffff80000000\n"
        " 0xffffffff81000005 : entry_SYSCALL_64+0x5/0x100 [kernel]\n");

  // And the profile made of them: root first, ';' and ' ' replaced, kernel frames "_[k]".
  profile::Profile p;
  p.samples = samples;
  CHECK(profile::to_folded(p) ==
        "idle 1\n"
        "sort_worker;entry_SYSCALL_64_[k];[unknown]_[k];do_syscall_64_[k];xfs_file_read_iter_[k] 1\n");
}

TEST_CASE("profile samples: without collect_samples the records print as before", "[profile_samples]") {
  std::ostringstream err;
  Session s(err);
  codegen::ModuleInfo m = module_with_header();
  Records r;
  r.header(1, 5, 6, "x");
  char path[] = "/tmp/ukstap-profile-samples-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  {
    loader::Output out(s, m);
    std::string why;
    REQUIRE(out.open(path, why));
    out.record(r.bytes().data(), r.bytes().size());
    out.close();
  }
  std::ifstream in(path);
  std::stringstream got;
  got << in.rdbuf();
  ::unlink(path);
  CHECK(got.str() == std::string(profile_mode::kSampleTag) + "5 6 x\n");
}
