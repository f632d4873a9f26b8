/* ukstap runtime: the portable string algorithms behind the tapsets' string hooks
 * (tapsets/RUNTIME-HOOKS.md: _stp_strlen, _stp_substr, _stp_strpos, _stp_str_replace,
 * _stp_tokenize, _stp_strtol), with SystemTap's semantics (tapset/string.stp over the kernel's
 * strstr/strlcpy/strsep/simple_strtol).
 *
 * The SAME code runs in the BPF module (wrapped in global subprograms by bpf/stp_bpf_strings.h,
 * each verified once) and in the native module (called directly), as common/stp_format.h does:
 *   - every buffer has `cap` bytes (a power of two, cap == STP_MAXSTRINGLEN in BPF) and must be
 *     readable for cap bytes; results are NUL-terminated and cut at cap-1 characters;
 *   - every byte loop is ONE STP_FMT_FOR (bpf_loop in BPF: its callback is verified once, whatever
 *     the string lengths), never a nested loop: searches are written as state machines (position
 *     i, matched prefix k) and delimiter sets as a 256-bit map built by a separate loop;
 *   - every index is masked with (cap - 1) after an opaque move (STP_FMT_OPAQUE/STP_FMT_PUT).
 * No signed division; no libc.
 */
#ifndef STP_COMMON_STRINGS_H
#define STP_COMMON_STRINGS_H

#include "stp_format.h"

/* Byte i of a cap-byte buffer (masked, verifier-safe). */
#define STP_S_AT(buf, cap, i) stp_s_at((const char *)(buf), (cap), (uint32_t)(i))
STP_FMT_INLINE unsigned char stp_s_at(const char *buf, uint32_t cap, uint32_t i)
{
  STP_FMT_OPAQUE(i);
  return (unsigned char)buf[i & (cap - 1) & STP_FMT_BPF_MASK];
}

/* A zero the BPF verifier cannot see through. Loop state (positions, matched lengths, phases)
 * starts from it: a counter that starts as a known constant and steps by constants is tracked
 * exactly (and marked precise by the masked indexes), so the verifier would walk the bpf_loop
 * callback once per value and never converge; from an unknown start every visit of the callback
 * looks alike and it is verified a few times only. */
#if defined(__bpf__)
STP_FMT_INLINE uint32_t stp_s_opaque_zero(void)
{
  uint32_t z = 0, out = 0;
  bpf_probe_read_kernel(&out, sizeof(out), &z);
  return out;
}
#else
# define stp_s_opaque_zero() 0u
#endif

/* bpf_loop caps its count at 1 << 23. */
#define STP_S_MAXITER (1u << 23)
STP_FMT_INLINE uint32_t stp_s_iters(uint64_t n)
{
  return n > STP_S_MAXITER ? STP_S_MAXITER : (uint32_t)n;
}

/* ---- strlen ---------------------------------------------------------------------------- */
STP_FMT_INLINE int64_t stp_s_strlen(const char *s, uint32_t cap)
{
  return (int64_t)stp_fmt_strnlen(s, cap - 1, cap);
}

/* ---- copy n bytes of src from offset `from` to out at `pos` (the caller terminates) ------ */
struct stp_s_copy_st {
  char *out;
  const char *src;
  uint32_t cap, from, pos, n;
};
static long stp_s_copy_cb(uint32_t k, void *ctx)
{
  struct stp_s_copy_st *st = (struct stp_s_copy_st *)ctx;
  unsigned char ch;
  if (k >= st->n || st->pos >= st->cap - 1 || st->from + k >= st->cap)
    return 1;
  ch = stp_s_at(st->src, st->cap, st->from + k);
  if (!ch)
    return 1;
  STP_FMT_PUT(st->out, st->cap, st->pos, ch);
  st->pos++;
  return 0;
}

/* substr(str, start, length): SystemTap's strlcpy(out, str + start, clamp(length + 1, 0, cap))
 * when 0 <= start < strlen(str), else "". */
STP_FMT_INLINE uint32_t stp_s_substr(char *out, const char *s, uint32_t cap, int64_t start,
                                     int64_t length)
{
  struct stp_s_copy_st st;
  int64_t len = stp_s_strlen(s, cap);
  uint32_t z = stp_s_opaque_zero();
  st.out = out;
  st.src = s;
  st.cap = cap;
  st.pos = z;
  st.from = z;
  st.n = 0;
  if (start >= 0 && start < len && length > 0) {
    st.from = (uint32_t)start + z;
    st.n = length > (int64_t)(cap - 1) ? cap - 1 : (uint32_t)length;
    STP_FMT_FOR(st.n, stp_s_copy_cb, &st);
  }
  return stp_fmt_end(out, cap, st.pos);
}

/* ---- strpos: strstr as a state machine ------------------------------------------------- */
struct stp_s_find_st {
  const char *h, *n;
  uint32_t cap, hl, nl, i, k;
  int64_t found;
};
static long stp_s_find_cb(uint32_t it, void *ctx)
{
  struct stp_s_find_st *st = (struct stp_s_find_st *)ctx;
  (void)it;
  if (st->k >= st->nl) {
    st->found = st->i;
    return 1;
  }
  if (st->i + st->nl > st->hl)
    return 1;
  if (stp_s_at(st->h, st->cap, st->i + st->k) == stp_s_at(st->n, st->cap, st->k)) {
    st->k++;
  } else {
    st->i++;
    st->k = 0;
  }
  return 0;
}

/* The byte offset of the first needle in haystack, -1 when absent; 0 for an empty needle. */
STP_FMT_INLINE int64_t stp_s_strpos(const char *h, const char *n, uint32_t cap)
{
  struct stp_s_find_st st;
  st.h = h;
  st.n = n;
  st.cap = cap;
  st.hl = (uint32_t)stp_s_strlen(h, cap);
  st.nl = (uint32_t)stp_s_strlen(n, cap);
  st.i = stp_s_opaque_zero();
  st.k = st.i;
  st.found = -1;
  if (st.nl == 0)
    return 0;
  if (st.nl > st.hl)
    return -1;
  STP_FMT_FOR(stp_s_iters((uint64_t)(st.hl - st.nl + 2) * (st.nl + 1)), stp_s_find_cb, &st);
  return st.found;
}

/* ---- str_replace: every srch in s replaced by rplc, left to right, no overlap ---------- */
struct stp_s_repl_st {
  char *out;
  const char *s, *srch, *rplc;
  uint32_t cap, hl, sl, rl, i, k, r, pos, phase;
};
static long stp_s_repl_cb(uint32_t it, void *ctx)
{
  struct stp_s_repl_st *st = (struct stp_s_repl_st *)ctx;
  (void)it;
  if (st->pos >= st->cap - 1)
    return 1;
  if (st->phase) {  /* emitting rplc */
    if (st->r >= st->rl) {
      st->phase = 0;
      return 0;
    }
    STP_FMT_PUT(st->out, st->cap, st->pos, stp_s_at(st->rplc, st->cap, st->r));
    st->pos++;
    st->r++;
    return 0;
  }
  if (st->i >= st->hl)
    return 1;
  if (st->i + st->sl <= st->hl &&
      stp_s_at(st->s, st->cap, st->i + st->k) == stp_s_at(st->srch, st->cap, st->k)) {
    st->k++;
    if (st->k >= st->sl) {  /* a match: skip it, emit rplc */
      st->i += st->sl;
      st->k = 0;
      st->r = 0;
      st->phase = 1;
    }
    return 0;
  }
  STP_FMT_PUT(st->out, st->cap, st->pos, stp_s_at(st->s, st->cap, st->i));
  st->pos++;
  st->i++;
  st->k = 0;
  return 0;
}

STP_FMT_INLINE uint32_t stp_s_str_replace(char *out, const char *s, const char *srch,
                                          const char *rplc, uint32_t cap)
{
  struct stp_s_repl_st st;
  st.out = out;
  st.s = s;
  st.srch = srch;
  st.rplc = rplc;
  st.cap = cap;
  st.hl = (uint32_t)stp_s_strlen(s, cap);
  st.sl = (uint32_t)stp_s_strlen(srch, cap);
  st.rl = (uint32_t)stp_s_strlen(rplc, cap);
  st.i = st.k = st.r = st.pos = st.phase = stp_s_opaque_zero();
  if (st.sl == 0) {  /* SystemTap: the string unchanged */
    struct stp_s_copy_st cp;
    cp.out = out;
    cp.src = s;
    cp.cap = cap;
    cp.from = st.i;
    cp.pos = st.i;
    cp.n = cap - 1;
    STP_FMT_FOR(cap, stp_s_copy_cb, &cp);
    return stp_fmt_end(out, cap, cp.pos);
  }
  /* each source byte costs at most sl+1 steps, each output byte one */
  STP_FMT_FOR(stp_s_iters((uint64_t)(st.hl + 1) * (st.sl + 1) + cap), stp_s_repl_cb, &st);
  return stp_fmt_end(out, cap, st.pos);
}

/* ---- tokenize: strsep over a per-context copy, empty tokens skipped -------------------- */
struct stp_s_tok_st {
  char *out;
  const char *buf, *delim;
  uint32_t cap, pos, n, in_token, dl;
  uint8_t set[32];  /* delimiter bytes */
};
static long stp_s_delimset_cb(uint32_t k, void *ctx)
{
  struct stp_s_tok_st *st = (struct stp_s_tok_st *)ctx;
  unsigned char ch = stp_s_at(st->delim, st->cap, k);
  uint32_t b;
  if (!ch)
    return 1;
  b = (uint32_t)ch >> 3;
  STP_FMT_OPAQUE(b);
  st->set[b & 31] |= (uint8_t)(1u << (ch & 7));
  return 0;
}
static long stp_s_tok_cb(uint32_t it, void *ctx)
{
  struct stp_s_tok_st *st = (struct stp_s_tok_st *)ctx;
  unsigned char ch = stp_s_at(st->buf, st->cap, st->pos);
  uint32_t b = (uint32_t)ch >> 3;
  (void)it;
  if (!ch || st->pos >= st->cap - 1)
    return 1;
  STP_FMT_OPAQUE(b);
  st->pos++;
  if (st->set[b & 31] & (1u << (ch & 7))) {
    if (st->in_token)
      return 1;  /* the delimiter ending this token is consumed */
    return 0;    /* an empty token: skipped */
  }
  st->in_token = 1;
  STP_FMT_PUT(st->out, st->cap, st->n, ch);
  st->n++;
  return 0;
}

/* buf/pos: the state kept across calls of one handler. A non-empty input restarts it. */
STP_FMT_INLINE uint32_t stp_s_tokenize(char *out, char *buf, int64_t *pos, const char *input,
                                       const char *delim, uint32_t cap)
{
  struct stp_s_tok_st st;
  uint32_t k, z = stp_s_opaque_zero();
  if (stp_s_at(input, cap, 0)) {
    struct stp_s_copy_st cp;
    cp.out = buf;
    cp.src = input;
    cp.cap = cap;
    cp.from = z;
    cp.pos = z;
    cp.n = cap - 1;
    STP_FMT_FOR(cap, stp_s_copy_cb, &cp);
    stp_fmt_end(buf, cap, cp.pos);
    *pos = 0;
  }
  st.out = out;
  st.buf = buf;
  st.delim = delim;
  st.cap = cap;
  st.pos = (*pos < 0 ? 0 : *pos > (int64_t)(cap - 1) ? cap - 1 : (uint32_t)*pos) + z;
  st.n = z;
  st.in_token = z;
  for (k = 0; k < 32; k++)
    st.set[k] = 0;
  STP_FMT_FOR(cap, stp_s_delimset_cb, &st);
  STP_FMT_FOR(cap, stp_s_tok_cb, &st);
  *pos = st.pos;
  return stp_fmt_end(out, cap, st.n);
}

/* ---- strtol: the kernel's simple_strtol(str, NULL, base) -------------------------------- *
 * A leading '-' negates; no blanks, no '+'. Base 0: "0x" + hex digit -> 16, "0" -> 8, else 10;
 * base 16 skips a "0x"/"0X" prefix. Digits are 0-9 and a-f/A-F only, each below the base; the
 * value wraps modulo 2^64 (no overflow error). */
struct stp_s_num_st {
  const char *s;
  uint32_t cap, i;
  uint64_t base, v;
};
static long stp_s_num_cb(uint32_t it, void *ctx)
{
  struct stp_s_num_st *st = (struct stp_s_num_st *)ctx;
  unsigned char ch = stp_s_at(st->s, st->cap, st->i);
  uint64_t d;
  (void)it;
  if (st->i >= st->cap)
    return 1;
  if (ch >= '0' && ch <= '9')
    d = ch - '0';
  else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
    d = (ch | 0x20) - 'a' + 10;
  else
    return 1;
  if (d >= st->base)
    return 1;
  st->v = st->v * st->base + d;
  st->i++;
  return 0;
}

STP_FMT_INLINE int stp_s_isxdigit(unsigned char ch)
{
  return (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
}

STP_FMT_INLINE int64_t stp_s_strtol(const char *s, int64_t base, uint32_t cap)
{
  struct stp_s_num_st st;
  int neg = 0;
  uint32_t i = 0;
  uint64_t b = (uint32_t)base;  /* the kernel's unsigned int base */
  if (stp_s_at(s, cap, 0) == '-') {
    neg = 1;
    i = 1;
  }
  if (b == 0) {
    if (stp_s_at(s, cap, i) == '0') {
      if ((stp_s_at(s, cap, i + 1) | 0x20) == 'x' && stp_s_isxdigit(stp_s_at(s, cap, i + 2)))
        b = 16;
      else
        b = 8;
    } else {
      b = 10;
    }
  }
  if (b == 16 && stp_s_at(s, cap, i) == '0' && (stp_s_at(s, cap, i + 1) | 0x20) == 'x')
    i += 2;
  st.s = s;
  st.cap = cap;
  st.i = i + stp_s_opaque_zero();
  st.base = b;
  st.v = 0;
  STP_FMT_FOR(cap, stp_s_num_cb, &st);
  return neg ? (int64_t)(0 - st.v) : (int64_t)st.v;
}

/* ---- flag words of the syscall tapset (aux_syscalls.stp, docs/STAP-FORMATS.md §7) ----------------- *
 * Table-driven so a call is a few instructions at each call site (the script version inlined
 * thousands per call, and a probe's program must stay below 32K instructions). In table order, a
 * flag matches when ANY of its bits is set; its bits are then consumed; names are "|"-joined;
 * leftover bits print as 0x%x ("|0x%x" after a name); an empty result prints "0x%x" (0x0).
 *   STP_FLAGS_OPEN: O_RDONLY/O_WRONLY/O_RDWR/O_ACCMODE of f & 3 first, then the flags of
 *                   f & ~3 (32 bits).
 *   STP_FLAGS_PROT: PROT_NONE for 0.
 *   STP_FLAGS_MMAP: a huge-page size first (MAP_HUGE_2MB), from bits 26..31. */
#define STP_FLAGS_OPEN 0
#define STP_FLAGS_PROT 1
#define STP_FLAGS_MMAP 2
struct stp_flagdef {
  uint64_t mask;
  char name[16];
};
#define STP_FLAGS_MAX 16
static const struct stp_flagdef stp_flags_open[STP_FLAGS_MAX] = {
  {0100, "O_CREAT"}, {0200, "O_EXCL"}, {0400, "O_NOCTTY"}, {01000, "O_TRUNC"},
  {02000, "O_APPEND"}, {04000, "O_NONBLOCK"}, {04010000, "O_SYNC"}, {010000, "O_DSYNC"},
  {020000, "O_ASYNC"}, {040000, "O_DIRECT"}, {0100000, "O_LARGEFILE"}, {0200000, "O_DIRECTORY"},
  {0400000, "O_NOFOLLOW"}, {01000000, "O_NOATIME"}, {02000000, "O_CLOEXEC"}, {010000000, "O_PATH"},
};
static const struct stp_flagdef stp_flags_prot[STP_FLAGS_MAX] = {
  {1, "PROT_READ"}, {2, "PROT_WRITE"}, {4, "PROT_EXEC"}, {8, "PROT_SEM"},
  {0x01000000, "PROT_GROWSDOWN"}, {0x02000000, "PROT_GROWSUP"},
};
static const struct stp_flagdef stp_flags_mmap[STP_FLAGS_MAX] = {
  {0x1, "MAP_SHARED"}, {0x2, "MAP_PRIVATE"}, {0x10, "MAP_FIXED"}, {0x20, "MAP_ANONYMOUS"},
  {0x100, "MAP_GROWSDOWN"}, {0x800, "MAP_DENYWRITE"}, {0x1000, "MAP_EXECUTABLE"},
  {0x2000, "MAP_LOCKED"}, {0x4000, "MAP_NORESERVE"}, {0x8000, "MAP_POPULATE"},
  {0x10000, "MAP_NONBLOCK"}, {0x20000, "MAP_STACK"}, {0x40000, "MAP_HUGETLB"}, {0x40, "MAP_32BIT"},
};

/* Appends a name of at most 15 bytes (a bounded loop: names live in small rodata arrays, which
 * the cap-wide readers of stp_format.h may not touch). */
STP_FMT_INLINE uint32_t stp_s_put_name(char *out, uint32_t cap, uint32_t pos, const char *name)
{
  uint32_t k;
  for (k = 0; k < 15; k++) {
    char ch = name[k];
    if (!ch)
      break;
    pos = stp_fmt_putc(out, cap, pos, ch);
  }
  return pos;
}

/* One step of the table walk: entry e, k = 0 before its separator, then name byte k-1. */
struct stp_s_flags_st {
  char *out;
  const struct stp_flagdef *t;
  uint32_t cap, pos, e, k;
  uint64_t r;
};
static long stp_s_flags_cb(uint32_t it, void *ctx)
{
  struct stp_s_flags_st *st = (struct stp_s_flags_st *)ctx;
  uint32_t e = st->e, k = st->k;
  uint64_t m;
  char ch;
  (void)it;
  if (e >= STP_FLAGS_MAX)
    return 1;
  STP_FMT_OPAQUE(e);
  m = st->t[e & (STP_FLAGS_MAX - 1)].mask;
  if (!m)
    return 1;
  if (!(st->r & m)) {
    st->e = e + 1;
    st->k = 0;
    return 0;
  }
  if (k == 0) {
    if (st->pos)
      st->pos = stp_fmt_putc(st->out, st->cap, st->pos, '|');
    st->k = 1;
    return 0;
  }
  STP_FMT_OPAQUE(k);
  ch = k > 15 ? 0 : st->t[e & (STP_FLAGS_MAX - 1)].name[(k - 1) & 15];
  if (!ch) {
    st->r &= ~m;
    st->e = e + 1;
    st->k = 0;
    return 0;
  }
  st->pos = stp_fmt_putc(st->out, st->cap, st->pos, ch);
  st->k = k + 1;
  return 0;
}

STP_FMT_INLINE uint32_t stp_s_flags_str(char *out, uint32_t cap, int64_t value, int table)
{
  const struct stp_flagdef *t = table == STP_FLAGS_OPEN   ? stp_flags_open
                                : table == STP_FLAGS_PROT ? stp_flags_prot
                                                          : stp_flags_mmap;
  uint64_t r = (uint64_t)value;
  uint32_t pos = stp_s_opaque_zero();
  if (table == STP_FLAGS_OPEN) {
    uint32_t acc = (uint32_t)r & 3;
    pos = stp_s_put_name(out, cap, pos, acc == 0 ? "O_RDONLY" : acc == 1 ? "O_WRONLY"
                                        : acc == 2 ? "O_RDWR" : "O_ACCMODE");
    r &= 0xfffffffcull;
  } else if (table == STP_FLAGS_PROT) {
    if (r == 0)
      return stp_fmt_end(out, cap, stp_s_put_name(out, cap, pos, "PROT_NONE"));
  } else {
    uint32_t huge = (uint32_t)(r >> 26) & 0x3f;
    if (huge) {
      uint32_t sh = huge >= 30 ? huge - 30 : huge >= 20 ? huge - 20 : huge >= 10 ? huge - 10 : huge;
      pos = stp_s_put_name(out, cap, pos, "MAP_HUGE_");
      pos = stp_fmt_long(out, cap, pos, (int64_t)((uint64_t)1 << (sh & 63)), 'd', 0, 0, -1);
      pos = stp_s_put_name(out, cap, pos, huge >= 30 ? "GB" : huge >= 20 ? "MB" : huge >= 10 ? "KB" : "B");
      r &= ~(0x3full << 26);
    }
  }
  {
    struct stp_s_flags_st st;
    st.out = out;
    st.t = t;
    st.cap = cap;
    st.pos = pos;
    st.e = st.k = stp_s_opaque_zero();
    st.r = r;
    STP_FMT_FOR(STP_FLAGS_MAX * 18, stp_s_flags_cb, &st);
    pos = st.pos;
    r = st.r;
  }
  if (r || !pos) {
    if (pos)
      pos = stp_fmt_putc(out, cap, pos, '|');
    pos = stp_fmt_long(out, cap, pos, (int64_t)r, 'x', STP_FLAG_ALT, 0, -1);
  }
  return stp_fmt_end(out, cap, pos);
}

#endif /* STP_COMMON_STRINGS_H */
