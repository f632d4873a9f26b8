// The unwind-table compiler (see table_compiler.h).
//
// libdw hands out each CFI row as DWARF expressions; what it produces for x86_64 (elfutils
// 0.188, checked against libc, bash and gcc output):
//   CFA  def_cfa reg,off         -> { DW_OP_bregx reg off }          (one op, even for rsp)
//        def_cfa_expression      -> the expression's own ops (DW_OP_breg7 off; DW_OP_deref ...)
//   reg  offset(N)               -> { DW_OP_call_frame_cfa [, DW_OP_plus_uconst N] } (N signed;
//                                   the plus is omitted when N == 0), in the caller's ops_mem
//        val_offset(N)           -> the same plus DW_OP_stack_value
//        undefined               -> *nops == 0, *ops == ops_mem
//        same_value              -> *nops == 0, *ops == nullptr (also rbp/rbx... never mentioned:
//                                   libdw's x86_64 ABI rules make callee-saved regs same_value)
//        expression E            -> { DW_OP_call_frame_cfa, E... } (an internal array)
// and for aarch64 the same forms (DW_OP_bregx 31 for sp); its ABI CFI makes x29/x30 same_value
// at function entry, so a leaf's RA column 30 is "same value" = still in the link register.
// libdw ignores DW_CFA_AARCH64_negate_ra_state (0x2d, the GNU_window_save opcode): the signed-RA
// ranges are found here by scanning the FDEs' instructions (pac_ranges).
#include "unwind-tables/table_compiler.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>

#include "arch/stp_arch_arm64.h"
#include "arch/stp_arch_x86_64.h"
#include "vma-tracker/cfi_section.h"
#include "vma-tracker/fde_ranges.h"
#include "vma-tracker/traced_file.h"

namespace ukstap::unwind {

namespace {

// The DWARF registers the rows describe, per e_machine.
struct Arch {
  int fp, sp, ra;
  bool arm64;
  int bx;  // x86_64's rbx (an rbx-based CFA, its save rule in bx_off); -1: none
};
constexpr Arch kX86_64{STP_X86_64_DWARF_FP, STP_X86_64_DWARF_SP, STP_X86_64_DWARF_RA, false,
                       STP_X86_64_DWARF_BX};
constexpr Arch kArm64{STP_ARM64_DWARF_FP, STP_ARM64_DWARF_SP, STP_ARM64_DWARF_RA, true, -1};
constexpr int kSp = STP_X86_64_DWARF_SP, kFp = STP_X86_64_DWARF_FP, kRa = STP_X86_64_DWARF_RA;

// An open ELF file with its descriptor; the CFI handles borrow from it.
struct ElfHandle {
  int fd = -1;
  Elf* elf = nullptr;
  Dwarf_CFI* eh_cfi = nullptr;  // dwarf_getcfi_elf's is the caller's to free
  Dwarf* dwarf = nullptr;       // only to get .debug_frame (its CFI is freed with it)
  ~ElfHandle() {
    if (eh_cfi) dwarf_cfi_end(eh_cfi);
    if (dwarf) dwarf_end(dwarf);
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }
  std::string open_why;  // why open() found no regular file
  // The file at `path`, opened as every traced file is (traced_file.h: never blocks, regular
  // files only).
  bool open(const std::string& path) {
    fd = vma::open_traced_file(path, open_why);
    return fd >= 0 && begin();
  }
  // A descriptor the caller opened (a copy is kept: the caller's stays the caller's).
  bool adopt(int caller_fd) {
    fd = ::fcntl(caller_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) open_why = std::string("dup: ") + std::strerror(errno);
    return fd >= 0 && begin();
  }
  bool begin() {
    elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    return elf && elf_kind(elf) == ELF_K_ELF;
  }
};

stp_cfi_row invalid(int reason) {
  stp_cfi_row r{};
  r.cfa_kind = STP_CFA_INVALID;
  r.fp_kind = STP_FP_UNDEFINED;
  r.fp_off = (int16_t)reason;
  return r;
}

bool fits16(int64_t v) { return v >= INT16_MIN && v <= INT16_MAX; }

// A register's "saved at CFA+N" location: { call_frame_cfa [, plus_uconst N] }.
bool cfa_offset(const Dwarf_Op* ops, size_t n, int64_t& off) {
  if (n < 1 || n > 2 || ops[0].atom != DW_OP_call_frame_cfa) return false;
  if (n == 1) return off = 0, true;
  if (ops[1].atom != DW_OP_plus_uconst) return false;
  off = (int64_t)ops[1].number;  // libdw stores the signed factored offset unchanged
  return true;
}

// DW_OP_bregN / DW_OP_bregx: the register and offset, or false.
bool breg(const Dwarf_Op& op, int& reg, int64_t& off) {
  if (op.atom >= DW_OP_breg0 && op.atom <= DW_OP_breg31) {
    reg = op.atom - DW_OP_breg0;
    off = (int64_t)op.number;
    return true;
  }
  if (op.atom == DW_OP_bregx) {
    reg = (int)op.number;
    off = (int64_t)op.number2;
    return true;
  }
  return false;
}

// The expression GCC and binutils emit for lazy-binding PLT entries (16 bytes each: the CFA is
// rsp+8 before the entry's push, rsp+16 after it, the push at offset 11, or 10 in .plt.sec
// style entries): breg7 8; breg16 0; lit15; and; lit11|lit10; ge; lit3; shl; plus.
bool plt_expression(const Dwarf_Op* ops, size_t n, int& lit) {
  static const uint8_t shape[] = {DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
                                  DW_OP_ge,    DW_OP_lit3,   DW_OP_shl,   DW_OP_plus};
  if (n != sizeof shape) return false;
  for (size_t i = 0; i < n; ++i)
    if (i != 4 && ops[i].atom != shape[i]) return false;
  if (ops[0].number != 8 || ops[1].number != 0) return false;
  if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31) return false;
  lit = ops[4].atom - DW_OP_lit0;
  return true;
}

// `ops` (a register's rule) is the expression rule "at sp + off" that the kernel's rt_sigframe
// gives the registers of an interrupted frame.
bool at_sp(const Dwarf_Op* ops, size_t n, int64_t off) {
  int reg;
  int64_t o;
  return n == 2 && ops[0].atom == DW_OP_call_frame_cfa && breg(ops[1], reg, o) && reg == kSp &&
         o == off;
}

// A signal frame: glibc's __restore_rt describes the ucontext with expressions; the SIGNAL row
// replaces them, after checking they say what the stepper's fixed offsets assume.
stp_cfi_row classify_signal(Dwarf_Frame* f) {
  Dwarf_Op mem[3], *ops, *cfa;
  size_t n, ncfa;
  int reg;
  int64_t off;
  if (dwarf_frame_cfa(f, &cfa, &ncfa) != 0 || ncfa != 2 || !breg(cfa[0], reg, off) ||
      reg != kSp || off != 160 || cfa[1].atom != DW_OP_deref)
    return invalid(STP_INV_SIGNAL);
  if (dwarf_frame_register(f, kRa, mem, &ops, &n) != 0 || !at_sp(ops, n, 168))
    return invalid(STP_INV_SIGNAL);
  if (dwarf_frame_register(f, kFp, mem, &ops, &n) != 0 || !at_sp(ops, n, 120))
    return invalid(STP_INV_SIGNAL);
  stp_cfi_row r{};
  r.cfa_kind = STP_CFA_SIGNAL;
  return r;
}

// One libdw row as a stp_cfi_row (pc not set).
stp_cfi_row classify(Dwarf_Frame* f, bool signal, const Arch& a) {
  // arm64 signal frames (the vDSO's __kernel_rt_sigreturn) have another layout: not supported.
  if (signal) return a.arm64 ? invalid(STP_INV_SIGNAL) : classify_signal(f);
  Dwarf_Op mem[3], *ops;
  size_t n;

  // RA first: undefined RA marks the outermost frame whatever the CFA says.
  if (dwarf_frame_register(f, a.ra, mem, &ops, &n) != 0) return invalid(STP_INV_RA_RULE);
  int64_t ra_off = 0;
  if (n == 0 && ops == mem) {
    stp_cfi_row r{};
    r.cfa_kind = STP_CFA_STOP;
    return r;
  }
  stp_cfi_row r{};
  unsigned ra_kind = STP_RA_CFA_M8;
  if (a.arm64 && n == 0) {
    ra_kind = STP_RA_LR;  // same value: the RA is still in x30
  } else if (!a.arm64 && n == 1 && ops[0].atom == DW_OP_regx &&
             ops[0].number == STP_X86_64_DWARF_DI) {
    ra_kind = STP_RA_LR;  // vfork: the RA popped into rdi (the walk's lr at the leaf)
  } else if (!cfa_offset(ops, n, ra_off)) {
    return invalid(STP_INV_RA_RULE);
  } else if (a.arm64) {
    if (!fits16(ra_off)) return invalid(STP_INV_OFFSET);
    ra_kind = STP_RA_CFA_OFF;
    r.ra_off = (int16_t)ra_off;
  } else if (ra_off != -8) {
    return invalid(STP_INV_RA_RULE);
  }

  Dwarf_Op* cfa;
  size_t ncfa;
  int reg, lit;
  int64_t off = 0;
  if (dwarf_frame_cfa(f, &cfa, &ncfa) != 0 || ncfa == 0) return invalid(STP_INV_NO_CFA);
  if (ncfa == 1 && breg(cfa[0], reg, off)) {
    if (reg != a.sp && reg != a.fp && reg != a.bx) return invalid(STP_INV_CFA_REG);
    r.cfa_kind = reg == a.sp ? STP_CFA_SP : reg == a.fp ? STP_CFA_FP : STP_CFA_BX;
  } else if (ncfa == 2 && breg(cfa[0], reg, off) && reg == a.sp && cfa[1].atom == DW_OP_deref) {
    r.cfa_kind = STP_CFA_DEREF;
  } else if (!a.arm64 && plt_expression(cfa, ncfa, lit)) {  // x86_64's lazy-binding PLT
    r.cfa_kind = STP_CFA_PLT;
    off = lit;
  } else {
    return invalid(STP_INV_CFA_EXPR);
  }
  // A frame over 32 KiB: its offset scaled (stp_cfi.h); the PLT's literal is never large.
  unsigned shift = 0;
  while (!fits16(off >> shift) && shift < 15 && (off & ((int64_t)1 << shift)) == 0) ++shift;
  if (!fits16(off >> shift) || (shift && r.cfa_kind == STP_CFA_PLT)) return invalid(STP_INV_OFFSET);
  r.cfa_off = (int16_t)(off >> shift);
  r.cfa_kind = STP_CFA_KIND_SHIFT(r.cfa_kind, shift);

  unsigned fp_kind;
  if (dwarf_frame_register(f, a.fp, mem, &ops, &n) != 0) return invalid(STP_INV_FP_RULE);
  if (n == 0) {
    fp_kind = ops ? STP_FP_UNDEFINED : STP_FP_SAME;
  } else if (cfa_offset(ops, n, off)) {
    if (!fits16(off)) return invalid(STP_INV_OFFSET);
    fp_kind = STP_FP_CFA_OFF;
    r.fp_off = (int16_t)off;
  } else {
    return invalid(STP_INV_FP_RULE);
  }
  r.fp_kind = STP_FP_RA_KIND(fp_kind, ra_kind);

  // rbx (x86_64): where this frame saved it, for an rbx-based CFA in a caller. No rule (n == 0)
  // is the ABI's same value: libdw 0.188 says "undefined" for an rbx no CFI mentions, because
  // its x86_64 ABI defaults (backends/x86_64_cfi.c) mark register 0 same-value for "%rbx"
  // instead of 3; compilers do not emit DW_CFA_undefined for rbx.
  if (a.bx >= 0) {
    if (dwarf_frame_register(f, a.bx, mem, &ops, &n) == 0 && n == 0)
      r.bx_off = 0;
    else if (dwarf_frame_register(f, a.bx, mem, &ops, &n) == 0 && cfa_offset(ops, n, off) &&
             off != 0 && off != STP_BX_UNKNOWN && fits16(off))
      r.bx_off = (int16_t)off;
    else
      r.bx_off = STP_BX_UNKNOWN;
  }
  return r;
}

bool same_rule(const stp_cfi_row& a, const stp_cfi_row& b) {
  return a.cfa_kind == b.cfa_kind && a.fp_kind == b.fp_kind && a.cfa_off == b.cfa_off &&
         a.fp_off == b.fp_off && a.ra_off == b.ra_off;
}

// ---- AArch64 pointer authentication: where the RA is signed ----
//
// DW_CFA_AARCH64_negate_ra_state toggles RA_SIGN_STATE (saved/restored by remember/restore
// _state) after `paciasp`/`pacibsp`, back after `autiasp`. Where it is set the RA (in x30 or
// on the stack) has a PAC in its top bits; the rows there become INVALID (PAC). Stripping the
// PAC would need the task's VA size (TCR_EL1.T0SZ, 48 or 52 bits) — not guessed. The 'B'
// augmentation only selects the B key; it signs nothing by itself, so it is not a criterion.

constexpr uint8_t kNegateRaState = 0x2d;  // DW_CFA_AARCH64_negate_ra_state

bool uleb(const uint8_t*& p, const uint8_t* e, uint64_t& v) {
  v = 0;
  for (int sh = 0; p < e && sh < 64; sh += 7) {
    uint8_t b = *p++;
    v |= (uint64_t)(b & 0x7f) << sh;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Fixed-size DW_EH_PE value (the forms toolchains emit for FDE addresses); pcrel uses `here`.
bool encoded(const uint8_t*& p, const uint8_t* e, uint8_t enc, uint64_t here, uint64_t& out) {
  static const int size[16] = {8, 0, 2, 4, 8, 0, 0, 0, 0, 0, 2, 4, 8};
  int n = size[enc & 0x0f];
  if (enc == DW_EH_PE_omit || n == 0 || p + n > e || (enc & 0x70 & ~DW_EH_PE_pcrel)) return false;
  uint64_t v = 0;
  std::memcpy(&v, p, (size_t)n);  // little-endian hosts and targets
  if ((enc & 0x08) && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~0ull << (8 * n);
  p += n;
  out = (enc & 0x70) == DW_EH_PE_pcrel ? v + here : v;
  return true;
}

struct PacScan {
  uint64_t loc = 0;
  uint64_t caf = 1;       // code alignment factor
  uint8_t enc = 0;        // FDE pointer encoding (DW_CFA_set_loc)
  bool on = false;        // RA signed from `since` on
  uint64_t since = 0;
  unsigned stack = 0;     // remember_state stack of sign states, as bits
  unsigned depth = 0;
  std::vector<sym::FdeRange>* out = nullptr;
  void toggle() {
    if (on && loc > since) out->push_back({since, loc});
    on = !on;
    since = loc;
  }
  void advance(uint64_t to) {
    if (on && to != loc) {  // close the signed run at each advance so ranges stay exact
      out->push_back({since, to});
      since = to;
    }
    loc = to;
  }
  // Runs one CFA program; false when it holds something this scan does not decode (the
  // caller then treats the whole FDE as signed: never unwind through unknown PAC state).
  bool run(const uint8_t* p, const uint8_t* e) {
    uint64_t a, b;
    while (p < e) {
      uint8_t op = *p++, hi = op & 0xc0, lo = op & 0x3f;
      if (hi == DW_CFA_advance_loc) { advance(loc + lo * caf); continue; }
      if (hi == DW_CFA_offset) { if (!uleb(p, e, a)) return false; continue; }
      if (hi == DW_CFA_restore) continue;
      switch (op) {
        case DW_CFA_nop: case DW_CFA_remember_state:
          if (op == DW_CFA_remember_state) {
            if (depth >= 31) return false;
            stack = (stack << 1) | on, ++depth;
          }
          break;
        case DW_CFA_restore_state:
          if (!depth) return false;
          if (((stack & 1) != 0) != on) toggle();
          stack >>= 1, --depth;
          break;
        case kNegateRaState: toggle(); break;
        case DW_CFA_set_loc: {
          uint64_t to;
          if (!encoded(p, e, enc, 0, to)) return false;
          advance(to);
          break;
        }
        case DW_CFA_advance_loc1: if (p + 1 > e) return false; advance(loc + p[0] * caf); p += 1; break;
        case DW_CFA_advance_loc2: {
          uint16_t d; if (p + 2 > e) return false; std::memcpy(&d, p, 2); p += 2;
          advance(loc + d * caf); break;
        }
        case DW_CFA_advance_loc4: {
          uint32_t d; if (p + 4 > e) return false; std::memcpy(&d, p, 4); p += 4;
          advance(loc + d * caf); break;
        }
        case DW_CFA_offset_extended: case DW_CFA_register: case DW_CFA_def_cfa:
        case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa_sf: case DW_CFA_val_offset:
        case DW_CFA_val_offset_sf: case DW_CFA_GNU_negative_offset_extended:
          if (!uleb(p, e, a) || !uleb(p, e, b)) return false;
          break;
        case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
        case DW_CFA_def_cfa_register: case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
        case DW_CFA_GNU_args_size:
          if (!uleb(p, e, a)) return false;  // sleb operands skip the same way
          break;
        case DW_CFA_def_cfa_expression:
          if (!uleb(p, e, a) || a > (uint64_t)(e - p)) return false;
          p += a;
          break;
        case DW_CFA_expression: case DW_CFA_val_expression:
          if (!uleb(p, e, b) || !uleb(p, e, a) || a > (uint64_t)(e - p)) return false;
          p += a;
          break;
        default: return false;
      }
    }
    return true;
  }
};

// The [start, end) ranges of `elf`'s FDEs where the RA is signed (aarch64 only).
void pac_ranges(Elf* elf, std::vector<sym::FdeRange>& out) {
  size_t shstrndx = 0;
  const unsigned char* ident = reinterpret_cast<const unsigned char*>(elf_getident(elf, nullptr));
  if (!ident || elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    const char* name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr;
    sym::CfiSection kind = sym::cfi_section_kind(name);
    bool eh = kind == sym::CfiSection::eh_frame;
    if (kind == sym::CfiSection::none) continue;
    Elf_Data* data = sym::cfi_section_data(elf, scn);  // decompressed
    if (!data) continue;
    const uint8_t* base = static_cast<const uint8_t*>(data->d_buf);
    struct Cie {
      Dwarf_CIE cie;
      uint8_t enc;
      bool z;
    };
    std::map<Dwarf_Off, Cie> cies;
    Dwarf_Off off = 0, next = 0;
    for (int guard = 0; guard < 10000000; ++guard, off = next) {
      Dwarf_CFI_Entry entry;
      if (dwarf_next_cfi(ident, data, eh, off, &next, &entry) != 0) break;
      if (entry.CIE_id == LIBDW_CIE_ID) {
        Cie c{entry.cie, (uint8_t)DW_EH_PE_absptr, false};
        const char* aug = entry.cie.augmentation;
        c.z = aug && aug[0] == 'z';
        if (c.z && entry.cie.augmentation_data) {  // find 'R' (FDE encoding) in the data
          const uint8_t *d = entry.cie.augmentation_data, *de = d + entry.cie.augmentation_data_size;
          for (const char* q = aug + 1; *q && d < de; ++q) {
            if (*q == 'R') { c.enc = *d; break; }
            if (*q == 'L') ++d;
            else if (*q == 'P') {
              uint8_t penc = *d++;
              uint64_t ignored;
              if (!encoded(d, de, penc & 0x0f, 0, ignored)) break;
            }
          }
        }
        cies[off] = c;
        continue;
      }
      auto it = cies.find(entry.fde.CIE_pointer);
      if (it == cies.end()) continue;
      const Cie& c = it->second;
      const uint8_t* p = entry.fde.start;
      uint64_t start = 0, len = 0, auglen = 0;
      if (!encoded(p, entry.fde.end, c.enc, sh.sh_addr + (uint64_t)(p - base), start) ||
          !encoded(p, entry.fde.end, c.enc & 0x0f, 0, len) || len == 0 || start == 0)
        continue;
      if (c.z && (!uleb(p, entry.fde.end, auglen) || auglen > (uint64_t)(entry.fde.end - p)))
        continue;
      p += c.z ? auglen : 0;
      PacScan s;
      s.loc = start;
      s.caf = c.cie.code_alignment_factor;
      s.enc = (uint8_t)(c.enc & 0x0f);
      s.out = &out;
      size_t mark = out.size();
      bool ok = s.run(c.cie.initial_instructions, c.cie.initial_instructions_end);
      s.loc = start, s.since = start;
      ok = ok && s.run(p, entry.fde.end);
      if (!ok) {
        out.resize(mark);
        out.push_back({start, start + len});
      } else if (s.on && start + len > s.since) {
        out.push_back({s.since, start + len});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const sym::FdeRange& a, const sym::FdeRange& b) { return a.start < b.start; });
}

bool overlaps(const std::vector<sym::FdeRange>& sorted, uint64_t lo, uint64_t hi) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), lo,
                             [](uint64_t v, const sym::FdeRange& r) { return v < r.start; });
  if (it != sorted.begin() && std::prev(it)->end > lo) return true;
  return it != sorted.end() && it->start < hi;
}

// The separate debug file by build-id (/usr/lib/debug/.build-id/xx/rest.debug), for its
// .debug_frame. (.gnu_debuglink is not followed: Debian's dbgsym packages use build-ids.)
std::string debug_file(Elf* elf) {
  const void* id;
  ssize_t len = dwelf_elf_gnu_build_id(elf, &id);
  if (len < 2) return "";
  std::string hex;
  char b[3];
  for (ssize_t i = 0; i < len; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<const uint8_t*>(id)[i]);
    hex += b;
  }
  std::string path = "/usr/lib/debug/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
  return ::access(path.c_str(), R_OK) == 0 ? path : "";
}

// The PF_X PT_LOAD segments' [vaddr, vaddr+memsz).
std::vector<sym::FdeRange> exec_segments(Elf* elf) {
  std::vector<sym::FdeRange> out;
  size_t n = 0;
  if (elf_getphdrnum(elf, &n) != 0) return out;
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
      out.push_back({ph.p_vaddr, ph.p_vaddr + ph.p_memsz});
  }
  return out;
}

void count(CfiTable& t) {
  auto& s = t.stats;
  s.rows = s.invalid = 0;
  std::fill(std::begin(s.by_kind), std::end(s.by_kind), 0);
  std::fill(std::begin(s.by_reason), std::end(s.by_reason), 0);
  for (const auto& r : t.rows) {
    bool gap = r.cfa_kind == STP_CFA_INVALID && r.fp_off == STP_INV_NO_FDE;
    if (r.cfa_kind == STP_CFA_INVALID) ++s.by_reason[(unsigned)r.fp_off & 15];
    if (gap) continue;
    ++s.rows;
    ++s.by_kind[STP_ROW_CFA_KIND(&r) & 7];
    if (r.cfa_kind == STP_CFA_INVALID) ++s.invalid;
  }
}

}  // namespace

namespace {
bool compile_opened(ElfHandle& file, CfiTable& out, std::string& why);
}

bool compile_cfi(const std::string& path, CfiTable& out, std::string& why) {
  out = CfiTable{};
  elf_version(EV_CURRENT);
  ElfHandle file;
  if (!file.open(path)) {
    why = file.fd < 0 ? file.open_why : "cannot read " + path + " as ELF: " + elf_errmsg(-1);
    return false;
  }
  return compile_opened(file, out, why);
}

bool compile_cfi(int fd, const std::string& path, CfiTable& out, std::string& why) {
  out = CfiTable{};
  elf_version(EV_CURRENT);
  ElfHandle file;
  if (!file.adopt(fd)) {
    why = file.fd < 0 ? file.open_why : "cannot read " + path + " as ELF: " + elf_errmsg(-1);
    return false;
  }
  return compile_opened(file, out, why);
}

namespace {
bool compile_opened(ElfHandle& file, CfiTable& out, std::string& why) {
  ElfHandle debug;
  GElf_Ehdr eh;
  if (!gelf_getehdr(file.elf, &eh) || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64)) {
    why = "not an x86_64 or aarch64 ELF file";
    return false;
  }
  const Arch& arch = eh.e_machine == EM_AARCH64 ? kArm64 : kX86_64;

  // .eh_frame, then .debug_frame (the file's own, else the build-id debug file's) where
  // .eh_frame has no FDE.
  Dwarf_CFI* eh_cfi = file.eh_cfi = dwarf_getcfi_elf(file.elf);
  std::vector<sym::FdeRange> ranges = sym::read_fde_ranges(file.elf);
  Dwarf_CFI* dbg_cfi = nullptr;
  ElfHandle* dbg = &file;
  if (!sym::has_debug_frame(file.elf)) {
    std::string dpath = debug_file(file.elf);
    dbg = !dpath.empty() && debug.open(dpath) && sym::has_debug_frame(debug.elf) ? &debug : nullptr;
    if (dbg) {
      auto more = sym::read_fde_ranges(debug.elf);
      ranges.insert(ranges.end(), more.begin(), more.end());
      std::sort(ranges.begin(), ranges.end(),
                [](const sym::FdeRange& a, const sym::FdeRange& b) { return a.start < b.start; });
    }
  }
  if (dbg && sym::has_debug_frame(dbg->elf)) {
    dbg->dwarf = dwarf_begin_elf(dbg->elf, DWARF_C_READ, nullptr);
    if (dbg->dwarf) dbg_cfi = dwarf_getcfi(dbg->dwarf);
  }
  // An FDE outside the executable segments is garbage (corrupt or mismatched CFI): dropping it
  // keeps one bad address from breaking the 4 GiB span or the row order of the whole file.
  size_t before = ranges.size();
  std::vector<sym::FdeRange> text = exec_segments(file.elf);
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(),
                              [&](const sym::FdeRange& r) {
                                return r.end <= r.start ||
                                       std::none_of(text.begin(), text.end(), [&](auto& t) {
                                         return r.start >= t.start && r.end <= t.end;
                                       });
                              }),
               ranges.end());
  if (ranges.size() < before) {
    out.stats.fdes_skipped = before - ranges.size();
    out.stats.skip_why = "outside the executable segments";
  }
  if (ranges.empty()) {
    why = "no .eh_frame or .debug_frame";
    return true;
  }

  out.base = ranges.front().start;
  uint64_t span = 0;
  for (const auto& r : ranges) span = std::max(span, r.end - out.base);
  if (span > UINT32_MAX) {
    why = "its CFI spans more than 4 GiB";
    return false;
  }
  out.stats.fdes = ranges.size() + out.stats.fdes_skipped;
  std::vector<sym::FdeRange> pac;
  if (arch.arm64) {
    pac_ranges(file.elf, pac);
    if (dbg && dbg != &file) pac_ranges(dbg->elf, pac);
    std::sort(pac.begin(), pac.end(),
              [](const sym::FdeRange& a, const sym::FdeRange& b) { return a.start < b.start; });
  }

  auto push = [&](uint64_t pc, stp_cfi_row r) {
    r.pc = (uint32_t)(pc - out.base);
    if (!out.rows.empty() && out.rows.back().pc == r.pc) out.rows.pop_back();  // empty range
    if (out.rows.empty() || !same_rule(out.rows.back(), r)) out.rows.push_back(r);
  };
  uint64_t done = out.base;  // everything below has rows
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& fde = ranges[i];
    uint64_t pc = std::max(fde.start, done);
    while (pc < fde.end) {
      Dwarf_Frame* frame = nullptr;
      if ((!eh_cfi || dwarf_cfi_addrframe(eh_cfi, pc, &frame) != 0) &&
          (!dbg_cfi || dwarf_cfi_addrframe(dbg_cfi, pc, &frame) != 0)) {
        if (!out.stats.fdes_skipped++) out.stats.skip_why = dwarf_errmsg(-1);
        push(pc, invalid(STP_INV_NO_CFA));
        pc = fde.end;
        break;
      }
      std::unique_ptr<Dwarf_Frame, void (*)(void*)> own(frame, std::free);
      Dwarf_Addr start = 0, end = 0;
      bool signal = false;
      dwarf_frame_info(frame, &start, &end, &signal);
      // Malformed CFI can give a range that does not advance: finish the FDE as one row.
      uint64_t next = end > pc ? std::min<uint64_t>(end, fde.end) : fde.end;
      push(pc, !pac.empty() && overlaps(pac, pc, next) ? invalid(STP_INV_PAC)
                                                       : classify(frame, signal, arch));
      pc = next;
    }
    done = std::max(done, pc);
    if (i + 1 == ranges.size() || ranges[i + 1].start > done) push(done, invalid(STP_INV_NO_FDE));
  }
  count(out);
  return true;
}
}  // namespace

const stp_cfi_row* find_row(const CfiTable& t, uint64_t vaddr) {
  if (t.rows.empty() || vaddr < t.base || vaddr - t.base >= t.rows.back().pc) return nullptr;
  uint32_t pc = (uint32_t)(vaddr - t.base);
  auto it = std::upper_bound(t.rows.begin(), t.rows.end(), pc,
                             [](uint32_t a, const stp_cfi_row& r) { return a < r.pc; });
  return &*(it - 1);  // rows[0].pc == 0 <= pc, so it > begin
}

const char* cfa_kind_name(unsigned kind) {
  static const char* names[] = {"sp", "fp", "plt", "deref", "signal", "stop", "invalid", "rbx"};
  return kind < 8 ? names[kind] : "?";
}

const char* invalid_reason_name(unsigned reason) {
  static const char* names[] = {"no FDE",  "CFA register", "CFA expression", "RA rule",
                                "fp rule", "offset",       "no CFA",         "signal frame",
                                "signed RA (PAC)"};
  return reason < 9 ? names[reason] : "?";
}

std::string coverage_line(const std::string& name, const CfiTable& t) {
  const auto& s = t.stats;
  char buf[160];
  double pct = s.rows ? 100.0 * (double)(s.rows - s.invalid) / (double)s.rows : 0.0;
  std::snprintf(buf, sizeof buf, "%s: %zu rows, %.2f%% expressible", name.c_str(), s.rows, pct);
  std::string line = buf;
  if (s.invalid) {
    line += " (" + std::to_string(s.invalid) + " invalid:";
    const char* sep = " ";
    for (unsigned r = 1; r < 16; ++r)
      if (s.by_reason[r]) {
        line += sep + std::to_string(s.by_reason[r]) + " " + invalid_reason_name(r);
        sep = ", ";
      }
    line += ")";
  }
  line += ", " + std::to_string(s.fdes) + " FDEs";
  if (s.fdes_skipped)
    line += " (" + std::to_string(s.fdes_skipped) + " skipped: " + s.skip_why + ")";
  return line;
}

}  // namespace ukstap::unwind
