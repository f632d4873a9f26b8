/* ukstap runtime: the portable formatting core (STAP-FORMATS §3) and histogram bucketing (§1).
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

/* Byte stores in loops go through STP_FMT_PUT: in BPF a volatile store, so clang does not turn
 * a padding/copy loop into memset/memcpy calls, which the BPF backend cannot emit. */
#if defined(__bpf__)
# define STP_FMT_PUT(buf, i, ch) (*(volatile char *)&(buf)[i] = (char)(ch))
#else
# define STP_FMT_PUT(buf, i, ch) ((buf)[i] = (char)(ch))
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
    STP_FMT_PUT(buf, pos & (cap - 1), ch);
    pos++;
  }
  return pos;
}

STP_FMT_INLINE uint32_t stp_fmt_end(char *buf, uint32_t cap, uint32_t pos)
{
  if (pos > cap - 1)
    pos = cap - 1;
  STP_FMT_PUT(buf, pos & (cap - 1), '\0');
  return pos;
}

/* n copies of ch (n <= 0: none). */
STP_FMT_INLINE uint32_t stp_fmt_pad(char *buf, uint32_t cap, uint32_t pos, int n, char ch)
{
  uint32_t k;
  for (k = 0; k < cap; k++) {
    if ((int)k >= n || pos >= cap - 1)
      break;
    STP_FMT_PUT(buf, pos & (cap - 1), ch);
    pos++;
  }
  return pos;
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

/* Appends a literal (up to NUL or n bytes). */
STP_FMT_INLINE uint32_t stp_fmt_lit(char *buf, uint32_t cap, uint32_t pos, const char *s, uint32_t n)
{
  uint32_t k;
  if (pos > cap - 1)
    pos = cap - 1;
  for (k = 0; k < cap; k++) {
    char ch;
    if (k >= n || pos >= cap - 1)
      break;
    ch = s[k];
    if (!ch)
      break;
    STP_FMT_PUT(buf, pos & (cap - 1), ch);
    pos++;
  }
  return stp_fmt_end(buf, cap, pos);
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
  uint32_t len = 0, k;
  if (pos > cap - 1)
    pos = cap - 1;
  width = stp_fmt_width(&flags, width, cap);
  if (smax > cap)
    smax = cap;
  if (prec >= 0 && (uint32_t)prec < smax)
    smax = (uint32_t)prec;
  for (len = 0; len < cap; len++)
    if (len >= smax || !s[len])
      break;
  if (!(flags & STP_FLAG_MINUS))
    pos = stp_fmt_pad(buf, cap, pos, width - (int)len, ' ');
  for (k = 0; k < cap; k++) {
    if (k >= len || pos >= cap - 1)
      break;
    STP_FMT_PUT(buf, pos & (cap - 1), s[k]);
    pos++;
  }
  if (flags & STP_FLAG_MINUS)
    pos = stp_fmt_pad(buf, cap, pos, width - (int)len, ' ');
  if (flags & STP_FLAG_ZERO)
    pos = stp_fmt_putc(buf, cap, pos, '\0');
  return stp_fmt_end(buf, cap, pos);
}

/* %m (raw bytes) and %M (two lowercase hex digits per byte) of n bytes already fetched. */
STP_FMT_INLINE uint32_t stp_fmt_mem(char *buf, uint32_t cap, uint32_t pos, const uint8_t *mem,
                                    uint32_t n, int conv, int flags, int width)
{
  /* no function-local statics: their BTF names ("fn.var") are rejected by the kernel */
  const char *hex = "0123456789abcdef";
  uint32_t k, outlen;
  if (pos > cap - 1)
    pos = cap - 1;
  width = stp_fmt_width(&flags, width, cap);
  if (n > cap)
    n = cap;
  outlen = conv == STP_CONV_M ? 2 * n : n;
  if (!(flags & STP_FLAG_MINUS))
    pos = stp_fmt_pad(buf, cap, pos, width - (int)outlen, ' ');
  for (k = 0; k < cap; k++) {
    uint8_t b;
    if (k >= n || pos >= cap - 1)
      break;
    b = mem[k];
    if (conv == STP_CONV_M) {
      pos = stp_fmt_putc(buf, cap, pos, hex[(b >> 4) & 15]);
      pos = stp_fmt_putc(buf, cap, pos, hex[b & 15]);
    } else {
      pos = stp_fmt_putc(buf, cap, pos, (char)b);
    }
  }
  if (flags & STP_FLAG_MINUS)
    pos = stp_fmt_pad(buf, cap, pos, width - (int)outlen, ' ');
  return stp_fmt_end(buf, cap, pos);
}

/* Integer conversions d i u o x X p (and c/b delegated), all 64-bit. The layout follows
 * SystemTap's number(): [spaces][sign][0x|0][zeros or spaces][precision zeros][digits][spaces].
 * '#' always prefixes (%#x of 0 is 0x0, %#o of 0 is 00); %p is %#x. */
STP_FMT_INLINE uint32_t stp_fmt_long(char *buf, uint32_t cap, uint32_t pos, int64_t v, int conv,
                                     int flags, int width, int prec)
{
  char digits[32];
  const char *set = "0123456789abcdef";
  uint64_t num = (uint64_t)v;
  unsigned base = 10, shift = 0;
  int nd = 0, size, k, is_signed = 0;
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
  /* digits, least significant first; 22 octal digits is the most a u64 needs */
  for (k = 0; k < 24; k++) {
    if (shift) {
      digits[k & 31] = set[num & (base - 1)];
      num >>= shift;
    } else {
      digits[k & 31] = set[num % 10];
      num /= 10;
    }
    nd++;
    if (!num)
      break;
  }
  if (prec < nd)
    prec = nd;
  size -= prec;
  if (!(flags & (STP_FLAG_ZERO | STP_FLAG_MINUS))) {
    pos = stp_fmt_pad(buf, cap, pos, size, ' ');
    size = 0;
  }
  if (sign)
    pos = stp_fmt_putc(buf, cap, pos, sign);
  if (flags & STP_FLAG_ALT) {
    if (base == 8 || base == 16)
      pos = stp_fmt_putc(buf, cap, pos, '0');
    if (base == 16)
      pos = stp_fmt_putc(buf, cap, pos, conv == STP_CONV_X ? 'X' : 'x');
  }
  if (!(flags & STP_FLAG_MINUS)) {
    pos = stp_fmt_pad(buf, cap, pos, size, (flags & STP_FLAG_ZERO) ? '0' : ' ');
    size = 0;
  }
  pos = stp_fmt_pad(buf, cap, pos, prec - nd, '0');
  for (k = 23; k >= 0; k--)
    if (k < nd)
      pos = stp_fmt_putc(buf, cap, pos, digits[k & 31]);
  pos = stp_fmt_pad(buf, cap, pos, size, ' ');
  return stp_fmt_end(buf, cap, pos);
}

/* Same, with the packed spec (STP_FMT_SPEC). */
STP_FMT_INLINE uint32_t stp_fmt_long_spec(char *buf, uint32_t cap, uint32_t pos, int64_t v,
                                          uint64_t spec)
{
  return stp_fmt_long(buf, cap, pos, v, STP_SPEC_CONV(spec), STP_SPEC_FLAGS(spec),
                      STP_SPEC_WIDTH(spec), STP_SPEC_PREC(spec));
}

/* ---- _stp_text_str core: escape `inlen` bytes already fetched ----------------------------
 * Escapes \a \b \f \n \r \t \v \" \\, other non-printables \ooo, valid UTF-8 sequences \uXXXX
 * (uppercase hex; code points above U+FFFF: \UXXXXXXXX). `buffer`: all inlen bytes, NUL shown
 * as \0; else stop at the first NUL. At most min(outlen, cap-1) characters are written; when
 * `quoted` the text is wrapped in "..." and a cut text ends with `"...` (outlen 50 keeps 45
 * characters of text). An escape is never split. */
STP_FMT_INLINE int stp_text_unit(const uint8_t *in, uint32_t i, uint32_t inlen, int buffer,
                                 char out[12], uint32_t *consumed)
{
  const char *hexu = "0123456789ABCDEF";
  uint8_t ch = in[i];
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
      cc = in[i + k];
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

/* Writes from out[0]; returns the length written (NUL-terminated). inlen is clamped to cap. */
STP_FMT_INLINE uint32_t stp_text_escape(char *out, uint32_t cap, uint32_t outlen,
                                        const uint8_t *in, uint32_t inlen, int quoted, int buffer)
{
  uint32_t max = outlen < cap - 1 ? outlen : cap - 1;  /* visible characters */
  uint32_t pos = 0, i = 0, cut = 0, limit, it;
  int truncated = 0;
  if (inlen > cap)
    inlen = cap;
  if (quoted) {
    if (max < 5)
      max = 5;  /* cap >= 16, so `"..."` always fits */
    pos = stp_fmt_putc(out, cap, pos, '"');
    cut = pos;
    limit = max - 1;  /* leave room for the closing quote */
  } else {
    limit = max;
  }
  for (it = 0; it < cap; it++) {
    char unit[12];
    uint32_t used, n, k;
    if (i >= inlen || (!buffer && !in[i]))
      break;
    n = (uint32_t)stp_text_unit(in, i, inlen, buffer, unit, &used);
    if (pos + n > limit) {
      truncated = 1;
      break;
    }
    for (k = 0; k < 12; k++)
      if (k < n)
        pos = stp_fmt_putc(out, cap, pos, unit[k]);
    i += used;
    if (pos + 4 <= max)
      cut = pos;  /* the text so far still leaves room for `"...` */
  }
  if (quoted) {
    if (truncated)
      pos = stp_fmt_lit(out, cap, cut, "\"...", 4);
    else
      pos = stp_fmt_putc(out, cap, pos, '"');
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

/* One sample into one CPU's statistic (buckets are the caller's: they depend on the kind). */
STP_FMT_INLINE void stp_stat_update(struct stp_stat_base *s, int64_t v)
{
  int64_t delta;
  if (s->count == 0) {
    s->count = 1;
    s->sum = s->min = s->max = s->avg_s = v;
    s->m2 = 0;
    return;
  }
  s->count++;
  s->sum += v;
  if (v < s->min)
    s->min = v;
  if (v > s->max)
    s->max = v;
  delta = v - s->avg_s;
  s->avg_s += stp_sdiv64(delta, s->count);
  s->m2 += delta * (v - s->avg_s);
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

/* @variance as SystemTap prints it: m2/(count-1), 0 for fewer than two samples. */
STP_FMT_INLINE int64_t stp_stat_variance(const struct stp_stat_base *s)
{
  return s->count < 2 ? 0 : stp_sdiv64(s->m2, s->count - 1);
}

#endif /* STP_COMMON_FORMAT_H */
