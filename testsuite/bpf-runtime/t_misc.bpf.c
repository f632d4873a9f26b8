/* Verifier + runtime test: STP_LOOP x1000, stats with log and linear histograms (add, get,
 * HIST record), a tapset-style embedded function using the hooks (STAP_ERROR, pp(), text_str,
 * tokenize state, target pid), exit(), and an uncaught error that puts the session in ERROR
 * (MAXERRORS 0) so the second getppid() runs nothing. */
#define STP_NPROBES 1
#include "stp_runtime.h"

struct stp_globals { int64_t loops; };
STP_DEFINE_GLOBALS(struct stp_globals);

struct stp_stat_agg { STP_STAT_FIELDS; int64_t buckets[STP_HIST_LOG_BUCKETS]; };
STP_DEFINE_STATS(agg, struct stp_key_unit, struct stp_stat_agg, 1, STP_HIST_LOG, 0, 0, 0);
struct stp_key_lin { char k0[STP_MAXSTRINGLEN]; int64_t k1; };
struct stp_stat_lin { STP_STAT_FIELDS; int64_t buckets[13]; };
STP_DEFINE_STATS(lin, struct stp_key_lin, struct stp_stat_lin, 100, STP_HIST_LINEAR, 0, 100, 10);

struct stp_frame_probe_pp { char __retvalue[STP_MAXSTRINGLEN]; };
struct stp_frame_quoted { int64_t addr; char __retvalue[STP_MAXSTRINGLEN]; };
struct stp_frame_kread { int64_t addr; int64_t __retvalue; };
struct stp_locals_p0 {
  int64_t i, sum, t;
  struct stp_key_unit ku;
  struct stp_key_lin kl;
  struct stp_stat_agg a;
  char txt[STP_MAXSTRINGLEN];
};
struct stp_locals {
  union { struct stp_locals_p0 p0; } probe;
  struct stp_frame_probe_pp f_pp;
  struct stp_frame_quoted f_quoted;
  struct stp_frame_kread f_kread;
};
STP_DEFINE_CONTEXT(struct stp_locals);

/* tapset bodies, as pass 3 will wrap them */
#define STAP_FN_LOC 3
#define STAP_RETVALUE c->l.f_pp.__retvalue
static __always_inline void stp_fn_pp(struct stp_context *c)
{
  _stp_probe_point(STAP_RETVALUE, MAXSTRINGLEN);
}
#undef STAP_RETVALUE
#define STAP_RETVALUE c->l.f_quoted.__retvalue
#define STAP_ARG_addr c->l.f_quoted.addr
static __always_inline void stp_fn_quoted(struct stp_context *c)
{
  _stp_text_str(STAP_RETVALUE, STAP_ARG_addr, MAXSTRINGLEN, 50, 1, 0, 0);
}
#undef STAP_RETVALUE
#undef STAP_ARG_addr
#define STAP_RETVALUE c->l.f_kread.__retvalue
#define STAP_ARG_addr c->l.f_kread.addr
static __always_inline void stp_fn_kread(struct stp_context *c)
{
  long v = 0;
  if (bpf_probe_read_kernel(&v, sizeof(v), (const void *)STAP_ARG_addr) < 0)
    STAP_ERROR("kernel long copy fault at 0x%lx [man error::fault]", STAP_ARG_addr);
  STAP_RETURN(v + _stp_target_pid() + (_stp_tokenize_state() != 0));
}
#undef STAP_RETVALUE
#undef STAP_ARG_addr
#undef STAP_FN_LOC

STP_PROBE_TRACEPOINT(0, "syscalls", "sys_enter_getppid")
{
  /* only the harness's own getppid() calls: other processes on the machine call it too */
  if ((uint32_t)(bpf_get_current_pid_tgid() >> 32) != stp_config.runtime_pid)
    return 0;
  STP_PROBE_ENTER(0);
  c->l.probe.p0.i = 0;
  c->l.probe.p0.sum = 0;
  /* while (i < 1000) { sum += i; i++ }  -- 1000 iterations, MAXACTION 1000 is not counted here */
  STP_LOOP(c) {
    if (!(c->l.probe.p0.i < 1000))
      break;
    c->l.probe.p0.sum += c->l.probe.p0.i;
    c->l.probe.p0.i++;
  }
  if (STP_ERRORED(c)) goto out;
  g->loops += c->l.probe.p0.i;
  /* stats: agg <<< 0,1,2,3,3,5,6,7,1000 (docs/STAP-FORMATS.md §1) */
  c->l.probe.p0.ku.unit = 0;
  {
    int64_t vals[9] = {0, 1, 2, 3, 3, 5, 6, 7, 1000};
    for (int j = 0; j < 9; j++)
      stp_stat_add(c, agg, &c->l.probe.p0.ku, vals[j]);
  }
  STP_ZERO(c, &c->l.probe.p0.kl);
  stp_str_lit(c->l.probe.p0.kl.k0, "key");
  c->l.probe.p0.kl.k1 = 1;
  {
    int64_t vals[6] = {-5, 3, 15, 15, 15, 250};
    for (int j = 0; j < 6; j++)
      stp_stat_add(c, lin, &c->l.probe.p0.kl, vals[j]);
  }
  stp_stat_get(c, agg, &c->l.probe.p0.ku, &c->l.probe.p0.a);
  stp_print_hist(c, agg, &c->l.probe.p0.ku);
  stp_print_hist(c, lin, &c->l.probe.p0.kl);
  if (STP_ERRORED(c)) goto out;
  stp_fn_pp(c);
  stp_str_lit(c->l.probe.p0.txt, "tab\there \"q\" \xc3\xa9");
  c->l.f_quoted.addr = (int64_t)(long)c->l.probe.p0.txt;
  stp_fn_quoted(c);
  c->l.f_kread.addr = (int64_t)(long)&c->l.probe.p0.sum;
  stp_fn_kread(c);
  if (STP_ERRORED(c)) goto out;
  stp_printf_begin(c, 3);
  stp_printf_long(c, c->l.probe.p0.sum);
  stp_printf_long(c, c->l.probe.p0.a.count);
  stp_printf_long(c, c->l.probe.p0.a.sum);
  stp_printf_long(c, c->l.probe.p0.a.max);
  stp_printf_str(c, c->l.f_pp.__retvalue);
  stp_printf_str(c, c->l.f_quoted.__retvalue);
  stp_printf_long(c, c->l.f_kread.__retvalue);
  stp_printf_end(c);
  stp_log(c, "logged");
  stp_warn(c, "warned");
  /* a fault inside an embedded function: caught like try/catch would */
  c->l.f_kread.addr = 8;
  stp_fn_kread(c);
  if (STP_CATCHABLE(c)) {
    stp_log(c, c->k.errmsg);
    c->k.error = 0;
  }
  /* uncaught: x / 0 */
  STP_SET_LOC(c, 5);
  c->l.probe.p0.t = stp_div(c, c->l.probe.p0.sum, c->l.probe.p0.t - c->l.probe.p0.t);
  if (STP_ERRORED(c)) goto out;
  stp_log(c, "not reached");
out:
  STP_PROBE_LEAVE();
}

char LICENSE[] SEC("license") = "GPL";
