/* Native unit test of runtime/common/stp_format.h. Expected strings are the examples of
 * docs/STAP-FORMATS.md §1 and §3 (and C's printf where §3 says "as C does"), NOT
 * outputs of the code under test. Prints one line per failure and "N passed, N failed". */
#include <stdio.h>
#include <string.h>
#include "common/stp_format.h"

static int passed, failed;

static void check(const char *what, const char *got, uint32_t gotlen, const char *want, uint32_t wantlen)
{
  if (gotlen == wantlen && memcmp(got, want, wantlen) == 0) {
    passed++;
    return;
  }
  failed++;
  printf("FAIL %s: got [%.*s] (%u), want [%.*s] (%u)\n", what, (int)gotlen, got, gotlen,
         (int)wantlen, want, wantlen);
}

static void L(const char *what, int conv, int flags, int width, int prec, int64_t v, const char *want)
{
  char buf[128];
  uint32_t n = stp_fmt_long(buf, sizeof buf, 0, v, conv, flags, width, prec);
  check(what, buf, n, want, (uint32_t)strlen(want));
  /* the packed-spec path must agree */
  n = stp_fmt_long_spec(buf, sizeof buf, 0, v, STP_FMT_SPEC(conv, flags, width, prec));
  check(what, buf, n, want, (uint32_t)strlen(want));
  /* and so must the branch-free path, for the conversions it takes */
  if (STP_NUM_OK(conv, width, prec)) {
    n = stp_fmt_num(buf, sizeof buf, 0, v, STP_NUM_SPEC(conv, flags, width));
    check(what, buf, n, want, (uint32_t)strlen(want));
  }
}

/* A number (no width) appended at pos of a 32-byte buffer holding "ab": cut to 31 characters. */
static void N(const char *what, uint32_t pos, int conv, int flags, int64_t v, const char *want)
{
  char buf[32];
  uint32_t n;
  memset(buf, 'Z', sizeof buf);
  memcpy(buf, "ab", 2);
  n = stp_fmt_num(buf, sizeof buf, pos, v, STP_NUM_SPEC(conv, flags, 0));
  check(what, buf, n, want, (uint32_t)strlen(want));
  check(what, buf + n, 1, "", 1);  /* NUL-terminated */
}

static void S(const char *what, int flags, int width, int prec, const char *s, const char *want, uint32_t wantlen)
{
  char buf[64];
  uint32_t n = stp_fmt_str(buf, sizeof buf, 0, s, 64, flags, width, prec);
  check(what, buf, n, want, wantlen);
}

static void C(const char *what, int flags, int width, int64_t v, const char *want, uint32_t wantlen)
{
  char buf[64];
  uint32_t n = stp_fmt_char(buf, sizeof buf, 0, v, flags, width);
  check(what, buf, n, want, wantlen);
}

static void T(const char *what, const char *in, uint32_t inlen, uint32_t outlen, int quoted, int buffer,
              const char *want)
{
  char buf[128];
  uint32_t n = stp_text_escape(buf, sizeof buf, outlen, (const uint8_t *)in, inlen, quoted, buffer);
  check(what, buf, n, want, (uint32_t)strlen(want));
}

int main(void)
{
  /* §3 table */
  L("%5d -42", 'd', 0, 5, -1, -42, "  -42");
  L("%05d -42", 'd', STP_FLAG_ZERO, 5, -1, -42, "-0042");
  L("%-5d 42", 'd', STP_FLAG_MINUS, 5, -1, 42, "42   ");
  L("%+d 0", 'd', STP_FLAG_PLUS, 0, -1, 0, "+0");
  L("% d 0", 'd', STP_FLAG_SPACE, 0, -1, 0, " 0");
  L("%.3d -1", 'd', 0, 0, 3, -1, "-001");
  L("%u -1", 'u', 0, 0, -1, -1, "18446744073709551615");
  L("%x -42", 'x', 0, 0, -1, -42, "ffffffffffffffd6");
  L("%#X 42", 'X', STP_FLAG_ALT, 0, -1, 42, "0X2A");
  L("%#x 0", 'x', STP_FLAG_ALT, 0, -1, 0, "0x0");
  L("%#o 0", 'o', STP_FLAG_ALT, 0, -1, 0, "00");
  L("%#o 8", 'o', STP_FLAG_ALT, 0, -1, 8, "010");
  L("%p 0", 'p', 0, 0, -1, 0, "0x0");
  L("%10p 42", 'p', 0, 10, -1, 42, "      0x2a");
  /* §2 display formats and plain C behaviour */
  L("%d 42", 'd', 0, 0, -1, 42, "42");
  L("%i min", 'i', 0, 0, -1, INT64_MIN, "-9223372036854775808");
  L("%d max", 'd', 0, 0, -1, INT64_MAX, "9223372036854775807");
  L("%#d 4", 'd', STP_FLAG_ALT, 0, -1, 4, "4");
  L("%o 8", 'o', 0, 0, -1, 8, "10");
  L("%x 255", 'x', 0, 0, -1, 255, "ff");
  L("%X 255", 'X', 0, 0, -1, 255, "FF");
  L("%*d -6 (star width negative = left)", 'd', 0, -6, -1, 7, "7     ");
  L("%08x 0xbeef", 'x', STP_FLAG_ZERO, 8, -1, 0xbeef, "0000beef");
  L("%#10x 42", 'x', STP_FLAG_ALT, 10, -1, 42, "      0x2a");
  L("%-#10x (flags as bits) 42", 'x', STP_FLAG_ALT | STP_FLAG_MINUS, 10, -1, 42, "0x2a      ");
  L("%c via long 65", 'c', 0, 0, -1, 65, "A");
  L("%.1d 0", 'd', 0, 0, 1, 0, "0");
  L("%.0x 0 (one digit always, as SystemTap's number())", 'x', 0, 0, 0, 0, "0");
  L("%+d -5", 'd', STP_FLAG_PLUS, 0, -1, -5, "-5");
  L("%+u 5 (no sign: unsigned)", 'u', STP_FLAG_PLUS, 0, -1, 5, "5");
  L("%#o 0755", 'o', STP_FLAG_ALT, 0, -1, 0755, "0755");
  L("%#x max", 'x', STP_FLAG_ALT, 0, -1, -1, "0xffffffffffffffff");
  L("%o -1 (22 digits)", 'o', 0, 0, -1, -1, "1777777777777777777777");
  L("%p 0x7fff0000", 'p', 0, 0, -1, 0x7fff0000, "0x7fff0000");
  N("plain number appended at 2", 2, 'd', 0, -42, "ab-42");
  N("plain number cut at the end", 28, 'x', STP_FLAG_ALT, 0xabcdef, "abZZZZZZZZZZZZZZZZZZZZZZZZZZ0xa");
  N("plain number past the end", 40, 'd', 0, 7, "abZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ");
  /* %s as C: width, '-', precision */
  S("%s", 0, 0, -1, "str", "str", 3);
  S("%5s", 0, 5, -1, "ab", "   ab", 5);
  S("%-5s", STP_FLAG_MINUS, 5, -1, "ab", "ab   ", 5);
  S("%.2s", 0, 0, 2, "abcdef", "ab", 2);
  S("%5.2s", 0, 5, 2, "abcdef", "   ab", 5);
  S("%#s (no effect)", STP_FLAG_ALT, 0, -1, "a\"b", "a\"b", 3);
  S("%05s quirk: spaces + NUL", STP_FLAG_ZERO, 5, -1, "ab", "   ab\0", 6);
  /* %c, %#c */
  C("%c low byte", 0, 0, 0x141, "A", 1);
  C("%3c", 0, 3, 'x', "  x", 3);
  C("%-3c", STP_FLAG_MINUS, 3, 'x', "x  ", 3);
  C("%#c \\n", STP_FLAG_ALT, 0, '\n', "\\n", 2);
  C("%#c '", STP_FLAG_ALT, 0, '\'', "\\'", 2);
  C("%#c \\\\", STP_FLAG_ALT, 0, '\\', "\\\\", 2);
  C("%#c \\326", STP_FLAG_ALT, 0, 0xd6, "\\326", 4);
  C("%#c \\000", STP_FLAG_ALT, 0, 0, "\\000", 4);
  C("%#c a", STP_FLAG_ALT, 0, 'a', "a", 1);
  /* %b raw little-endian */
  {
    char buf[16];
    uint32_t n = stp_fmt_bin(buf, sizeof buf, 0, 0x0102, 2);
    check("%2b", buf, n, "\x02\x01", 2);
    n = stp_fmt_bin(buf, sizeof buf, 0, 0x41, 0);
    check("%b default 8", buf, n, "A\0\0\0\0\0\0\0", 8);
  }
  /* %M hex, %m raw */
  {
    char buf[32];
    const uint8_t mem[3] = {0xde, 0xad, 0x01};
    uint32_t n = stp_fmt_mem(buf, sizeof buf, 0, mem, 3, 'M', 0, 0);
    check("%.3M", buf, n, "dead01", 6);
    n = stp_fmt_mem(buf, sizeof buf, 0, (const uint8_t *)"hi", 2, 'm', 0, 4);
    check("%4.2m", buf, n, "  hi", 4);
  }
  /* truncation at cap-1, appending */
  {
    char buf[16];
    uint32_t n = stp_fmt_lit(buf, sizeof buf, 0, "value=", 100);
    n = stp_fmt_long(buf, sizeof buf, n, 1234567890123LL, 'd', 0, 0, -1);
    check("cut at cap-1", buf, n, "value=123456789", 15);
    check("NUL at end", buf + 15, 1, "", 1);
  }
  /* text_str (RUNTIME-HOOKS: escapes, quoting, "... cut, buffer mode) */
  T("escapes", "a\n\t\"\\\x01", 6, 128, 0, 0, "a\\n\\t\\\"\\\\\\001");
  T("quoted", "hello\n", 6, 128, 1, 0, "\"hello\\n\"");
  T("stop at NUL", "ab\0cd", 5, 128, 1, 0, "\"ab\"");
  T("buffer NUL", "ab\0c", 4, 128, 1, 1, "\"ab\\0c\"");
  T("utf8", "\xc3\xa9", 2, 128, 0, 0, "\\u00E9");
  T("bad utf8", "\xc3(", 2, 128, 0, 0, "\\303(");
  T("write BUF 50: 45 chars then \"...",
    "0123456789012345678901234567890123456789012345678901234567890123456789", 70, 50, 1, 1,
    "\"012345678901234567890123456789012345678901234\"...");
  T("exactly fits 48", "012345678901234567890123456789012345678901234567", 48, 50, 1, 1,
    "\"012345678901234567890123456789012345678901234567\"");
  /* §1 histogram buckets */
  {
    int ok = stp_hist_log_index(0) == STP_HIST_LOG_ZERO && stp_hist_log_label(stp_hist_log_index(1)) == 1 &&
             stp_hist_log_label(stp_hist_log_index(3)) == 2 && stp_hist_log_label(stp_hist_log_index(7)) == 4 &&
             stp_hist_log_label(stp_hist_log_index(1000)) == 512 &&
             stp_hist_log_label(stp_hist_log_index(-5)) == -4 &&
             stp_hist_log_label(stp_hist_log_index(INT64_MIN)) == INT64_MIN &&
             stp_hist_log_index(INT64_MIN) == 0 && stp_hist_log_index(INT64_MAX) == 127;
    int64_t n = stp_hist_linear_nbuckets(0, 100, 10);
    ok = ok && n == 13 && stp_hist_linear_index(-5, 0, 10, n) == 0 &&
         stp_hist_linear_label(stp_hist_linear_index(3, 0, 10, n), 0, 10, n) == 0 &&
         stp_hist_linear_label(stp_hist_linear_index(15, 0, 10, n), 0, 10, n) == 10 &&
         stp_hist_linear_index(250, 0, 10, n) == n - 1 && stp_hist_linear_label(n - 1, 0, 10, n) == 100 &&
         stp_hist_linear_label(stp_hist_linear_index(100, 0, 10, n), 0, 10, n) == 100;
    if (ok) passed++; else { failed++; printf("FAIL histogram buckets\n"); }
  }
  /* stats merge == one-CPU stats */
  {
    struct stp_stat_base a, b, all;
    memset(&a, 0, sizeof a); memset(&b, 0, sizeof b); memset(&all, 0, sizeof all);
    int64_t vals[] = {1, 2, 3, 4, 10, -3};
    for (int i = 0; i < 6; i++) { stp_stat_update(i < 3 ? &a : &b, vals[i]); stp_stat_update(&all, vals[i]); }
    stp_stat_merge(&a, &b);
    int ok = a.count == 6 && a.sum == 17 && a.min == -3 && a.max == 10 && stp_sdiv64(-7, 2) == -3 &&
             stp_smod64(-7, 2) == -1 && /* integer Welford: merged and single-pass agree within 1 */
             stp_stat_variance(&a) - stp_stat_variance(&all) <= 1 && stp_stat_variance(&all) - stp_stat_variance(&a) <= 1;
    if (ok) passed++; else { failed++; printf("FAIL stats merge var %lld vs %lld\n", (long long)stp_stat_variance(&a), (long long)stp_stat_variance(&all)); }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
