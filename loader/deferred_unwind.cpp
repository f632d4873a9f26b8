// Walks finished in user space over a USNAP stack copy (see deferred_unwind.h).
#include "loader/deferred_unwind.h"

#include <cstring>

#include "common/stp_records.h"
#include "loader/unwind_tables.h"
#include "unwind-tables/table_compiler.h"
#include "vma-tracker/symbolizer.h"
#include "vma-tracker/tracker.h"

namespace {

// The stepper reads memory only through STP_UNWIND_READ: here only the copy exists. A read
// beyond it, or of a piece the kernel could not read (a page not present), fails like an
// unreadable page: the walk stops with "read fault", never guesses.
const uint8_t* g_copy = nullptr;
uint64_t g_copy_lo = 0, g_copy_len = 0;
uint32_t g_missing = 0;
// The piece (common/stp_usnap.h) holding addr: 0 up to sp's next page boundary, then one a page.
uint64_t piece_of(uint64_t addr) {
  uint64_t first_end = (g_copy_lo | 4095) + 1;
  return addr < first_end ? 0 : 1 + (addr - first_end) / 4096;
}
int copy_read(void* dst, size_t n, uint64_t addr) {
  if (!n || addr < g_copy_lo || addr - g_copy_lo > g_copy_len || n > g_copy_len - (addr - g_copy_lo))
    return -14;
  for (uint64_t p = piece_of(addr); p <= piece_of(addr + n - 1); ++p)
    if (p >= 32 || (g_missing >> p) & 1) return -14;
  std::memcpy(dst, g_copy + (addr - g_copy_lo), n);
  return 0;
}

}  // namespace

#define STP_UNWIND_READ(dst, size, addr) copy_read((dst), (size), (uint64_t)(addr))
#include "unwind/stp_cfi_step.h"
#include "unwind/stp_fp_walk.h"

namespace ukstap::loader {

DeferredUnwind::DeferredUnwind(vma::Tracker& tracker, sym::Symbolizer& symbolizer,
                               UnwindTables& tables)
    : tracker_(tracker), sym_(symbolizer), tables_(tables) {}

void DeferredUnwind::snapshot(const unsigned char* p, size_t n) {
  Copy c;
  if (n < sizeof c.regs) return;
  std::memcpy(&c.regs, p, sizeof c.regs);
  size_t len = std::min<size_t>(c.regs.len, n - sizeof c.regs);
  c.stack.assign(p + sizeof c.regs, p + sizeof c.regs + len);
  ++copies;
  copy_bytes += len;
  if (!first_ns) first_ns = c.regs.time_ns;
  last_ns = c.regs.time_ns;
  pending_[c.regs.tid] = std::move(c);
}

bool DeferredUnwind::finish(const stp_ustack& u, std::vector<uint64_t>& pcs, uint32_t& exact,
                            uint32_t& stop) {
  auto it = pending_.find(u.tid);
  if (stop != STP_STOP_NO_TABLE_YET) {
    if (it != pending_.end()) pending_.erase(it);  // not its record (a dropped one): stale
    return false;
  }
  // The copy was made in the same probe run, just before the record's walk ended, and carries
  // the record's time: any other copy (an earlier event's, whose record was dropped) is stale
  // and never stands in for this event's stack.
  if (it == pending_.end() || it->second.regs.pid != u.pid || it->second.regs.time_ns != u.time_ns) {
    if (it != pending_.end() && it->second.regs.time_ns < u.time_ns) pending_.erase(it);
    ++without_copy;
    return false;
  }
  Copy c = std::move(it->second);
  pending_.erase(it);
  const int pid = (int)u.pid;
  const uint64_t t = u.time_ns;
  g_copy = c.stack.data();
  g_copy_lo = c.regs.sp;
  g_copy_len = c.stack.size();
  g_missing = c.regs.missing;

  // stp__uwalk's registers and stp_uwalk_frame's rules, frame for frame.
  stp_uregs r{};
  r.pc = c.regs.pc;
  r.sp = r.sp0 = c.regs.sp;
  r.fp = c.regs.fp;
  r.fp_valid = 1;
  r.exact_pc = 1;
  r.lr = c.regs.lr;
  r.lr_valid = 1;
  r.bx = c.regs.bx;
  r.bx_valid = 1;
  std::vector<uint64_t> out{r.pc};
  uint32_t ex = 1, why = STP_STOP_END;
  bool inexact = false;
  for (;;) {
    if (out.size() >= (max_frames_ ? max_frames_ : MAXBACKTRACE)) {
      why = STP_STOP_DEPTH;
      break;
    }
    const vma::Mapping* m = tracker_.lookup(pid, r.pc, t);
    if (!m || !(m->prot & 4 /* PROT_EXEC */)) {
      why = STP_STOP_BAD_FRAME;  // not code: never guess past it
      break;
    }
    const stp_cfi_row* row = nullptr;
    if (!m->path.empty()) {  // anonymous (JIT) code has no table
      const unwind::CfiTable* table = tables_.table_for(*m);
      const sym::ElfFile* f =
          m->path == "[vdso]" ? sym_.vdso() : sym_.file(m->path, m->dev, m->ino);
      if (table && f) {
        uint64_t vaddr = r.pc - f->bias_for(m->start, m->pgoff) - (r.exact_pc ? 0 : 1);
        row = unwind::find_row(*table, vaddr);
        if (row && STP_ROW_CFA_KIND(row) == STP_CFA_INVALID && row->fp_off == STP_INV_NO_FDE)
          row = nullptr;  // between FDEs: no table for this pc
      }
    }
    uint32_t s = STP_STOP_END;
    int ok;
    if (row) {
      ok = stp_cfi_step(row, &r, &s);
    } else {
      ok = stp_fp_fallback_step(&r, &s);  // as the kernel: this frame and all above inexact
      inexact = true;
    }
    if (!ok) {
      why = s;
      break;
    }
    out.push_back(r.pc);
    if (!inexact) ex = (uint32_t)out.size();
  }
  g_copy = nullptr;
  pcs = std::move(out);
  exact = ex;
  stop = why;
  ++finished;
  return true;
}

}  // namespace ukstap::loader
