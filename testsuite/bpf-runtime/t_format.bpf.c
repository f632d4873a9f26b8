/* Verifier + runtime test: printf with 32 arguments, sprintf with every conversion (expected
 * strings: docs/STAP-FORMATS.md §3, checked by run-bpf-runtime.sh), %m/%M, long_to_str. */
#define STP_NPROBES 1
#include "stp_runtime.h"

struct stp_globals { int64_t unused; };
STP_DEFINE_GLOBALS(struct stp_globals);

#define N 24
struct stp_locals_p0 { char r[N][STP_MAXSTRINGLEN]; char mem[16]; };
struct stp_locals { union { struct stp_locals_p0 p0; } probe; };
STP_DEFINE_CONTEXT(struct stp_locals);

#define R(i) c->l.probe.p0.r[i]
#define SL(i, v, conv, fl, w, p) stp_sfmt_begin(c, R(i)); stp_sfmt_long(c, R(i), v, conv, fl, w, p);

STP_PROBE_TRACEPOINT(0, "syscalls", "sys_enter_getppid")
{
  /* only the harness's own getppid() calls: other processes on the machine call it too */
  if ((uint32_t)(bpf_get_current_pid_tgid() >> 32) != stp_config.runtime_pid)
    return 0;
  STP_PROBE_ENTER(0);
  SL(0, -42, STP_CONV_d, 0, 5, -1);
  SL(1, -42, STP_CONV_d, STP_FLAG_ZERO, 5, -1);
  stp_sfmt_begin(c, R(2)); stp_sfmt_long(c, R(2), 42, STP_CONV_d, STP_FLAG_MINUS, 5, -1); stp_sfmt_lit(c, R(2), "|");
  SL(3, 0, STP_CONV_d, STP_FLAG_PLUS, 0, -1);
  SL(4, 0, STP_CONV_d, STP_FLAG_SPACE, 0, -1);
  SL(5, -1, STP_CONV_d, 0, 0, 3);
  SL(6, -1, STP_CONV_u, 0, 0, -1);
  SL(7, -42, STP_CONV_x, 0, 0, -1);
  SL(8, 42, STP_CONV_X, STP_FLAG_ALT, 0, -1);
  SL(9, 0, STP_CONV_x, STP_FLAG_ALT, 0, -1);
  SL(10, 0, STP_CONV_o, STP_FLAG_ALT, 0, -1);
  SL(11, 8, STP_CONV_o, STP_FLAG_ALT, 0, -1);
  SL(12, 0, STP_CONV_p, 0, 0, -1);
  SL(13, 42, STP_CONV_p, 0, 10, -1);
  stp_sfmt_begin(c, R(14)); stp_sfmt_char(c, R(14), 'A', 0, 0); stp_sfmt_char(c, R(14), '\n', STP_FLAG_ALT, 0);
  stp_sfmt_char(c, R(14), 0xd6, STP_FLAG_ALT, 0);
  stp_sfmt_begin(c, R(15)); stp_sfmt_str(c, R(15), "ab", 0, 5, -1); stp_sfmt_lit(c, R(15), "|");
  stp_sfmt_str(c, R(15), "ab", STP_FLAG_MINUS, 5, -1); stp_sfmt_lit(c, R(15), "|");
  stp_sfmt_str(c, R(15), "abcdef", 0, 0, 2);
  SL(16, 0x41, STP_CONV_b, 0, 1, -1);
  stp_str_lit(c->l.probe.p0.mem, "\xde\xad\x01");
  stp_sfmt_begin(c, R(17)); stp_sfmt_mem(c, R(17), (int64_t)(long)c->l.probe.p0.mem, STP_CONV_M, 0, 0, 3);
  stp_sfmt_lit(c, R(17), "|"); stp_sfmt_mem(c, R(17), (int64_t)(long)c->l.probe.p0.mem + 1, STP_CONV_m, 0, 0, -1);
  stp_long_to_str(c, R(18), -9223372036854775807LL - 1);
  /* a whole format in one buffer: "x=%5d|%-5s|%#x\n" */
  stp_sfmt_begin(c, R(19)); stp_sfmt_lit(c, R(19), "x="); stp_sfmt_long(c, R(19), 7, STP_CONV_d, 0, 5, -1);
  stp_sfmt_lit(c, R(19), "|"); stp_sfmt_str(c, R(19), "ab", STP_FLAG_MINUS, 5, -1); stp_sfmt_lit(c, R(19), "|");
  stp_sfmt_long(c, R(19), 255, STP_CONV_x, STP_FLAG_ALT, 0, -1);
  /* cut at MAXSTRINGLEN-1 */
  stp_sfmt_begin(c, R(20)); stp_sfmt_long(c, R(20), 1, STP_CONV_d, 0, 1000, -1);
  stp_long_to_str(c, R(21), stp_str_len(c, R(20)));

  stp_printf_begin(c, 1);
  for (int i = 0; i < 22; i++)
    stp_printf_str(c, R(i));
  stp_printf_end(c);

  /* 32 arguments: 16 longs and 16 strings, alternating */
  stp_printf_begin(c, 2);
  for (int i = 0; i < 16; i++) {
    stp_printf_long(c, i * 1000);
    stp_printf_str(c, R(i));
  }
  stp_printf_end(c);
out:
  STP_PROBE_LEAVE();
}

char LICENSE[] SEC("license") = "GPL";
