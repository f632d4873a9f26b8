/* ukstap runtime: the portable formatting core (docs/STAP-FORMATS.md §3) and histogram bucketing (§1).
 *
 * The SAME code runs in the BPF module (sprintf), the native module and the ukstap binary (printf
 * records are formatted in user space), so all three print byte-identical text.
 *
 * Buffer convention, for every stp_fmt_* function:
 *   buf has `cap` bytes, cap a power of two; `pos` is where to append; the return value is the
 *   new pos. Text beyond cap-1 characters is dropped; buf[newpos] is always set to NUL.
 *   Indexes are masked with (cap - 1) and every loop has a constant bound, so the BPF verifier
 *   accepts the code when cap is a compile-time constant (runtime/bpf wraps these functions in
 *   global BPF subprograms, each verified once). %s's `0` flag quirk writes a NUL byte INTO the
 *   text (counted in pos), as SystemTap does.
 * No signed division anywhere: BPF before cpu v4 has only unsigned div/mod.
 */
#ifndef STP_COMMON_FORMAT_H
#define STP_COMMON_FORMAT_H

#include "stp_limits.h"

#ifndef STP_FMT_INLINE
# if defined(__bpf__)
#  define STP_FMT_INLINE static __attribute__((always_inline)) inline
# else
#  define STP_FMT_INLINE static inline
# endif
#endif

/* Every byte store goes through STP_FMT_PUT, buf[pos & (cap-1)] = ch. In BPF the index passes an
 * empty asm first, so clang can neither hoist the mask out of a loop (base + k after one mask is
 * what the verifier then rejects) nor turn a padding/copy loop into memset/memcpy calls (the BPF
 * backend cannot emit them); the store is volatile for the same second reason. */
#if defined(__bpf__)
# define STP_FMT_PUT(buf, cap, pos, ch)                          \
  do {                                                           \
    uint32_t stp__i = (uint32_t)(pos);                           \
    asm volatile("" : "+r"(stp__i));                             \
    *(volatile char *)&(buf)[stp__i & ((cap) - 1) & STP_FMT_BPF_MASK] = (char)(ch); \
  } while (0)
/* A value the compiler must forget (so a following mask is really emitted). */
# define STP_FMT_OPAQUE(v) asm volatile("" : "+r"(v))
/* In BPF every buffer has cap == STP_MAXSTRINGLEN; values read back from a loop context are
 * not known constants to the verifier, so indexes are also masked with the literal bound. */
# define STP_FMT_BPF_MASK (STP_MAXSTRINGLEN - 1)
#else
# define STP_FMT_BPF_MASK (~0u)
# define STP_FMT_PUT(buf, cap, pos, ch) ((buf)[(pos) & ((cap) - 1)] = (char)(ch))
# define STP_FMT_OPAQUE(v) ((void)0)
#endif

/* Byte-emitting loops run through STP_FMT_FOR(n, cb, ctx), cb(i, ctx) returning nonzero to stop:
 * bpf_loop in BPF (the callback body is verified once; an open-coded loop whose length depends
 * on a width or a string is re-walked by the verifier for every possible length and blows
 * its 1M-instruction budget), a plain loop elsewhere. */
#if defined(__bpf__)
# define STP_FMT_FOR(n, cb, ctx) ((void)bpf_loop((uint32_t)(n), (cb), (ctx), 0))
#else
# define STP_FMT_FOR(n, cb, ctx)                        \
  do {                                                  \
    uint32_t stp__k;                                    \
    for (stp__k = 0; stp__k < (uint32_t)(n); stp__k++)  \
      if ((cb)(stp__k, (ctx)))                          \
        break;                                          \
  } while (0)
#endif

/* Conversions: the conversion character itself, so generated code and tables stay readable. */
#define STP_CONV_d 'd'
#define STP_CONV_i 'i'
#define STP_CONV_u 'u'
#define STP_CONV_o 'o'
#define STP_CONV_x 'x'
#define STP_CONV_X 'X'
#define STP_CONV_p 'p'
#define STP_CONV_c 'c'
#define STP_CONV_s 's'
#define STP_CONV_b 'b'
#define STP_CONV_m 'm'
#define STP_CONV_M 'M'

/* Flags (SystemTap allows one per conversion; they are bits anyway). */
#define STP_FLAG_ZERO 1   /* 0 */
#define STP_FLAG_PLUS 2   /* + */
#define STP_FLAG_MINUS 4  /* - : left-justify */
#define STP_FLAG_SPACE 8  /* ' ' */
#define STP_FLAG_ALT 16   /* # */

#define STP_PREC_NONE (-1)  /* no precision given */

/* Packs conv/flags/width/prec in one u64 (BPF subprograms take at most 5 arguments).
 * width is clamped to [-32767, 32767] (negative = '-' flag, as C's `*`), prec to [-1, 32767]. */
#define STP_FMT_CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))
#define STP_FMT_SPEC(conv, flags, width, prec)                                    \
  ((uint64_t)(uint8_t)(conv) | ((uint64_t)(uint8_t)(flags) << 8) |                \
   ((uint64_t)(uint16_t)(int16_t)STP_FMT_CLAMP((int64_t)(width), -32767, 32767) << 16) | \
   ((uint64_t)(uint16_t)(int16_t)STP_FMT_CLAMP((int64_t)(prec), -1, 32767) << 32))
#define STP_SPEC_CONV(s) ((int)((s) & 0xff))
#define STP_SPEC_FLAGS(s) ((int)(((s) >> 8) & 0xff))
#define STP_SPEC_WIDTH(s) ((int)(int16_t)(uint16_t)(((s) >> 16) & 0xffff))
#define STP_SPEC_PREC(s) ((int)(int16_t)(uint16_t)(((s) >> 32) & 0xffff))

STP_FMT_INLINE uint32_t stp_fmt_putc(char *buf, uint32_t cap, uint32_t pos, char ch)
{
  if (pos < cap - 1) {
    STP_FMT_PUT(buf, cap, pos, ch);
    pos++;
  }
  return pos;
}

STP_FMT_INLINE uint32_t stp_fmt_end(char *buf, uint32_t cap, uint32_t pos)
{
  if (pos > cap - 1)
    pos = cap - 1;
  STP_FMT_PUT(buf, cap, pos, '\0');
  return pos;
}

/* The shape of every padded field: `lead` spaces, `hl` bytes of head (sign, 0x), `zeros` '0's,
 * `bl` bytes of body, `trail` spaces. The body is read from `body` (digits are stored
 * reversed: body_rev). */
struct stp_fmt_field {
  char *buf;
  const char *body;
  uint32_t cap, pos;
  int32_t lead, hl, zeros, bl, trail, body_rev;
  char head[4];
  char digits[32];  /* body_rev: the digits, least significant first */
};

static long stp_fmt_field_cb(uint32_t k, void *ctx)
{
  struct stp_fmt_field *f = (struct stp_fmt_field *)ctx;
  int32_t i = (int32_t)k, a1 = f->lead, a2 = a1 + f->hl, a3 = a2 + f->zeros, a4 = a3 + f->bl;
  uint32_t j;
  char ch;
  if (f->pos >= f->cap - 1)
    return 1;
  if (i < a1) {
    ch = ' ';
  } else if (i < a2) {
    ch = f->head[(i - a1) & 3];
  } else if (i < a3) {
    ch = '0';
  } else if (i < a4) {
    j = (uint32_t)(f->body_rev ? f->bl - 1 - (i - a3) : i - a3);
    STP_FMT_OPAQUE(j);
    if (f->body_rev)
      ch = f->digits[j & 31];
    else
      ch = f->body[j & (f->cap - 1) & STP_FMT_BPF_MASK];
  } else {
    ch = ' ';
  }
  STP_FMT_PUT(f->buf, f->cap, f->pos, ch);
  f->pos++;
  return 0;
}

STP_FMT_INLINE uint32_t stp_fmt_field_emit(struct stp_fmt_field *f)
{
  int32_t total = f->lead + f->hl + f->zeros + f->bl + f->trail;
  if (total > (int32_t)f->cap)
    total = (int32_t)f->cap;
  if (total > 0)
    STP_FMT_FOR(total, stp_fmt_field_cb, f);
  return f->pos;
}

STP_FMT_INLINE void stp_fmt_field_init(struct stp_fmt_field *f, char *buf, uint32_t cap, uint32_t pos)
{
  f->buf = buf;
  f->body = buf;
  f->cap = cap;
  f->pos = pos > cap - 1 ? cap - 1 : pos;
  f->lead = f->hl = f->zeros = f->bl = f->trail = f->body_rev = 0;
}

/* n copies of ch (n <= 0: none). */
STP_FMT_INLINE uint32_t stp_fmt_pad(char *buf, uint32_t cap, uint32_t pos, int n, char ch)
{
  struct stp_fmt_field f;
  stp_fmt_field_init(&f, buf, cap, pos);
  if (ch == '0')
    f.zeros = n > 0 ? n : 0;
  else
    f.lead = n > 0 ? n : 0;
  return stp_fmt_field_emit(&f);
}

/* Width/precision normalisation shared by all conversions: a negative width means '-'. */
STP_FMT_INLINE int stp_fmt_width(int *flags, int width, uint32_t cap)
{
  if (width < 0) {
    *flags |= STP_FLAG_MINUS;
    width = -width;
  }
  if (width > (int)cap)
    width = (int)cap;
  return width;
}

/* strnlen bounded by cap. */
struct stp_fmt_len { const char *s; uint32_t max, len, cap; };
static long stp_fmt_len_cb(uint32_t k, void *ctx)
{
  struct stp_fmt_len *l = (struct stp_fmt_len *)ctx;
  uint32_t i = k;
  STP_FMT_OPAQUE(i);
  if (k >= l->max || !l->s[i & (l->cap - 1) & STP_FMT_BPF_MASK])
    return 1;
  l->len = k + 1;
  return 0;
}
STP_FMT_INLINE uint32_t stp_fmt_strnlen(const char *s, uint32_t max, uint32_t cap)
{
  struct stp_fmt_len l;
  l.s = s;
  l.max = max < cap ? max : cap;
  l.len = 0;
  l.cap = cap;
  STP_FMT_FOR(l.max, stp_fmt_len_cb, &l);
  return l.len;
}

/* Appends a literal (up to NUL or n bytes). In BPF, s must be readable for cap bytes (the
 * verifier only knows the index is below cap): copy short literals to a buffer first. */
STP_FMT_INLINE uint32_t stp_fmt_lit(char *buf, uint32_t cap, uint32_t pos, const char *s, uint32_t n)
{
  struct stp_fmt_field f;
  stp_fmt_field_init(&f, buf, cap, pos);
  f.body = s;
  f.bl = (int32_t)stp_fmt_strnlen(s, n, cap);
  return stp_fmt_end(buf, cap, stp_fmt_field_emit(&f));
}

/* %c and %#c. The escaped form of one byte is at most 4 characters. */
STP_FMT_INLINE int stp_fmt_char_escape(unsigned char ch, char out[4])
{
  char e = 0;
  switch (ch) {
  case '\n': e = 'n'; break;
  case '\t': e = 't'; break;
  case '\'': e = '\''; break;
  case '\\': e = '\\'; break;
  case '\a': e = 'a'; break;
  case '\b': e = 'b'; break;
  case '\f': e = 'f'; break;
  case '\r': e = 'r'; break;
  case '\v': e = 'v'; break;
  default: break;
  }
  if (e) {
    out[0] = '\\';
    out[1] = e;
    return 2;
  }
  if (ch >= 0x20 && ch < 0x7f) {
    out[0] = (char)ch;
    return 1;
  }
  out[0] = '\\';
  out[1] = (char)('0' + ((ch >> 6) & 3));
  out[2] = (char)('0' + ((ch >> 3) & 7));
  out[3] = (char)('0' + (ch & 7));
  return 4;
}

STP_FMT_INLINE uint32_t stp_fmt_char(char *buf, uint32_t cap, uint32_t pos, int64_t v, int flags,
                                     int width)
{
  char text[4];
  int n = 1, k;
  if (pos > cap - 1)
    pos = cap - 1;
  width = stp_fmt_width(&flags, width, cap);
  text[0] = (char)(v & 0xff);
  if (flags & STP_FLAG_ALT)
    n = stp_fmt_char_escape((unsigned char)(v & 0xff), text);
  if (!(flags & STP_FLAG_MINUS))
    pos = stp_fmt_pad(buf, cap, pos, width - n, ' ');
  for (k = 0; k < 4; k++)
    if (k < n)
      pos = stp_fmt_putc(buf, cap, pos, text[k]);
  if (flags & STP_FLAG_MINUS)
    pos = stp_fmt_pad(buf, cap, pos, width - n, ' ');
  return stp_fmt_end(buf, cap, pos);
}

/* %b: raw little-endian bytes of v, width 1, 2, 4 or 8 (anything else: 8). */
STP_FMT_INLINE uint32_t stp_fmt_bin(char *buf, uint32_t cap, uint32_t pos, int64_t v, int width)
{
  int n = (width == 1 || width == 2 || width == 4) ? width : 8, k;
  uint64_t u = (uint64_t)v;
  if (pos > cap - 1)
    pos = cap - 1;
  for (k = 0; k < 8; k++)
    if (k < n)
      pos = stp_fmt_putc(buf, cap, pos, (char)((u >> (8 * k)) & 0xff));
  return stp_fmt_end(buf, cap, pos);
}

/* %s with width, '-' and precision (C semantics); `smax` bounds the source. */
STP_FMT_INLINE uint32_t stp_fmt_str(char *buf, uint32_t cap, uint32_t pos, const char *s,
                                    uint32_t smax, int flags, int width, int prec)
{
  struct stp_fmt_field f;
  uint32_t len;
  width = stp_fmt_width(&flags, width, cap);
  if (smax > cap)
    smax = cap;
  if (prec >= 0 && (uint32_t)prec < smax)
    smax = (uint32_t)prec;
  len = stp_fmt_strnlen(s, smax, cap);
  stp_fmt_field_init(&f, buf, cap, pos);
  f.body = s;
  f.bl = (int32_t)len;
  if ((int)len < width) {
    if (flags & STP_FLAG_MINUS)
      f.trail = width - (int)len;
    else
      f.lead = width - (int)len;
  }
  pos = stp_fmt_field_emit(&f);
  if (flags & STP_FLAG_ZERO)
    pos = stp_fmt_putc(buf, cap, pos, '\0');
  return stp_fmt_end(buf, cap, pos);
}

/* %m (raw bytes) and %M (two lowercase hex digits per byte) of n bytes already fetched;
 * mem must be readable for cap bytes. */
struct stp_fmt_memst { char *buf; const uint8_t *mem; uint32_t cap, pos, hex; };
static long stp_fmt_mem_cb(uint32_t k, void *ctx)
{
  struct stp_fmt_memst *m = (struct stp_fmt_memst *)ctx;
  const char *hex = "0123456789abcdef";
  uint32_t i = k;
  uint8_t b;
  STP_FMT_OPAQUE(i);
  b = m->mem[i & (m->cap - 1) & STP_FMT_BPF_MASK];
  if (m->hex) {
    m->pos = stp_fmt_putc(m->buf, m->cap, m->pos, hex[(b >> 4) & 15]);
    m->pos = stp_fmt_putc(m->buf, m->cap, m->pos, hex[b & 15]);
  } else {
    m->pos = stp_fmt_putc(m->buf, m->cap, m->pos, (char)b);
  }
  return m->pos >= m->cap - 1;
}

STP_FMT_INLINE uint32_t stp_fmt_mem(char *buf, uint32_t cap, uint32_t pos, const uint8_t *mem,
                                    uint32_t n, int conv, int flags, int width)
{
  struct stp_fmt_memst m;
  uint32_t outlen;
  if (pos > cap - 1)
    pos = cap - 1;
  width = stp_fmt_width(&flags, width, cap);
  if (n > cap)
    n = cap;
  outlen = conv == STP_CONV_M ? 2 * n : n;
  if (!(flags & STP_FLAG_MINUS))
    pos = stp_fmt_pad(buf, cap, pos, width - (int)outlen, ' ');
  m.buf = buf;
  m.mem = mem;
  m.cap = cap;
  m.pos = pos;
  m.hex = conv == STP_CONV_M;
  if (n)
    STP_FMT_FOR(n, stp_fmt_mem_cb, &m);
  pos = m.pos;
  if (flags & STP_FLAG_MINUS)
    pos = stp_fmt_pad(buf, cap, pos, width - (int)outlen, ' ');
  return stp_fmt_end(buf, cap, pos);
}

struct stp_fmt_digits {
  struct stp_fmt_field *f;
  const char *set;
  uint64_t num;
  uint32_t shift, nd;
};
static long stp_fmt_digit_cb(uint32_t k, void *ctx)
{
  struct stp_fmt_digits *d = (struct stp_fmt_digits *)ctx;
  uint64_t v;
  if (d->shift) {
    v = d->num & ((1u << (d->shift & 7)) - 1);
    d->num >>= (d->shift & 7);
  } else {
    v = d->num % 10;
    d->num /= 10;
  }
  STP_FMT_OPAQUE(v);
  d->f->digits[k & 31] = d->set[v & 15];
  d->nd = k + 1;
  return d->num == 0;
}

/* Integer conversions d i u o x X p (and c/b delegated), all 64-bit. The layout follows
 * SystemTap's number(): [spaces][sign][0x|0][zeros or spaces][precision zeros][digits][spaces].
 * '#' always prefixes (%#x of 0 is 0x0, %#o of 0 is 00); %p is %#x. */
STP_FMT_INLINE uint32_t stp_fmt_long(char *buf, uint32_t cap, uint32_t pos, int64_t v, int conv,
                                     int flags, int width, int prec)
{
  struct stp_fmt_field f;
  const char *set = "0123456789abcdef";
  uint64_t num = (uint64_t)v;
  unsigned base = 10, shift = 0;
  int nd = 0, size, is_signed = 0;
  char sign = 0;

  if (conv == STP_CONV_c)
    return stp_fmt_char(buf, cap, pos, v, flags, width);
  if (conv == STP_CONV_b)
    return stp_fmt_bin(buf, cap, pos, v, width);
  if (pos > cap - 1)
    pos = cap - 1;
  width = stp_fmt_width(&flags, width, cap);
  if (prec > (int)cap)
    prec = (int)cap;
  switch (conv) {
  case STP_CONV_o: base = 8; shift = 3; break;
  case STP_CONV_X: set = "0123456789ABCDEF"; base = 16; shift = 4; break;
  case STP_CONV_p: flags |= STP_FLAG_ALT; base = 16; shift = 4; break;
  case STP_CONV_x: base = 16; shift = 4; break;
  case STP_CONV_u: break;
  default: is_signed = 1; break;  /* d, i */
  }
  if (flags & STP_FLAG_MINUS)
    flags &= ~STP_FLAG_ZERO;
  size = width;
  if (is_signed) {
    if (v < 0) {
      sign = '-';
      num = 0 - (uint64_t)v;
    } else if (flags & STP_FLAG_PLUS) {
      sign = '+';
    } else if (flags & STP_FLAG_SPACE) {
      sign = ' ';
    }
    if (sign)
      size--;
  }
  if (flags & STP_FLAG_ALT)
    size -= base == 16 ? 2 : base == 8 ? 1 : 0;
  stp_fmt_field_init(&f, buf, cap, pos);
  /* all digit slots written first: the BPF verifier then sees the same stack whatever the
   * number of digits, and prunes */
  __builtin_memset(f.digits, '0', sizeof(f.digits));
  /* digits, least significant first; 22 octal digits is the most a u64 needs */
  {
    struct stp_fmt_digits d;
    d.f = &f;
    d.num = num;
    d.set = set;
    d.shift = shift;
    d.nd = 0;
    STP_FMT_FOR(24, stp_fmt_digit_cb, &d);
    nd = (int)d.nd;
  }
  if (prec < nd)
    prec = nd;
  size -= prec;
  if (size < 0)
    size = 0;
  {
    /* head = [sign]["0"]["x"], written at constant indexes (a variable stack index makes clang
     * emit pointer arithmetic the verifier refuses) */
    char x = conv == STP_CONV_X ? 'X' : 'x';
    int has0 = (flags & STP_FLAG_ALT) && (base == 8 || base == 16);
    int hasx = (flags & STP_FLAG_ALT) && base == 16;
    f.hl = (sign ? 1 : 0) + has0 + hasx;
    if (sign) {
      f.head[0] = sign;
      f.head[1] = '0';
      f.head[2] = x;
    } else {
      f.head[0] = '0';
      f.head[1] = x;
    }
    f.lead = (flags & (STP_FLAG_ZERO | STP_FLAG_MINUS)) ? 0 : size;
    f.zeros = ((flags & STP_FLAG_ZERO) ? size : 0) + prec - nd;
    f.trail = (flags & STP_FLAG_MINUS) ? size : 0;
    f.bl = nd;
    f.body_rev = 1;
    pos = stp_fmt_field_emit(&f);
  }
  return stp_fmt_end(buf, cap, pos);
}

/* Same, with the packed spec (STP_FMT_SPEC). */
STP_FMT_INLINE uint32_t stp_fmt_long_spec(char *buf, uint32_t cap, uint32_t pos, int64_t v,
                                          uint64_t spec)
{
  return stp_fmt_long(buf, cap, pos, v, STP_SPEC_CONV(spec), STP_SPEC_FLAGS(spec),
                      STP_SPEC_WIDTH(spec), STP_SPEC_PREC(spec));
}

/* ---- integer conversions of a constant shape ------------------------------------------------
 * %d %i %u %o %x %X %p with any flags, a constant width 0..24 and no precision (or 0 or 1, which
 * never pad: at least one digit is always written) print exactly what stp_fmt_long prints. They
 * are nearly every number a tapset formats (argstr's "%d, %p, %#o", "[%d.%09d]"), and in BPF this
 * version costs the verifier ~1,500 instructions where stp_fmt_long's conversion/flag/width
 * branches times its two bpf_loop callbacks cost ~57,000 -- once per program that formats a
 * number, i.e. once per syscall alias of `probe syscall.* { argstr }` (docs/DESIGN.md). So: no
 * branch, no loop that is not unrolled. The conversion is decoded at compile time into
 * STP_NUM_SPEC; digits are made by a fixed 24 rounds of div/mod (22 octal digits is the most a
 * u64 needs), and the field [spaces][sign][0x][zeros][digits][spaces] (at most 24 bytes) is
 * written as 26 fixed stores, each position choosing its byte arithmetically (0/1 values times
 * indexes) from a small table; past the field the stores write NULs, and positions past cap-1
 * all land on cap-1, which the final NUL takes. */
#define STP_NUM_MAXWIDTH 24
#define STP_NUM_OK(conv, width, prec)                                                       \
  ((((conv) == STP_CONV_d) || ((conv) == STP_CONV_i) || ((conv) == STP_CONV_u) ||            \
    ((conv) == STP_CONV_o) || ((conv) == STP_CONV_x) || ((conv) == STP_CONV_X) ||            \
    ((conv) == STP_CONV_p)) && (width) >= 0 && (width) <= STP_NUM_MAXWIDTH &&                \
   (prec) >= -1 && (prec) <= 1)
/* base (8, 10, 16) | signed << 8 | uppercase << 9 | '#' or %p << 10 | '+' << 11 | ' ' << 12 |
 * '0' << 13 | '-' << 14 | width << 16 */
#define STP_NUM_SPEC(conv, flags, width)                                                    \
  ((uint64_t)((conv) == STP_CONV_o ? 8                                                      \
              : ((conv) == STP_CONV_x || (conv) == STP_CONV_X || (conv) == STP_CONV_p) ? 16 \
                                                                                      : 10) | \
   ((uint64_t)((conv) == STP_CONV_d || (conv) == STP_CONV_i) << 8) |                       \
   ((uint64_t)((conv) == STP_CONV_X) << 9) |                                                \
   ((uint64_t)((conv) == STP_CONV_p || ((flags) & STP_FLAG_ALT) != 0) << 10) |             \
   ((uint64_t)(((flags) & STP_FLAG_PLUS) != 0) << 11) |                                     \
   ((uint64_t)(((flags) & STP_FLAG_SPACE) != 0) << 12) |                                    \
   ((uint64_t)(((flags) & STP_FLAG_ZERO) != 0) << 13) |                                     \
   ((uint64_t)(((flags) & STP_FLAG_MINUS) != 0) << 14) |                                    \
   ((uint64_t)((width) & 0xff) << 16))

/* 1 when x != 0, else 0; 1 when a < b (both below 2^63), else 0: without a branch. The result
 * and its input pass an empty asm, or clang sees the comparison in the arithmetic (and a 0/1
 * times y as a select) and emits the branches that this code exists to avoid. */
STP_FMT_INLINE uint64_t stp_num_bit(uint64_t top)
{
  uint64_t b;
  STP_FMT_OPAQUE(top);
  b = top >> 63;
  STP_FMT_OPAQUE(b);
  return b;
}
#define STP_NUM_NZ(x) stp_num_bit(((uint64_t)(x)) | (0 - (uint64_t)(x)))
#define STP_NUM_LT(a, b) stp_num_bit((uint64_t)(a) - (uint64_t)(b))

STP_FMT_INLINE uint32_t stp_fmt_num(char *buf, uint32_t cap, uint32_t pos, int64_t v, uint64_t ns)
{
  uint64_t base = ns & 0xff, sgn = (ns >> 8) & 1, upper = (ns >> 9) & 1, alt = (ns >> 10) & 1;
  uint64_t minus = (ns >> 14) & 1, zero = (ns >> 13) & 1 & (minus ^ 1), width = (ns >> 16) & 0xff;
  uint64_t neg = ((uint64_t)v >> 63) & sgn;
  uint64_t num = ((uint64_t)v ^ (0 - neg)) + neg;  /* |v| when negative and signed */
  uint64_t plus = sgn & (ns >> 11) & 1 & (neg ^ 1);
  uint64_t space = sgn & (ns >> 12) & 1 & (neg ^ 1) & (plus ^ 1);
  uint64_t hs = neg | plus | space;
  uint64_t signch, has0, hasx, xch, letter;
  uint64_t nd = 1, hl, pad, a1, a2, a3, a4, n, end, last = cap - 1;
  uint32_t k;
  /* a[0..2]: the head; a[3] ' ', a[4] '0'; a[8..31]: the digits, least significant in a[31].
   * Every byte is set: the verifier lets a variable index read only initialised stack. */
  char a[32];
  STP_FMT_OPAQUE(neg);  /* 0/1 values: opaque, for the reason given at stp_num_bit */
  STP_FMT_OPAQUE(plus);
  STP_FMT_OPAQUE(space);
  STP_FMT_OPAQUE(hs);
  STP_FMT_OPAQUE(upper);
  STP_FMT_OPAQUE(alt);
  STP_FMT_OPAQUE(minus);
  STP_FMT_OPAQUE(zero);
  signch = neg * '-' + plus * '+' + space * ' ';
  has0 = alt & STP_NUM_NZ(base ^ 10);
  hasx = alt & (base >> 4);
  xch = 'x' - upper * 32;
  letter = 39 - upper * 32;  /* 'a' - '0' - 10, or 'A' - '0' - 10 */
  if (pos > last)
    pos = (uint32_t)last;
  for (k = 0; k < 8; k++)
    *(volatile char *)&a[k] = 0;
  *(volatile char *)&a[0] = (char)(hs * signch + (hs ^ 1) * '0');
  *(volatile char *)&a[1] = (char)(hs * '0' + (hs ^ 1) * xch);
  *(volatile char *)&a[2] = (char)xch;
  *(volatile char *)&a[3] = ' ';
  *(volatile char *)&a[4] = '0';
#if defined(__clang__)
#pragma unroll
#endif
  for (k = 0; k < 24; k++) {
    uint64_t d = num % base;
    num /= base;
    STP_FMT_OPAQUE(num);  /* one round at a time: unrolled and interleaved, clang spills */
    *(volatile char *)&a[31 - k] = (char)('0' + d + STP_NUM_LT(9, d) * letter);
    nd += STP_NUM_NZ(num);  /* something left: one more digit */
  }
  hl = hs + has0 + hasx;
  /* stp_fmt_long's size: width less the head and the digits, if positive */
  pad = (width - hl - nd) * STP_NUM_LT(hl + nd, width);
  a1 = pad * (zero ^ 1) * (minus ^ 1);  /* lead spaces */
  a2 = a1 + hl;
  a3 = a2 + pad * zero;                  /* zeros */
  a4 = a3 + nd;
  n = a4 + pad * minus;                  /* trailing spaces */
#if defined(__clang__)
#pragma unroll
#endif
  for (k = 0; k < 26; k++) {
    uint64_t j = k, l1, l2, l3, l4, live, idx, at, over, ch;
    STP_FMT_OPAQUE(j);  /* as above: no constant of one store hoisted into a register for all */
    l1 = STP_NUM_LT(j, a1);
    l2 = STP_NUM_LT(j, a2);
    l3 = STP_NUM_LT(j, a3);
    l4 = STP_NUM_LT(j, a4);
    live = STP_NUM_LT(j, n);
    /* the segment j is in picks the index: ' ', head byte, '0', digit, ' ' */
    idx = l1 * 3 + (l2 - l1) * (j - a1) + (l3 - l2) * 4 + (l4 - l3) * (32 - nd + j - a3) +
          (live - l4) * 3;
    at = pos + j;
    over = STP_NUM_LT(last, at);
    ch = (uint64_t)(uint8_t)((volatile char *)a)[idx & 31] * live;
    STP_FMT_OPAQUE(ch);
    at = (over ^ 1) * at + over * last;
    STP_FMT_PUT(buf, cap, at, ch);
  }
  end = pos + n;
  return stp_fmt_end(buf, cap, (uint32_t)(end > last ? last : end));
}

/* ---- _stp_text_str core: escape `inlen` bytes already fetched ----------------------------
 * Escapes \a \b \f \n \r \t \v \" \\, other non-printables \ooo, valid UTF-8 sequences \uXXXX
 * (uppercase hex; code points above U+FFFF: \UXXXXXXXX). `buffer`: all inlen bytes, NUL shown
 * as \0; else stop at the first NUL. At most min(outlen, cap-1) characters are written; when
 * `quoted` the text is wrapped in "..." and a cut text ends with `"...` (outlen 50 keeps 45
 * characters of text). An escape is never split. */
STP_FMT_INLINE int stp_text_unit(const uint8_t *in, uint32_t cap, uint32_t i, uint32_t inlen,
                                 int buffer, char out[12], uint32_t *consumed)
{
  const char *hexu = "0123456789ABCDEF";
  uint8_t ch;
  uint32_t ii = i;
  STP_FMT_OPAQUE(ii);
  ch = in[ii & (cap - 1) & STP_FMT_BPF_MASK];
  char e = 0;
  uint32_t need = 0, cp = 0, k;
  *consumed = 1;
  switch (ch) {
  case '\a': e = 'a'; break;
  case '\b': e = 'b'; break;
  case '\f': e = 'f'; break;
  case '\n': e = 'n'; break;
  case '\r': e = 'r'; break;
  case '\t': e = 't'; break;
  case '\v': e = 'v'; break;
  case '"': e = '"'; break;
  case '\\': e = '\\'; break;
  case 0: if (buffer) e = '0'; break;
  default: break;
  }
  if (e) {
    out[0] = '\\';
    out[1] = e;
    return 2;
  }
  if (ch >= 0x20 && ch < 0x7f) {
    out[0] = (char)ch;
    return 1;
  }
  if ((ch & 0xe0) == 0xc0) { need = 1; cp = ch & 0x1f; }
  else if ((ch & 0xf0) == 0xe0) { need = 2; cp = ch & 0x0f; }
  else if ((ch & 0xf8) == 0xf0) { need = 3; cp = ch & 0x07; }
  if (need && i + need < inlen) {
    uint32_t ok = 1;
    for (k = 1; k <= 3; k++) {
      uint8_t cc;
      if (k > need)
        break;
      if (i + k >= inlen) { ok = 0; break; }
      ii = i + k;
      STP_FMT_OPAQUE(ii);
      cc = in[ii & (cap - 1) & STP_FMT_BPF_MASK];
      if ((cc & 0xc0) != 0x80) { ok = 0; break; }
      cp = (cp << 6) | (cc & 0x3f);
    }
    /* reject overlong forms and surrogates: they are not characters */
    if (ok && ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) ||
               (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)))
      ok = 0;
    if (ok) {
      int nd = cp > 0xffff ? 8 : 4;
      *consumed = need + 1;
      out[0] = '\\';
      out[1] = nd == 8 ? 'U' : 'u';
      for (k = 0; k < 8; k++)
        if ((int)k < nd)
          out[2 + k] = hexu[(cp >> (4 * (nd - 1 - k))) & 15];
      return 2 + nd;
    }
  }
  out[0] = '\\';
  out[1] = (char)('0' + ((ch >> 6) & 3));
  out[2] = (char)('0' + ((ch >> 3) & 7));
  out[3] = (char)('0' + (ch & 7));
  return 4;
}

struct stp_text_st {
  char *out;
  const uint8_t *in;
  uint32_t cap, inlen, pos, i, cut, limit, max;
  int32_t buffer, truncated;
};

static long stp_text_cb(uint32_t it, void *ctx)
{
  struct stp_text_st *t = (struct stp_text_st *)ctx;
  char unit[12];
  uint32_t used = 1, n, k, ii = t->i;
  (void)it;
  STP_FMT_OPAQUE(ii);
  if (t->i >= t->inlen || (!t->buffer && !t->in[ii & (t->cap - 1) & STP_FMT_BPF_MASK]))
    return 1;
  n = (uint32_t)stp_text_unit(t->in, t->cap, t->i, t->inlen, t->buffer, unit, &used);
  if (t->pos + n > t->limit) {
    t->truncated = 1;
    return 1;
  }
  for (k = 0; k < 12; k++)
    if (k < n)
      t->pos = stp_fmt_putc(t->out, t->cap, t->pos, unit[k]);
  t->i += used;
  if (t->pos + 4 <= t->max)
    t->cut = t->pos;  /* the text so far still leaves room for `"...` */
  return 0;
}

/* Writes from out[0]; returns the length written (NUL-terminated). inlen is clamped to cap; in
 * must be readable for cap bytes. */
STP_FMT_INLINE uint32_t stp_text_escape(char *out, uint32_t cap, uint32_t outlen,
                                        const uint8_t *in, uint32_t inlen, int quoted, int buffer)
{
  struct stp_text_st t;
  uint32_t pos = 0;
  t.max = outlen < cap - 1 ? outlen : cap - 1;  /* visible characters */
  if (inlen > cap)
    inlen = cap;
  if (quoted) {
    if (t.max < 5)
      t.max = 5;  /* cap >= 16, so `"..."` always fits */
    pos = stp_fmt_putc(out, cap, pos, '"');
    t.limit = t.max - 1;  /* leave room for the closing quote */
  } else {
    t.limit = t.max;
  }
  t.out = out;
  t.in = in;
  t.cap = cap;
  t.inlen = inlen;
  t.pos = pos;
  t.cut = pos;
  t.i = 0;
  t.buffer = buffer;
  t.truncated = 0;
  STP_FMT_FOR(cap, stp_text_cb, &t);
  pos = t.pos;
  if (quoted) {
    if (t.truncated) {
      pos = stp_fmt_putc(out, cap, t.cut, '"');
      pos = stp_fmt_putc(out, cap, pos, '.');
      pos = stp_fmt_putc(out, cap, pos, '.');
      pos = stp_fmt_putc(out, cap, pos, '.');
    } else {
      pos = stp_fmt_putc(out, cap, pos, '"');
    }
  }
  return stp_fmt_end(out, cap, pos);
}

/* ---- histograms (§1) -------------------------------------------------------------------- */

/* floor(log2(u)) for u > 0, branchy binary search (no loop, no clz builtin needed in BPF). */
STP_FMT_INLINE int stp_ilog2_u64(uint64_t u)
{
  int r = 0;
  if (u >> 32) { u >>= 32; r += 32; }
  if (u >> 16) { u >>= 16; r += 16; }
  if (u >> 8) { u >>= 8; r += 8; }
  if (u >> 4) { u >>= 4; r += 4; }
  if (u >> 2) { u >>= 2; r += 2; }
  if (u >> 1) { r += 1; }
  return r;
}

STP_FMT_INLINE int stp_hist_log_index(int64_t v)
{
  if (v == 0)
    return STP_HIST_LOG_ZERO;
  if (v > 0)
    return STP_HIST_LOG_ZERO + 1 + stp_ilog2_u64((uint64_t)v);
  return STP_HIST_LOG_ZERO - 1 - stp_ilog2_u64(0 - (uint64_t)v);
}

/* Label of log bucket i (index 0 is -2^63). */
STP_FMT_INLINE int64_t stp_hist_log_label(int i)
{
  if (i == STP_HIST_LOG_ZERO)
    return 0;
  if (i > STP_HIST_LOG_ZERO)
    return (int64_t)((uint64_t)1 << ((i - STP_HIST_LOG_ZERO - 1) & 63));
  return (int64_t)(0 - ((uint64_t)1 << ((STP_HIST_LOG_ZERO - 1 - i) & 63)));
}

/* Linear histogram with n = (stop-start)/interval + 3 buckets: 0 is underflow (<start),
 * 1..n-2 are start+(i-1)*interval, n-1 is overflow. Values in the last regular bucket's
 * interval above stop still land in it, as in SystemTap. interval > 0 (checked in pass 2). */
STP_FMT_INLINE int64_t stp_hist_linear_nbuckets(int64_t start, int64_t stop, int64_t interval)
{
  return (int64_t)((uint64_t)(stop - start) / (uint64_t)interval) + 3;
}

STP_FMT_INLINE int64_t stp_hist_linear_index(int64_t v, int64_t start, int64_t interval,
                                             int64_t nbuckets)
{
  uint64_t q;
  if (v < start)
    return 0;
  q = (uint64_t)(v - start) / (uint64_t)interval + 1;
  if (q > (uint64_t)(nbuckets - 1))
    q = (uint64_t)(nbuckets - 1);
  return (int64_t)q;
}

/* Label of regular bucket i (1..n-2) and the overflow bucket (">" + this value for i = n-1):
 * start + (i-1)*interval for regular buckets, start + (n-3)*interval for overflow. */
STP_FMT_INLINE int64_t stp_hist_linear_label(int64_t i, int64_t start, int64_t interval,
                                             int64_t nbuckets)
{
  if (i >= nbuckets - 1)
    i = nbuckets - 2;
  return start + (i - 1) * interval;
}

/* Signed 64-bit division truncating toward zero, built from unsigned division (BPF has no
 * signed div before cpu v4). d != 0 is the caller's business. */
STP_FMT_INLINE int64_t stp_sdiv64(int64_t n, int64_t d)
{
  uint64_t un = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
  uint64_t ud = d < 0 ? 0 - (uint64_t)d : (uint64_t)d;
  uint64_t q = un / ud;
  return ((n < 0) != (d < 0)) ? (int64_t)(0 - q) : (int64_t)q;
}

STP_FMT_INLINE int64_t stp_smod64(int64_t n, int64_t d)
{
  uint64_t un = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
  uint64_t ud = d < 0 ? 0 - (uint64_t)d : (uint64_t)d;
  uint64_t r = un % ud;
  return n < 0 ? (int64_t)(0 - r) : (int64_t)r;
}

/* One sample into one CPU's statistic (buckets are the caller's: they depend on the kind):
 * count/sum/min/max, the plain values. A statistic no @variance reads needs only this. */
STP_FMT_INLINE void stp_stat_update_plain(struct stp_stat_base *s, int64_t v)
{
  if (s->count == 0) {
    s->count = 1;
    s->sum = s->min = s->max = v;
    return;
  }
  s->count++;
  s->sum += v;
  if (v < s->min)
    s->min = v;
  if (v > s->max)
    s->max = v;
}

/* The same and the running mean and m2 @variance reads, kept in units of 2^-shift (SystemTap's
 * @variance(s, shift) precision: the same shift for every use of one statistic). */
STP_FMT_INLINE void stp_stat_update_shift(struct stp_stat_base *s, int64_t v, int shift)
{
  int64_t delta, vs = (int64_t)((uint64_t)v << shift);
  stp_stat_update_plain(s, v);
  if (s->count == 1) {  /* the first sample */
    s->avg_s = vs;
    s->m2 = 0;
    return;
  }
  delta = vs - s->avg_s;
  s->avg_s += stp_sdiv64(delta, s->count);
  s->m2 += delta * (vs - s->avg_s);
}

STP_FMT_INLINE void stp_stat_update(struct stp_stat_base *s, int64_t v)
{
  stp_stat_update_shift(s, v, 0);
}

/* dst += src (Chan et al.'s pairwise merge for the variance part). */
STP_FMT_INLINE void stp_stat_merge(struct stp_stat_base *dst, const struct stp_stat_base *src)
{
  int64_t n, delta;
  if (src->count == 0)
    return;
  if (dst->count == 0) {
    *dst = *src;
    return;
  }
  if (src->seq && (!dst->seq || src->seq < dst->seq))
    dst->seq = src->seq;
  n = dst->count + src->count;
  delta = src->avg_s - dst->avg_s;
  dst->m2 += src->m2 + stp_sdiv64(delta * delta * dst->count, n) * src->count;
  dst->avg_s += stp_sdiv64(delta * src->count, n);
  dst->count = n;
  dst->sum += src->sum;
  if (src->min < dst->min)
    dst->min = src->min;
  if (src->max > dst->max)
    dst->max = src->max;
}

/* @variance(s, shift) as SystemTap computes it (its runtime's total-variance aggregation, one
 * partition here since the CPUs' parts are already merged): the mean recomputed from the sum,
 * S1 = count * (running mean - that mean)^2, S2 = (count-1) * per-part variance, the result
 * (S1 + S2) / (count-1) scaled back by 2^(2*shift); 0 for fewer than two samples. So 1..5
 * gives 12 with shift 0 and 2 with shift 1, the values `man stap` shows. */
STP_FMT_INLINE int64_t stp_stat_variance_shift(const struct stp_stat_base *s, int shift)
{
  int64_t n1, mean, d, s1, s2;
  if (s->count < 2)
    return 0;
  n1 = s->count - 1;
  mean = stp_sdiv64((int64_t)((uint64_t)s->sum << shift), s->count);
  d = s->avg_s - mean;
  s1 = s->count * d * d;
  s2 = n1 * stp_sdiv64(s->m2, n1);
  return stp_sdiv64(s1 + s2, n1) >> (2 * shift);
}

STP_FMT_INLINE int64_t stp_stat_variance(const struct stp_stat_base *s)
{
  return stp_stat_variance_shift(s, 0);
}

#endif /* STP_COMMON_FORMAT_H */
