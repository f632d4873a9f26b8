/* ukstap BPF runtime: session, per-CPU context, probe entry/exit, errors, MAXACTION, loops.
 *
 * Why a context map: the BPF stack is 512 bytes, far too small for string locals, so probe
 * locals, function frames and scratch buffers live in one "context" per CPU and per slot:
 * slot 0 for tracepoints/uprobes/raw tracepoints, slot 1 for perf_event programs (they run in
 * NMI and may interrupt a slot-0 handler on the same CPU). A busy flag makes re-entry on the
 * same slot (a preempted uprobe handler, a faultable syscall tracepoint) skip the probe and
 * count it in stp_session.skipped, as SystemTap does when its context is busy.
 */
#ifndef STP_BPF_BASE_H
#define STP_BPF_BASE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common/stp_limits.h"
#include "common/stp_records.h"
#include "common/stp_format.h"
/* The unwinder core reads user memory through this (runtime/unwind/). */
#define STP_UNWIND_READ(dst, size, addr) bpf_probe_read_user((dst), (size), (const void *)(addr))
/* DWARF steps read the stack through a window in the walk (bpf/stp_bpf_uwalk.h). */
#ifndef STP_UWIN  /* a power of two */
# define STP_UWIN 1024  /* 512: ~2 refills for a 15-frame walk of bench item 1, 1024: one */
#endif
struct stp_uregs;
static __always_inline long stp__uread(struct stp_uregs *r, void *dst, uint32_t size, uint64_t addr);
#define STP_UNWIND_READ_REGS(r, dst, size, addr) stp__uread((r), (dst), (size), (uint64_t)(addr))
#include "unwind/stp_fp_walk.h"
#include "unwind/stp_cfi_step.h"

#ifndef STP_RINGBUF_SIZE
# define STP_RINGBUF_SIZE (4 * 1024 * 1024)
#endif
/* Default size of the context array is 2 slots x STP_MAX_CPUS; the loader resizes "stp_ctx"
 * to 2 * libbpf_num_possible_cpus() before load. A CPU beyond the size skips its probes. */
#ifndef STP_MAX_CPUS
# define STP_MAX_CPUS 64
#endif
#ifndef STP_NPROBES
# define STP_NPROBES 1  /* the generated file defines the real count */
#endif
/* Zero bytes used to create stats entries and to clear keys; stats value structs must fit. */
#ifndef STP_ZERO_SIZE
# define STP_ZERO_SIZE 8192
#endif
/* Record scratch: room for 32 string arguments (power of two, see stp_bpf_output.h). */
#define STP_REC_CAP (64 * STP_MAXSTRINGLEN)

#define STP_SLOT_NORMAL 0
#define STP_SLOT_NMI 1
/* Per-process state kept in arrays indexed by a slot of the tgid, written in place: a hash
 * map's update takes a lock, which an NMI (a perf.hw probe's walk) must not take. Two
 * processes may share a slot: each user checks the tgid it finds there. */
#define STP_PROC_SLOTS 1024  /* power of two */
#define STP_PROC_SLOT(tgid) ((tgid) & (STP_PROC_SLOTS - 1))
#define STP_LOC_CURRENT (-2)   /* stp_error(): use the location set by STP_SET_LOC */

#ifndef EEXIST
# define EEXIST 17
#endif
#ifndef E2BIG
# define E2BIG 7
#endif
#ifndef ENOMEM
# define ENOMEM 12
#endif

/* ---- what the loader fills in (.rodata) and shares (mmaped maps) ------------------------ */
const volatile struct stp_config stp_config = {};
const volatile struct stp_probe_strings stp_probe_table[STP_NPROBES] = {};
static const char stp__zero_area[STP_ZERO_SIZE] = {};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, uint32_t);
  __type(value, struct stp_session);
} stp_session SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, STP_RINGBUF_SIZE);
} stp_events SEC(".maps");

/* tokenize() keeps its state across calls of one handler (RUNTIME-HOOKS.md). */
struct _stp_tokenize {
  char buf[STP_MAXSTRINGLEN];
  long pos;
};

/* A string buffer as a type: global BPF subprograms take pointers to sized structs. */
struct stp_strbuf { char s[STP_MAXSTRINGLEN]; };

/* A kernel stack from bpf_get_stack() (bpf/stp_bpf_kstack.h). */
struct stp_kwalk {
  uint64_t hash;               /* FNV-1a over the pcs: the deferred token / stack id */
  uint32_t n;                  /* pcs[0..n) */
  uint32_t pad;
  uint64_t pcs[MAXBACKTRACE];
};

/* The runtime's part of a context. Generated code only uses error/errmsg (try/catch) and the
 * API; the rest is private. */
struct stp_common {
  uint32_t busy;
  int32_t probe_id;
  int32_t error;       /* a catchable runtime error is pending */
  int32_t abort;       /* abort(): not catchable */
  int32_t loc;         /* current location id (STP_SET_LOC), -1 unknown */
  int32_t errloc;      /* location of the pending error */
  int64_t actions;     /* MAXACTION accounting */
  uint32_t sfmt_pos;   /* sprintf: length of the text built so far */
  uint32_t rec_pos;    /* record being built in rec[] */
  uint32_t rec_overflow;
  uint8_t is_return;
  uint8_t user_mode;
  uint8_t kskip;       /* leading kernel frames that are the tracing glue, not the probed path */
  uint8_t slot;        /* STP_SLOT_*: per-slot per-CPU scratch (the row cache) */
#ifdef STP_CTF
  uint64_t hit_ns;     /* --ctf: when the probe was hit, every record's timestamp */
  uint32_t ctf_event;  /* --ctf: the hit's current trace event (bpf/stp_bpf_output.h) */
  uint32_t ctf_pad;
#endif
  uint64_t rec_clock[5];  /* the last clock read of a stack record (bpf/stp_bpf_rec_time.h) */
  uint64_t uregs_off;     /* task_pt_regs(t) - t->stack, learnt once (bpf/stp_bpf_task_uregs.h) */
  char errmsg[STP_MAXSTRINGLEN];
  struct _stp_tokenize tok;
  uint64_t sysrec[8];               /* a dispatched syscall probe's record (stp_bpf_probes.h) */
  struct stp_uwalk uw;              /* user-stack walk (bpf/stp_bpf_uwalk.h) */
  struct stp_kwalk kw;              /* kernel stack (bpf/stp_bpf_kstack.h) */
  char tmpa[2 * STP_MAXSTRINGLEN];  /* scratch: string ops (2x so a cat never overruns) */
  char tmpb[STP_MAXSTRINGLEN];
  char rec[STP_REC_CAP + STP_MAXSTRINGLEN + 16];  /* record scratch (see output.h) */
};

/* struct stp_context { LOCALS l; struct stp_common k; } and its map "stp_ctx".
 * The locals come first: BPF loads and stores take a 16-bit signed offset, and stp_common holds
 * the runtime's scratch buffers (~30 KiB at MAXSTRINGLEN 512). Behind them every local's
 * address needs its own register, and a probe with a few hundred temporaries then spilled past
 * the 512-byte BPF stack. The runtime reaches k through a pointer, at small offsets.
 * The map's value is declared as bytes: its BTF would otherwise hold every probe's locals (tens
 * of thousands of member names for 700 probes), and clang-14's BTF writer looks each string up
 * by a linear scan, once per instruction for the source file's name, which comes after them. */
#define STP_DEFINE_CONTEXT(LOCALS)                     \
  struct stp_context {                                 \
    LOCALS l;                                          \
    struct stp_common k;                               \
  };                                                   \
  struct {                                             \
    __uint(type, BPF_MAP_TYPE_ARRAY);                  \
    __uint(max_entries, 2 * STP_MAX_CPUS);             \
    __type(key, uint32_t);                             \
    __type(value, char[sizeof(struct stp_context)]);   \
  } stp_ctx SEC(".maps")

/* Scalar globals: one struct in a 1-entry mmapable array "stp_globals" (the loader and native
 * probes mmap it). Generated code always emits this, with a dummy member if there are none. */
#define STP_DEFINE_GLOBALS(T)                          \
  struct {                                             \
    __uint(type, BPF_MAP_TYPE_ARRAY);                  \
    __uint(max_entries, 1);                            \
    __uint(map_flags, BPF_F_MMAPABLE);                 \
    __type(key, uint32_t);                             \
    __type(value, T);                                  \
  } stp_globals SEC(".maps")

/* A runtime function that every probe calls (prologue, epilogue, errors, record output): one
 * BPF subprogram in .text that libbpf appends to each program using it, instead of a copy
 * inlined into every probe. clang's time is proportional to the code it generates: with these
 * inlined, a syscall probe's prologue and epilogue were ~300 instructions and pass 4 of
 * `probe syscall.*` (362 programs) compiled 900 KB of BPF (notes: docs/DESIGN.md "Pass 4").
 * Static subprograms may take and return any pointer (the verifier follows each call). */
#define STP_SUBPROG static __noinline

static __always_inline struct stp_session *stp__session(void)
{
  uint32_t zero = 0;
  return bpf_map_lookup_elem(&stp_session, &zero);
}

static __always_inline void stp__count(uint64_t *ctr)
{
  __sync_fetch_and_add(ctr, 1);
}

/* A pointer's value as a plain number for the verifier (global subprograms accept only scalars
 * in scalar arguments; probe arguments may hold pointers to BPF memory in tests). */
static __always_inline uint64_t stp__launder(uint64_t v)
{
  uint64_t out = 0;
  bpf_probe_read_kernel(&out, sizeof(out), &v);
  return out;
}

/* ---- errors ---------------------------------------------------------------------------- */
STP_SUBPROG void stp__error(struct stp_common *k, const char *msg, int loc)
{
  if (k->error || k->abort)
    return;  /* keep the first error: later statements of the handler never ran in stap */
  k->error = 1;
  k->errloc = loc == STP_LOC_CURRENT ? k->loc : loc;
  if (bpf_probe_read_kernel_str(k->errmsg, sizeof(k->errmsg), msg) < 0)
    k->errmsg[0] = '\0';
}
#define stp_error(c, msg, loc) stp__error(&(c)->k, (msg), (loc))
#define STP_ERRORED(c) ((c)->k.error | (c)->k.abort)
#define STP_CATCHABLE(c) ((c)->k.error)  /* try/catch tests and clears k.error only */
#define STP_SET_LOC(c, id) ((c)->k.loc = (id))

/* MAXACTION: an expression, nonzero once the limit is exceeded, so generated code may write
 * either `STP_ACTION(c, 1);` or `if (STP_ACTION(c, 1)) goto out;`. */
static __always_inline int stp__action(struct stp_common *k, int64_t n)
{
  k->actions += n;
  if (k->actions > STP_MAXACTION) {
    stp__error(k, "MAXACTION exceeded", STP_LOC_CURRENT);
    return 1;
  }
  return 0;
}
#define STP_ACTION(c, n) stp__action(&(c)->k, (n))

/* Script division: SystemTap's "division by 0" error; no signed BPF division before v4. */
static __always_inline int64_t stp__div(struct stp_common *k, int64_t a, int64_t b, int mod)
{
  if (b == 0) {
    stp__error(k, "division by 0", STP_LOC_CURRENT);
    return 0;
  }
  return mod ? stp_smod64(a, b) : stp_sdiv64(a, b);
}
#define stp_div(c, a, b) stp__div(&(c)->k, (a), (b), 0)
#define stp_mod(c, a, b) stp__div(&(c)->k, (a), (b), 1)

/* v = min(v, max) computed in the register that v's next use gets (a helper's size argument):
 * 6.1's verifier bounds only the register a comparison tests, and clang may test a copy and
 * pass another (a spill reloaded): "R2 unbounded memory access" / "R2 min value is negative"
 * on Debian 12's kernel. 6.4+ links the copies; there this is the same comparison. */
#define STP_CLAMP_REG(v, max) asm volatile("if %0 <= %1 goto +1\n\t%0 = %1" : "+r"(v) : "i"(max))

/* ---- loops: open-coded numeric iterator (kernel 6.4+), bounded by MAXACTION ------------- */
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __weak __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __weak __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __weak __ksym;

/* cleanup() target: a direct call, so clang 14 emits the kfunc's BTF (it does not for a
 * function named only in the attribute, and libbpf then cannot resolve the extern). */
static __always_inline void stp__iter_destroy(struct bpf_iter_num *it)
{
  bpf_iter_num_destroy(it);
}

static __always_inline int stp__loop_exhausted(struct stp_common *k)
{
  stp__error(k, "MAXACTION exceeded", STP_LOC_CURRENT);
  return 0;
}
/* `STP_LOOP(c) { if (!cond) break; body }`. The iterator is destroyed on every exit (cleanup
 * attribute), including break and goto. Running out of iterations raises MAXACTION exceeded;
 * the generated code tests STP_ERRORED(c) after the loop as after any call. */
#define STP_LOOP(c)                                                                     \
  for (struct bpf_iter_num stp__it __attribute__((cleanup(stp__iter_destroy))),     \
       *stp__itp = (bpf_iter_num_new(&stp__it, 0, STP_MAXACTION + 1), &stp__it);      \
       stp__itp && (bpf_iter_num_next(stp__itp) ? 1 : stp__loop_exhausted(&(c)->k));)

/* Before 6.4 (no bpf_iter_num) a loop's body is a bpf_loop() callback (5.17+, emitter.cpp's
 * kernel_bpf_loop): as many iterations as STP_LOOP's, within bpf_loop's 1 << 23. */
#define STP_LOOP_MAX (STP_MAXACTION + 1 < (1 << 23) ? STP_MAXACTION + 1 : (1 << 23))

/* ---- probe entry / exit ----------------------------------------------------------------- */
/* The context map's value for this CPU and slot, marked busy; `koff` is where its stp_common
 * lies (offsetof(struct stp_context, k): the context is generated after this header). */
STP_SUBPROG void *stp__enter_common(void *ctxmap, int slot, unsigned long koff)
{
  struct stp_session *s = stp__session();
  struct stp_common *k;
  char *v;
  uint32_t key;
  if (!s || s->state != STP_SESSION_RUNNING)
    return 0;
  key = bpf_get_smp_processor_id() * 2 + slot;
  v = bpf_map_lookup_elem(ctxmap, &key);
  if (!v)
    return 0;
  k = (struct stp_common *)(v + koff);
  if (__sync_lock_test_and_set(&k->busy, 1)) {
    stp__count(&s->skipped);
    return 0;
  }
  k->slot = (uint8_t)slot;
  return v;
}

STP_SUBPROG void stp__begin(struct stp_common *k, int id, int is_return, int umode)
{
  k->probe_id = id;
#ifdef STP_CTF
  k->hit_ns = bpf_ktime_get_ns();
  k->ctf_event = 0;
#endif
  k->error = 0;
  k->abort = 0;
  k->loc = -1;
  k->errloc = -1;
  k->actions = 0;
  k->sfmt_pos = 0;
  k->rec_pos = 0;
  k->rec_overflow = 0;
  k->is_return = is_return;
  k->user_mode = umode;
  k->kskip = 0;
  k->tok.buf[0] = '\0';
  k->tok.pos = 0;
}

STP_SUBPROG void stp__emit_error(struct stp_common *k);

/* Release the busy flag (BPF has no store-release; the barrier keeps the compiler from moving
 * the handler's stores after it, and this CPU is the only writer while busy). */
#define STP__RELEASE(k)                        \
  do {                                         \
    asm volatile("" ::: "memory");             \
    *(volatile uint32_t *)&(k)->busy = 0;      \
  } while (0)

STP_SUBPROG void stp__leave(struct stp_common *k)
{
  struct stp_session *s = stp__session();
  if (k->error && s) {
    stp__emit_error(k);
    if (__sync_fetch_and_add(&s->errors, 1) + 1 > STP_MAXERRORS) {
      s->state = STP_SESSION_ERROR;  /* no more probes; end probes are skipped */
      s->exit_requested = 1;
    }
  }
  STP__RELEASE(k);
}

/* Declares c and g; returns 0 from the probe when not RUNNING or when the context is busy.
 * The probe macros (stp_bpf_probes.h) define stp__slot_<id>, stp__isret_<id>() and
 * stp__umode_<id>(ctx) for ENTER. Locals are NOT zeroed: generated code initialises them. */
#define STP_PROBE_ENTER(id)                                                             \
  struct stp_context *c =                                                               \
      (struct stp_context *)stp__enter_common(&stp_ctx, stp__slot_##id,                  \
                                              __builtin_offsetof(struct stp_context, k)); \
  struct stp_globals *g;                                                                \
  if (!c)                                                                               \
    return 0;                                                                           \
  {                                                                                     \
    uint32_t stp__zero = 0;                                                             \
    g = bpf_map_lookup_elem(&stp_globals, &stp__zero);                                  \
  }                                                                                     \
  if (!g) {                                                                             \
    STP__RELEASE(&c->k);                                                    \
    return 0;                                                                           \
  }                                                                                     \
  stp__begin(&c->k, (id), stp__isret_##id(), stp__umode_##id(ctx))

#define STP_PROBE_LEAVE()  \
  do {                     \
    stp__leave(&c->k);     \
    return 0;              \
  } while (0)

#endif /* STP_BPF_BASE_H */
