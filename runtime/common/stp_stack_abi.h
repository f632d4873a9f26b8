/* ukstap runtime: what the BPF module, the native module and ukstap agree on about stacks.
 *
 * Portable C (BPF C, native C, C++). Each fact has ONE definition here, so the kernel side
 * (bpf/), the native side (native/) and the ukstap binary (loader/) cannot drift apart:
 *   - why a walk stopped (enum stp_unwind_stop): set by the unwinder (unwind/), carried by
 *     USTACK records (struct stp_ustack.stop) and the session counters, named by ukstap;
 *   - the content hash that makes a deferred token (stp_fnv_u64);
 *   - the deferred token and its text, "\x1e" LETTER <16 hex digits> "\x1f".
 *
 * Deferred tokens (RUNTIME-HOOKS.md): a sprint_* hook returns a token and emits a record that
 * defines it; ukstap replaces the token when the string is printed. The token is a hash of the
 * content, so equal stacks give equal strings and aggregations over sprint_ubacktrace() keys
 * still group them. Its value is seen only in the order of sorted string keys holding tokens,
 * but there it is output: changing the hash changes that order. What each hook hashes (h, then
 * stp_stack_token(h, kind, flags)):
 *   user stack (BPF)     FNV over tgid, then every pc                      kind PCS
 *   kernel stack (BPF)   FNV over every pc, then their number              kind PCS / NO_USER
 *   hex-list string      BPF: FNV over tgid (kernel: 0), then the string zero-padded to
 *                        MAXSTRINGLEN in 8-byte words; native: FNV over its bytes   kind HEXSTR
 *   user symbol (BPF)    FNV over tgid, then the address                   kind SYM
 *   symbol / stack id    FNV over the value: kernel symbols (BPF and native), user
 *                        symbols (native), stack ids (stp_value_token)     kind SYM / ID
 */
#ifndef STP_COMMON_STACK_ABI_H
#define STP_COMMON_STACK_ABI_H

#include "stp_limits.h"

#ifndef STP_STACK_INLINE
# define STP_STACK_INLINE static inline __attribute__((always_inline))
#endif

/* ---- why a walk stopped ----------------------------------------------------------------- */
/* A walk never invents a frame: when it cannot go on it stops and says why. The reasons are
 * counted per session (stp_session.ustack_stops[]) and shown with -v, and at exit when stacks
 * were cut short. */
enum stp_unwind_stop {
  STP_STOP_END = 0,         /* reached the outermost frame (frame pointer 0 / RA 0) */
  STP_STOP_DEPTH = 1,       /* MAXBACKTRACE frames */
  STP_STOP_READ_FAULT = 2,  /* a frame's memory could not be read */
  STP_STOP_BAD_FRAME = 3,   /* the next frame is not above this one on the stack, misaligned, or
                               beyond STP_STACK_SPAN (a frame pointer that is not one), or its
                               pc is in no executable mapping (a corrupt return address) */
  STP_STOP_NO_USER = 4,     /* no user registers: kernel thread, or a probe with no user context */
  STP_STOP_NO_TABLE = 5,    /* (DWARF walk) no unwind table for the pc */
  STP_STOP_INVALID_ROW = 6, /* (DWARF walk) the CFI rule cannot be evaluated here */
  STP_STOP_UNTRUSTED = 7,   /* (DWARF walk) the rule needs a register this context lacks */
  STP_STOP_NO_MAPPINGS = 8, /* (DWARF walk) neither the VMA mirror nor the kernel could say what
                               is mapped at the pc (the task's mmap lock was taken) */
  STP_STOP_FP_END = 9,      /* a frame-pointer step (code without an unwind table) found frame
                               pointer 0 or return address 0: a chain that ends there, which
                               says nothing about the end of the stack (code built without
                               frame pointers leaves rbp 0 or anything); never "end of stack" */
  STP_STOP_NO_TABLE_YET = 10, /* (DWARF walk) the pc's file will have a table, but it was not
                                loaded yet (a program's first events): a USNAP record
                                (common/stp_usnap.h) lets user space finish the walk */
  STP_STOP_NR = 11,
};
#define STP_STOP_MASK 15  /* counters are kept for 16 reasons (stp_session.ustack_stops) */

/* Names for -v and the exit summary (index: enum stp_unwind_stop). */
#define STP_UNWIND_STOP_NAMES                                                          \
  { "end of stack", "depth limit (MAXBACKTRACE)", "read fault", "bad frame",             \
    "no user registers", "no unwind table", "invalid unwind row", "untrusted register",    \
    "mappings unknown", "end of frame-pointer chain", "unwind table not loaded yet" }

/* ---- the content hash ------------------------------------------------------------------- */
/* FNV-1a's offset basis and prime, one 64-bit value per step instead of one byte: a pc is one
 * multiply in BPF, not eight. stp_fnv_u64(h, byte) over a string's bytes is FNV-1a 64 itself. */
#define STP_FNV_OFFSET 0xcbf29ce484222325ull
#define STP_FNV_PRIME 0x100000001b3ull
STP_STACK_INLINE uint64_t stp_fnv_u64(uint64_t h, uint64_t v)
{
  return (h ^ v) * STP_FNV_PRIME;
}

/* ---- the deferred token ----------------------------------------------------------------- */
/* The token of content hash h: the record's kind (enum stp_ustack_kind) and symbol flags are
 * mixed in, so one stack printed two ways has two tokens. Never 0: a record's token 0 means
 * "print now". */
STP_STACK_INLINE uint64_t stp_stack_token(uint64_t h, int kind, int flags)
{
  h = stp_fnv_u64(h, ((uint64_t)kind << 32) | (uint32_t)flags);
  return h ? h : 1;
}

/* The token of a single value (an address, a stack id): nothing else is hashed. */
STP_STACK_INLINE uint64_t stp_value_token(uint64_t v, int kind, int flags)
{
  return stp_stack_token(stp_fnv_u64(STP_FNV_OFFSET, v), kind, flags);
}

/* The text of a token in a script string: control bytes no script text holds around a letter
 * that says which table defines it and the token in 16 lowercase hex digits. */
#define STP_TOKEN_START '\x1e'
#define STP_TOKEN_END '\x1f'
#define STP_TOKEN_USER 'U'      /* USTACK records define it */
#define STP_TOKEN_KERNEL 'K'    /* KSTACK records define it */
#define STP_TOKEN_HEXID 'H'     /* ubacktrace() kept as a key: the digits are a stack id of the
                                   "stp_ubtstacks" map, printed as the hex list "0x... 0x... " */
#define STP_TOKEN_LEN 19        /* start, letter, 16 hex digits, end (no NUL) */
#define STP_TOKEN_KEY_SIZE 24   /* an array key field that only holds tokens (the token, its
                                   NUL, padding to 8: translator/passes/backtrace_tokens.h) */

/* buf (STP_TOKEN_LEN + 1 bytes) = the token's text and a NUL. No snprintf: BPF has none. */
STP_STACK_INLINE void stp_token_str(char *buf, uint64_t token, char letter)
{
  buf[0] = STP_TOKEN_START;
  buf[1] = letter;
#ifdef __clang__
#pragma unroll
#endif
  for (int i = 0; i < 16; i++) {
    uint32_t d = (token >> (60 - 4 * i)) & 15;
    buf[2 + i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
  }
  buf[18] = STP_TOKEN_END;
  buf[19] = '\0';
}

#endif /* STP_COMMON_STACK_ABI_H */
