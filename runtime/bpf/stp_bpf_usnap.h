/* ukstap BPF runtime: a copy of the top of the user stack for a walk that stopped because a
 * file's unwind table was not loaded yet (STP_STOP_NO_TABLE_YET; layout and why:
 * common/stp_usnap.h). Sent just before the print/sprint record of that walk; user space walks
 * the copy once the tables are there (loader/deferred_unwind.h).
 *
 * The copy is read into a per-CPU scratch (one for normal context, one for NMI) and sent with
 * the bytes read only: a program's first few hundred events each need one, and reserving the
 * bound in the ring for each overflowed it. Its size is bounded: STP_USNAP_BYTES, or less where
 * the stack ends sooner. The main thread's frames all lie below mm->start_stack (argc), so the
 * copy stops there; another thread's stack is read at the full size, halved until the read no
 * longer runs off its mapping.
 */
#ifndef STP_BPF_USNAP_H
#define STP_BPF_USNAP_H

#include "common/stp_usnap.h"

#if (STP_USNAP_BYTES & (STP_USNAP_BYTES - 1)) || STP_USNAP_BYTES < 512
# error "STP_USNAP_BYTES must be a power of two >= 512"
#endif

struct stp__usnap_rec {
  struct stp_rec_hdr h;
  struct stp_usnap s;
  uint8_t stack[STP_USNAP_BYTES];
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
  uint32_t n = STP_USNAP_BYTES, size, slot = k->slot & 1;
  if (k->uw.stop != STP_STOP_NO_TABLE_YET)
    return;
  k->uw.hash = stp_fnv_u64(k->uw.hash, bpf_ktime_get_ns());
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
  rec->s.time_ns = bpf_ktime_get_ns();
  rec->s.pc = STP_X86_64_PT_PC(r);
  sp = STP_X86_64_PT_SP(r);
  rec->s.sp = sp;
  rec->s.fp = STP_X86_64_PT_FP(r);
  rec->s.bx = STP_X86_64_PT_BX(r);
  rec->s.lr = STP_X86_64_PT_LR(r);
  rec->s.pad = 0;
  t = bpf_get_current_task_btf();
  top = BPF_CORE_READ(t, mm, start_stack);
  if (sp < top && top - sp + 8 < n)
    n = (uint32_t)(top - sp + 8);  /* the main thread: up to and including argc */
  rec->s.len = 0;
#ifdef __clang__
#pragma unroll
#endif
  for (int i = 0; i < 4; i++) {  /* a thread's stack may end sooner: halve until it reads */
    if (n > STP_USNAP_BYTES)
      n = STP_USNAP_BYTES;
    if (n && bpf_probe_read_user(rec->stack, n, (const void *)sp) == 0) {
      rec->s.len = n;
      break;
    }
    n /= 2;
  }
  size = (uint32_t)(sizeof(rec->h) + sizeof(rec->s)) + (rec->s.len & (2 * STP_USNAP_BYTES - 1));
  size = STP_REC_ALIGN(size);
  if (size > sizeof(*rec))
    size = sizeof(*rec);
  rec->h.len = size - sizeof(rec->h);
  if (bpf_ringbuf_output(&stp_events, rec, size, 0) < 0) {
    struct stp_session *s = stp__session();
    if (s)
      stp__count(&s->drops);
  }
}

#endif /* STP_BPF_USNAP_H */
