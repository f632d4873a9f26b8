/* Verifier test, generated style: 20 string locals, cat/cmp/len/copy, tuple-key maps.
 * Built at MAXSTRINGLEN 128 and 512 by run-bpf-runtime.sh. Runtime checks: the loader
 * triggers getppid() and compares the printf record with the expected values. */
#ifndef STP_MAXSTRINGLEN
#define STP_MAXSTRINGLEN 128
#endif
#define STP_NPROBES 2
#include "stp_runtime.h"

struct stp_globals { int64_t count; char s[STP_MAXSTRINGLEN]; };
STP_DEFINE_GLOBALS(struct stp_globals);

struct stp_key_names { char k0[STP_MAXSTRINGLEN]; int64_t k1; };
/* Array values start with the insertion number the runtime keeps (runtime/bpf/stp_bpf_maps.h). */
struct stp_val_names { uint64_t seq; char v[STP_MAXSTRINGLEN]; };
struct stp_val_ring { uint64_t seq; int64_t v; };
STP_DEFINE_MAP(names, struct stp_key_names, struct stp_val_names, 100, 0);
STP_DEFINE_MAP(ring, struct stp_key_names, struct stp_val_ring, 4, 1);

#define S20(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19)
#define DECL(i) char s##i[STP_MAXSTRINGLEN];
struct stp_locals_p0 {
  S20(DECL)
  int64_t x, r0, r1, r2, r3, n;
  struct stp_key_names key0;
  struct stp_val_names val0;
};
struct stp_locals { union { struct stp_locals_p0 p0; } probe; };
STP_DEFINE_CONTEXT(struct stp_locals);

STP_PROBE_TRACEPOINT(0, "syscalls", "sys_enter_getppid")
{
  /* only the harness's own getppid() calls: other processes on the machine call it too */
  if ((uint32_t)(bpf_get_current_pid_tgid() >> 32) != stp_config.runtime_pid)
    return 0;
  STP_PROBE_ENTER(0);
#define INIT(i) c->l.probe.p0.s##i[0] = '\0';
  S20(INIT)
  STP_ACTION(c, 1);
  stp_str_lit(c->l.probe.p0.s0, "hello");
  stp_str_lit(c->l.probe.p0.s1, ", world");
  c->l.probe.p0.x = 0;
  c->l.probe.p0.n = 0;
#define CAT(i) if (i >= 2) { stp_str_cat(c, c->l.probe.p0.s##i, c->l.probe.p0.s0); stp_str_cat(c, c->l.probe.p0.s##i, c->l.probe.p0.s1); }
  S20(CAT)
#define CMP(i) c->l.probe.p0.x += stp_str_cmp(c, c->l.probe.p0.s##i, c->l.probe.p0.s2) != 0;
  S20(CMP)
  /* s0 = "hello", s1 = ", world", s2..s19 = "hello, world": x = 2 */
  c->l.probe.p0.r0 = stp_str_cmp(c, c->l.probe.p0.s2, "hello, world");     /* 0 */
  c->l.probe.p0.r1 = stp_str_cmp(c, c->l.probe.p0.s2, "hello, worlds") < 0; /* 1 */
  c->l.probe.p0.r2 = stp_str_len(c, c->l.probe.p0.s2);                     /* 12 */
  stp_str_cat(c, c->l.probe.p0.s3, c->l.probe.p0.s3);                       /* s = s . s */
  /* fill s4 to the limit: 30 cats of 12 chars cut at MAXSTRINGLEN-1 */
  for (int i = 0; i < 30; i++)
    stp_str_cat(c, c->l.probe.p0.s4, c->l.probe.p0.s2);
  c->l.probe.p0.r3 = stp_str_len(c, c->l.probe.p0.s4);                     /* min(360, MAX-1) */
  stp_str_copy(c, g->s, c->l.probe.p0.s2);
  g->count = g->count + 1;

  /* names["hello, world", 42] = s3 ; read back */
  STP_ZERO(c, &c->l.probe.p0.key0);
  stp_str_copy(c, c->l.probe.p0.key0.k0, c->l.probe.p0.s2);
  c->l.probe.p0.key0.k1 = 42;
  stp_str_copy(c, c->l.probe.p0.val0.v, c->l.probe.p0.s3);
  stp_map_set(c, names, &c->l.probe.p0.key0, &c->l.probe.p0.val0);
  if (STP_ERRORED(c)) goto out;
  c->l.probe.p0.val0.v[0] = '\0';
  stp_map_get(c, names, &c->l.probe.p0.key0, &c->l.probe.p0.val0);
  c->l.probe.p0.n = stp_map_exists(c, names, &c->l.probe.p0.key0);
  c->l.probe.p0.key0.k1 = 43;
  c->l.probe.p0.n += 10 * stp_map_exists(c, names, &c->l.probe.p0.key0);   /* n = 1 */
  c->l.probe.p0.x += 0;
  {
    struct stp_val_ring one = {0, 1};
    stp_map_set(c, ring, &c->l.probe.p0.key0, &one);
  }

  stp_printf_begin(c, 7);
  stp_printf_long(c, c->l.probe.p0.x);
  stp_printf_long(c, c->l.probe.p0.r0);
  stp_printf_long(c, c->l.probe.p0.r1);
  stp_printf_long(c, c->l.probe.p0.r2);
  stp_printf_long(c, c->l.probe.p0.r3);
  stp_printf_long(c, c->l.probe.p0.n);
  stp_printf_str(c, c->l.probe.p0.s0);
  stp_printf_str(c, c->l.probe.p0.val0.v);
  stp_printf_str(c, c->l.probe.p0.s19);
  stp_printf_end(c);
  stp_map_delete(c, names, &c->l.probe.p0.key0);
  stp_map_clear(c, names);
out:
  STP_PROBE_LEAVE();
}

char LICENSE[] SEC("license") = "GPL";
