/* ukstap BPF runtime: strings and sprintf.
 *
 * Copies go through bpf_probe_read_kernel_str: one helper call, no loop for the verifier, and
 * it accepts ANY source (string literals in .rodata of any length, context buffers, map values,
 * even the destination itself). Byte loops (compare, formatting) live in global subprograms
 * (STP_GLOBAL_FN): the verifier checks each once, not once per call site, which keeps scripts
 * with many string operations far below the 1M-instruction limit. Their pointer arguments are
 * sized structs (struct stp_strbuf) because that is how a global subprogram learns how much
 * memory it may touch.
 */
#ifndef STP_BPF_STRINGS_H
#define STP_BPF_STRINGS_H

#include "common/stp_strings.h"

#define STP_GLOBAL_FN __attribute__((noinline))

/* STP_RT_FN(name): a global function of the runtime that only the programs calling it compile.
 * Pass 3 defines STP_RT_SELECT and, for each such function, STP_USES_<name> 1 or 0 from the
 * names its generated C calls (translator/codegen/runtime_functions.cpp). clang generates a
 * global function whether or not anything calls it (47 KB of .text, ~0.6 s of every cold
 * compile for all of them); an unused one is made static, and clang drops an uncalled static
 * function. Should pass 3 ever miss a use, the function is still compiled, as a static
 * subprogram the verifier checks per call site: correct, only dearer to verify. Without
 * STP_RT_SELECT (the runtime's own BPF tests) every one is global, as before. */
#ifdef STP_RT_SELECT
#define STP__LINK_1
#define STP__LINK_0 static __attribute__((unused))
#define STP__LINK_OF(v) STP__LINK_##v
#define STP__LINK(v) STP__LINK_OF(v)
#define STP_RT_FN(name) STP__LINK(STP_USES_##name) __attribute__((noinline))
#else
#define STP_RT_FN(name) __attribute__((noinline))
#endif

/* strcmp of two MAXSTRINGLEN buffers: <0, 0, >0 (byte difference, unsigned as strcmp). */
STP_RT_FN(stp_bpf_strcmp)
int stp_bpf_strcmp(const struct stp_strbuf *a, const struct stp_strbuf *b)
{
  int i;
  if (!a || !b)
    return 0;
  for (i = 0; i < STP_MAXSTRINGLEN; i++) {
    unsigned char x = a->s[i], y = b->s[i];
    if (x != y)
      return (int)x - (int)y;
    if (!x)
      break;
  }
  return 0;
}

/* The formatting core of common/stp_format.h with cap = MAXSTRINGLEN; return the new length. */
STP_RT_FN(stp_bpf_sfmt_long)
int stp_bpf_sfmt_long(struct stp_strbuf *dst, uint32_t pos, int64_t v, uint64_t spec)
{
  if (!dst)
    return 0;
  return (int)stp_fmt_long_spec(dst->s, STP_MAXSTRINGLEN, pos, v, spec);
}

/* The integer conversions of a constant shape (STP_NUM_OK), ns from STP_NUM_SPEC: ~2,000
 * instructions to verify where stp_bpf_sfmt_long costs tens of thousands (common/stp_format.h). */
STP_RT_FN(stp_bpf_sfmt_num)
int stp_bpf_sfmt_num(struct stp_strbuf *dst, uint32_t pos, int64_t v, uint64_t ns)
{
  if (!dst)
    return 0;
  return (int)stp_fmt_num(dst->s, STP_MAXSTRINGLEN, pos, v, ns);
}

STP_RT_FN(stp_bpf_sfmt_str)
int stp_bpf_sfmt_str(struct stp_strbuf *dst, uint32_t pos, const struct stp_strbuf *src,
                     uint64_t spec)
{
  if (!dst || !src)
    return 0;
  return (int)stp_fmt_str(dst->s, STP_MAXSTRINGLEN, pos, src->s, STP_MAXSTRINGLEN,
                          STP_SPEC_FLAGS(spec), STP_SPEC_WIDTH(spec), STP_SPEC_PREC(spec));
}

/* %m/%M of n bytes already copied into src. */
STP_RT_FN(stp_bpf_sfmt_mem)
int stp_bpf_sfmt_mem(struct stp_strbuf *dst, uint32_t pos, const struct stp_strbuf *src,
                     uint32_t n, uint64_t spec)
{
  if (!dst || !src)
    return 0;
  return (int)stp_fmt_mem(dst->s, STP_MAXSTRINGLEN, pos, (const uint8_t *)src->s, n,
                          STP_SPEC_CONV(spec), STP_SPEC_FLAGS(spec), STP_SPEC_WIDTH(spec));
}

/* _stp_text_str's escaping of inlen bytes already copied into src. */
STP_RT_FN(stp_bpf_text_escape)
int stp_bpf_text_escape(struct stp_strbuf *dst, const struct stp_strbuf *src,
                        uint32_t inlen, uint32_t outlen, uint32_t qb)
{
  if (!dst || !src)
    return 0;
  return (int)stp_text_escape(dst->s, STP_MAXSTRINGLEN, outlen, (const uint8_t *)src->s, inlen,
                              qb & 1, (qb >> 1) & 1);
}

/* The tapsets' string hooks (common/stp_strings.h, RUNTIME-HOOKS.md "Strings"): each is one
 * global subprogram over MAXSTRINGLEN buffers of the context map (STAP_ARG_* / STAP_RETVALUE),
 * its byte loops bpf_loop callbacks, so a probe calling all of them costs each once. */
STP_RT_FN(stp_bpf_substr)
int stp_bpf_substr(struct stp_strbuf *dst, const struct stp_strbuf *src, int64_t start,
                   int64_t len)
{
  if (!dst || !src)
    return 0;
  return (int)stp_s_substr(dst->s, src->s, STP_MAXSTRINGLEN, start, len);
}

STP_RT_FN(stp_bpf_strpos)
int64_t stp_bpf_strpos(const struct stp_strbuf *h, const struct stp_strbuf *n)
{
  if (!h || !n)
    return -1;
  return stp_s_strpos(h->s, n->s, STP_MAXSTRINGLEN);
}

STP_RT_FN(stp_bpf_str_replace)
int stp_bpf_str_replace(struct stp_strbuf *dst, const struct stp_strbuf *s,
                        const struct stp_strbuf *srch, const struct stp_strbuf *rplc)
{
  if (!dst || !s || !srch || !rplc)
    return 0;
  return (int)stp_s_str_replace(dst->s, s->s, srch->s, rplc->s, STP_MAXSTRINGLEN);
}

STP_RT_FN(stp_bpf_tokenize)
int stp_bpf_tokenize(struct stp_strbuf *dst, struct _stp_tokenize *st,
                     const struct stp_strbuf *input, const struct stp_strbuf *delim)
{
  if (!dst || !st || !input || !delim)
    return 0;
  return (int)stp_s_tokenize(dst->s, st->buf, (int64_t *)&st->pos, input->s, delim->s,
                             STP_MAXSTRINGLEN);
}

STP_RT_FN(stp_bpf_flags_str)
int stp_bpf_flags_str(struct stp_strbuf *dst, int64_t v, int table)
{
  if (!dst)
    return 0;
  return (int)stp_s_flags_str(dst->s, STP_MAXSTRINGLEN, v, table);
}

STP_RT_FN(stp_bpf_strtol)
int64_t stp_bpf_strtol(const struct stp_strbuf *s, int64_t base)
{
  if (!s)
    return 0;
  return stp_s_strtol(s->s, base, STP_MAXSTRINGLEN);
}

/* ---- API ---------------------------------------------------------------------------------- */
static __always_inline void stp__str_copy(char *dst, const void *src)
{
  if (bpf_probe_read_kernel_str(dst, STP_MAXSTRINGLEN, src) < 0)
    dst[0] = '\0';
}
#define stp_str_copy(c, dst, src) stp__str_copy((dst), (src))

/* dst .= src. Both go through tmpa (2*MAXSTRINGLEN) so `s = s . s` works and the appended copy
 * can never run past the scratch; the result is cut to MAXSTRINGLEN-1 characters. */
static __always_inline void stp__str_cat(struct stp_common *k, char *dst, const void *src)
{
  long n = bpf_probe_read_kernel_str(k->tmpa, STP_MAXSTRINGLEN, dst);
  uint32_t len = n > 0 ? (uint32_t)(n - 1) : 0;
  len &= STP_STR_MASK;
  if (bpf_probe_read_kernel_str(k->tmpa + len, STP_MAXSTRINGLEN, src) < 0)
    k->tmpa[len] = '\0';
  stp__str_copy(dst, k->tmpa);
}
#define stp_str_cat(c, dst, src) stp__str_cat(&(c)->k, (dst), (src))

static __always_inline int stp__str_cmp(struct stp_common *k, const void *a, const void *b)
{
  stp__str_copy(k->tmpa, a);
  stp__str_copy(k->tmpb, b);
  return stp_bpf_strcmp((const struct stp_strbuf *)k->tmpa, (const struct stp_strbuf *)k->tmpb);
}
#define stp_str_cmp(c, a, b) stp__str_cmp(&(c)->k, (a), (b))

static __always_inline int64_t stp__str_len(struct stp_common *k, const void *s)
{
  long n = bpf_probe_read_kernel_str(k->tmpa, STP_MAXSTRINGLEN, s);
  return n > 0 ? n - 1 : 0;
}
#define stp_str_len(c, s) stp__str_len(&(c)->k, (s))

/* A literal: a constant-size copy (cut to MAXSTRINGLEN-1 by the helper when longer). */
#define stp_str_lit(dst, lit)                                        \
  do {                                                               \
    if (sizeof(lit) <= STP_MAXSTRINGLEN)                             \
      __builtin_memcpy((dst), (lit), sizeof(lit) <= STP_MAXSTRINGLEN ? sizeof(lit) : 1); \
    else                                                             \
      stp__str_copy((dst), (lit));                                   \
  } while (0)

#define stp_long_to_str(c, dst, v) \
  ((void)stp_bpf_sfmt_num((struct stp_strbuf *)(dst), 0, (v), STP_NUM_SPEC(STP_CONV_d, 0, 0)))

/* Zero a key (or any object) before filling it: hash keys compare every byte, including the
 * bytes after a string's NUL and struct padding. One to four words (a number, a ubacktrace()
 * token: an aggregate's key on every event) by plain stores, not a helper call. */
#define STP_ZERO(c, ptr)                                                       \
  do {                                                                         \
    if (sizeof(*(ptr)) <= 32 && sizeof(*(ptr)) % 8 == 0) {                     \
      uint64_t *z__ = (uint64_t *)(void *)(ptr);                               \
      z__[0] = 0;                                                              \
      if (sizeof(*(ptr)) > 8) z__[1 % (sizeof(*(ptr)) / 8)] = 0;               \
      if (sizeof(*(ptr)) > 16) z__[2 % (sizeof(*(ptr)) / 8)] = 0;              \
      if (sizeof(*(ptr)) > 24) z__[3 % (sizeof(*(ptr)) / 8)] = 0;              \
    } else if (sizeof(*(ptr)) <= STP_ZERO_SIZE)                                \
      bpf_probe_read_kernel((ptr), sizeof(*(ptr)), stp__zero_area);            \
    else                                                                       \
      __builtin_memset((ptr), 0, sizeof(*(ptr)));                              \
  } while (0)

/* sprintf: dst must not be an argument of the same sprintf (generated code uses a temporary). */
#define stp_sfmt_begin(c, dst) ((c)->k.sfmt_pos = 0, (dst)[0] = '\0')
/* A conversion known at compile time to be of a constant shape (STP_NUM_OK: nearly all)
 * goes to the cheap stp_bpf_sfmt_num; clang folds the choice, so a program references only the
 * function it uses. */
#define STP_SFMT_NUM_OK(conv, width, prec)                                        \
  (__builtin_constant_p(conv) && __builtin_constant_p(width) &&                  \
   __builtin_constant_p(prec) && STP_NUM_OK((conv), (width), (prec)))
#define stp_sfmt_long(c, dst, v, conv, flags, width, prec)                                   \
  ((c)->k.sfmt_pos =                                                                         \
       STP_SFMT_NUM_OK((conv), (width), (prec)) && __builtin_constant_p(flags)               \
           ? stp_bpf_sfmt_num((struct stp_strbuf *)(dst), (c)->k.sfmt_pos, (v),              \
                              STP_NUM_SPEC((conv), (flags), (width)))                        \
           : stp_bpf_sfmt_long((struct stp_strbuf *)(dst), (c)->k.sfmt_pos, (v),             \
                               STP_FMT_SPEC((conv), (flags), (width), (prec))))
#define stp_sfmt_char(c, dst, v, flags, width) stp_sfmt_long(c, dst, v, STP_CONV_c, flags, width, -1)
static __always_inline void stp__sfmt_str(struct stp_common *k, char *dst, const void *s, uint64_t spec)
{
  stp__str_copy(k->tmpa, s);
  k->sfmt_pos = stp_bpf_sfmt_str((struct stp_strbuf *)dst, k->sfmt_pos,
                                 (const struct stp_strbuf *)k->tmpa, spec);
}
#define stp_sfmt_str(c, dst, s, flags, width, prec) \
  stp__sfmt_str(&(c)->k, (dst), (s), STP_FMT_SPEC(STP_CONV_s, (flags), (width), (prec)))
#define stp_sfmt_lit(c, dst, txt) stp__sfmt_str(&(c)->k, (dst), (txt), STP_FMT_SPEC(STP_CONV_s, 0, 0, -1))

/* %m / %M: prec bytes (default 1) of kernel (user != 0: user) memory at addr. */
static __always_inline void stp__sfmt_mem(struct stp_common *k, char *dst, int64_t addr, int64_t prec,
                                          int user, uint64_t spec)
{
  uint32_t n = prec < 0 ? 1 : prec > STP_MAXSTRINGLEN ? STP_MAXSTRINGLEN : (uint32_t)prec;
  long rc;
  n &= (2 * STP_MAXSTRINGLEN - 1);
  if (!n)
    return;
  rc = user ? bpf_probe_read_user(k->tmpa, n, (const void *)addr)
            : bpf_probe_read_kernel(k->tmpa, n, (const void *)addr);
  if (rc < 0) {
    stp__error(k, "memory copy fault [man error::fault]", STP_LOC_CURRENT);
    return;
  }
  k->sfmt_pos = stp_bpf_sfmt_mem((struct stp_strbuf *)dst, k->sfmt_pos,
                                 (const struct stp_strbuf *)k->tmpa, n, spec);
}
#define stp_sfmt_mem(c, dst, addr, conv, flags, width, prec)                            \
  stp__sfmt_mem(&(c)->k, (dst), (addr), (prec), ((flags) & STP_FLAG_ALT) != 0,          \
                STP_FMT_SPEC((conv), (flags) & ~STP_FLAG_ALT, (width), (prec)))

#endif /* STP_BPF_STRINGS_H */
