/* ukstap runtime: compile-time limits and the statistics layout.
 *
 * Portable C (BPF C, native C, C++).  The generated file #defines STP_<LIMIT> before including
 * stp_runtime.h; SystemTap spellings (-D MAXSTRINGLEN=512) are accepted too, so tapset embedded
 * C and user -D options both work.  Every limit has ONE definition here, so the BPF module, the
 * native module and the ukstap binary cannot disagree on a buffer size.
 */
#ifndef STP_COMMON_LIMITS_H
#define STP_COMMON_LIMITS_H

#if defined(__bpf__) || defined(__UKSTAP_BPF__)
/* vmlinux.h provides the fixed-width types in BPF builds; stdint.h is not available there. */
# ifndef STP_HAVE_INT_TYPES
typedef __s64 int64_t;
typedef __u64 uint64_t;
typedef __s32 int32_t;
typedef __u32 uint32_t;
typedef __s16 int16_t;
typedef __u16 uint16_t;
typedef __u8 uint8_t;
#  define STP_HAVE_INT_TYPES 1
# endif
#else
# include <stdint.h>
#endif

#ifndef STP_MAXSTRINGLEN
# ifdef MAXSTRINGLEN
#  define STP_MAXSTRINGLEN MAXSTRINGLEN
# else
#  define STP_MAXSTRINGLEN 512  /* SystemTap on 64-bit hosts (its runtime_defines.h) */
# endif
#endif
#ifndef MAXSTRINGLEN
# define MAXSTRINGLEN STP_MAXSTRINGLEN
#endif

#ifndef STP_MAXMAPENTRIES
# ifdef MAXMAPENTRIES
#  define STP_MAXMAPENTRIES MAXMAPENTRIES
# else
#  define STP_MAXMAPENTRIES 2048
# endif
#endif

#ifndef STP_MAXACTION
# ifdef MAXACTION
#  define STP_MAXACTION MAXACTION
# else
#  define STP_MAXACTION 1000
# endif
#endif

/* Statements per run of a handler that runs with interrupts enabled: SystemTap's begin, end
 * and error probes (man stap, -D MAXACTION_INTERRUPTIBLE: default MAXACTION * 10). Here those
 * are the native probes of those kinds (translator: Emitter::emit_probe). */
#ifndef STP_MAXACTION_INTERRUPTIBLE
# ifdef MAXACTION_INTERRUPTIBLE
#  define STP_MAXACTION_INTERRUPTIBLE MAXACTION_INTERRUPTIBLE
# else
#  define STP_MAXACTION_INTERRUPTIBLE ((int64_t)STP_MAXACTION * 10)
# endif
#endif

#ifndef STP_MAXBACKTRACE
# ifdef MAXBACKTRACE
#  define STP_MAXBACKTRACE MAXBACKTRACE
# else
#  define STP_MAXBACKTRACE 128  /* stap: 20; ukstap walks full stacks (issue 5) */
# endif
#endif
#ifndef MAXBACKTRACE
# define MAXBACKTRACE STP_MAXBACKTRACE
#endif
/* Frames per stack (stap: -D MAXBACKTRACE=N): the walks index their pcs with a 10-bit mask
 * (bpf/stp_bpf_uwalk.h), and translator/driver/option_checks.cpp refuses other values first. */
#if MAXBACKTRACE < 1 || MAXBACKTRACE > 1024
# error "MAXBACKTRACE must be 1..1024"
#endif

#ifndef STP_MAXERRORS
# ifdef MAXERRORS
#  define STP_MAXERRORS MAXERRORS
# else
#  define STP_MAXERRORS 0
# endif
#endif

/* Most printf/print arguments pass 2 accepts. Sizes the record scratch buffer. */
#define STP_MAX_PRINTF_ARGS 32

/* BPF code masks string indexes with (STP_MAXSTRINGLEN - 1) instead of bounds checks the
 * verifier cannot follow; that only works for a power of two. (Array-size trick: works in C89,
 * C11, C++ and clang -target bpf alike.) */
typedef char stp_check_maxstringlen_pow2[((STP_MAXSTRINGLEN & (STP_MAXSTRINGLEN - 1)) == 0 &&
                                          STP_MAXSTRINGLEN >= 16) ? 1 : -1];
#define STP_STR_MASK (STP_MAXSTRINGLEN - 1)

/* Scalar statistics and scalar maps use this key so every stats map has the same shape. */
struct stp_key_unit { int32_t unit; };

/* Histogram kinds (MapInfo::hist_kind uses the same numbers). */
#define STP_HIST_NONE 0
#define STP_HIST_LOG 1
#define STP_HIST_LINEAR 2

/* Log histogram: index 0..63 hold -2^63 .. -2^0 (most negative first), 64 holds 0, 65..127 hold
 * 2^0 .. 2^62 — the bucket of v is labelled ±2^floor(log2|v|) (docs/STAP-FORMATS.md §1). */
#define STP_HIST_LOG_BUCKETS 128
#define STP_HIST_LOG_ZERO 64

/* The per-CPU part of every statistic.  avg_s/m2 are Welford's running mean and sum of squared
 * deviations (shift 0), kept so @variance can be merged across CPUs (stp_stat_merge). Buckets,
 * when the statistic has a histogram, follow these fields directly as int64_t[]; the runtime
 * finds them at offsetof-end of struct stp_stat_base, so a stats value struct MUST be
 * `struct X { STP_STAT_FIELDS; int64_t buckets[N]; }` (or no buckets). */
#define STP_STAT_FIELDS \
  int64_t count;        \
  int64_t sum;          \
  int64_t min;          \
  int64_t max;          \
  int64_t avg_s;        \
  int64_t m2;           \
  int64_t seq /* insertion number (foreach order); merged as the smallest nonzero */
struct stp_stat_base { STP_STAT_FIELDS; };
#define STP_STAT_NBUCKETS(type) ((sizeof(type) - sizeof(struct stp_stat_base)) / sizeof(int64_t))

/* Syscall numbers the dispatcher covers (x86_64: 462 in 6.18); each direction's prog array
 * has STP_SYS_NR places per slot (bpf/stp_bpf_probes.h, loader/run.cpp). */
#define STP_SYS_NR 512

#endif /* STP_COMMON_LIMITS_H */
