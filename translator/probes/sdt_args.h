// An SDT marker's arguments as .note.stapsdt writes them ("-4@-4(%rbp) 8@%rdi -4@$5", the
// assembler operands of <sys/sdt.h>'s STAP_PROBEn on x86-64), parsed into what the runtime's
// STP_SDT_ARG reads (runtime/bpf/stp_bpf_process.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ukstap::probes {

struct SdtArg {
  int reg = -1;      // pt_regs register: 0 ax 1 bx 2 cx 3 dx 4 si 5 di 6 bp 7 sp 8..15 r8..r15
                     // 16 ip; -1: a constant (disp)
  bool mem = false;  // the value is in user memory at reg + disp
  int64_t disp = 0;
  int size = 8;      // bytes; negative: signed
};

// Argument n (1-based) of `args`; nullopt when it is absent or in a form not handled
// (an index register, a segment, a symbol).
std::optional<SdtArg> parse_sdt_arg(const std::string& args, int n);

}  // namespace ukstap::probes
