/* ukstap BPF runtime: a copy of the top of the user stack for a walk that stopped because a
 * file's unwind table was not loaded yet (STP_STOP_NO_TABLE_YET; layout and why:
 * common/stp_usnap.h). Sent just before the print/sprint record of that walk; user space walks
 * the copy once the tables are there (loader/deferred_unwind.h).
 *
 * The copy is read into a per-CPU scratch (one for normal context, one for NMI) and sent with
 * the bytes read only: a program's first few hundred events each need one, and reserving the
 * bound in the ring for each overflowed it. Its size is bounded: STP_USNAP_BYTES, or less where
 * the stack ends sooner. The main thread's frames all lie below mm->start_stack (argc), so the
 * copy stops there; another thread's stack is read to the bound, and the pages beyond its
 * mapping are marked missing like pages not present.
 */
#ifndef STP_BPF_USNAP_H
#define STP_BPF_USNAP_H

#include "common/stp_usnap.h"

#if (STP_USNAP_BYTES & (STP_USNAP_BYTES - 1)) || STP_USNAP_BYTES < 512 || STP_USNAP_BYTES > 32768
# error "STP_USNAP_BYTES must be a power of two, 512..32768"
#endif

/* The whole record is STP_USNAP_BYTES at most: a per-CPU map's value may not exceed 32 KiB. The
 * copy is read a page at a time (a page that is not present fails alone, and is marked missing),
 * and the last page's read may start anywhere below STP__USNAP_CAP: a page of slack after it. */
#define STP__USNAP_ROOM (STP_USNAP_BYTES - sizeof(struct stp_rec_hdr) - sizeof(struct stp_usnap))
#define STP__USNAP_CAP (STP__USNAP_ROOM - 4096)
#define STP__USNAP_PIECES (STP__USNAP_CAP / 4096 + 2)
struct stp__usnap_rec {
  struct stp_rec_hdr h;
  struct stp_usnap s;
  uint8_t stack[STP__USNAP_ROOM];
};
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 2);  /* STP_SLOT_NORMAL, STP_SLOT_NMI */
  __type(key, uint32_t);
  __type(value, struct stp__usnap_rec);
} stp_usnap_scratch SEC(".maps");

/* When k->uw stopped for a table not loaded yet: the copy, and a content hash no other event
 * shares (the pcs found so far do not tell two such stacks apart, and a deferred token names
 * its text by that hash). */
static __always_inline void stp__usnap_if_pending(struct stp_common *k)
{
  struct pt_regs *r;
  struct stp__usnap_rec *rec;
  struct task_struct *t;
  uint64_t sp, top;
  uint32_t n = STP__USNAP_CAP, off = 0, missing = 0, size, slot = k->slot & 1;
  uint64_t now;
  k->uw.snap_ns = 0;
  if (k->uw.stop != STP_STOP_NO_TABLE_YET)
    return;
  now = bpf_ktime_get_ns();
  k->uw.hash = stp_fnv_u64(k->uw.hash, now);
  /* Copies never crowd out the output: none while a quarter of the ring waits to be read (the
   * reader may be compiling a big table for an earlier copy). A system-wide profile of a busy
   * machine, where new processes start all the time, dropped 1,615 records without this. The
   * walk then stays "unwind table not loaded yet" (-v counts those without a copy). */
  if (bpf_ringbuf_query(&stp_events, BPF_RB_AVAIL_DATA) > STP_RINGBUF_SIZE / 4)
    return;
  r = stp__user_regs();
  if (!r)
    return;
  rec = bpf_map_lookup_elem(&stp_usnap_scratch, &slot);
  if (!rec)
    return;
  rec->h.type = STP_REC_USNAP;
  rec->h.id = 0;
  uint64_t pt = bpf_get_current_pid_tgid();
  rec->s.pid = (uint32_t)(pt >> 32);
  rec->s.tid = (uint32_t)pt;
  rec->s.time_ns = now;
  rec->s.pc = STP_X86_64_PT_PC(r);
  sp = STP_X86_64_PT_SP(r);
  rec->s.sp = sp;
  rec->s.fp = STP_X86_64_PT_FP(r);
  rec->s.bx = STP_X86_64_PT_BX(r);
  rec->s.lr = STP_X86_64_PT_LR(r);
  t = bpf_get_current_task_btf();
  top = BPF_CORE_READ(t, mm, start_stack);
  if (sp < top && top - sp + 8 < n)
    n = (uint32_t)(top - sp + 8);  /* the main thread: up to and including argc */
#ifdef __clang__
#pragma unroll
#endif
  for (int i = 0; i < STP__USNAP_PIECES; i++) {
    uint32_t len = 4096 - (uint32_t)((sp + off) & 4095);
    if (off >= n || off >= STP__USNAP_CAP)
      break;
    if (len > n - off)
      len = n - off;
    if (len > 4096)
      len = 4096;
    /* For 6.1's verifier (stp_bpf_base.h): off < STP__USNAP_CAP and len <= 4096 already. */
    STP_CLAMP_REG(off, STP__USNAP_CAP - 1);
    STP_CLAMP_REG(len, 4096);
    if (bpf_probe_read_user(&rec->stack[off], len, (const void *)(sp + off)) != 0)
      missing |= 1u << i;  /* the helper zeroed it */
    off += len;
  }
  rec->s.len = off;
  rec->s.missing = missing;
  size = (uint32_t)(sizeof(rec->h) + sizeof(rec->s)) + (off & (2 * STP_USNAP_BYTES - 1));
  size = STP_REC_ALIGN(size);
  if (size > sizeof(*rec))
    size = sizeof(*rec);
  rec->h.len = size - sizeof(rec->h);
  if (bpf_ringbuf_output(&stp_events, rec, size, 0) < 0) {
    struct stp_session *s = stp__session();
    if (s)
      stp__count(&s->drops);
    return;
  }
  k->uw.snap_ns = now;  /* the record gets this time: a copy pairs with its own record only */
}

#endif /* STP_BPF_USNAP_H */
