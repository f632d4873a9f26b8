/* ukstap runtime, native side (__UKSTAP_NATIVE__): the README API for probes that run in user
 * space inside ukstap (begin, end, error, interval timers), compiled into module.so.
 *
 * - Maps are the BPF module's maps, reached through the fds the loader registers by name
 *   (stp_native_register_map, stp_native_abi.h). Scalar globals: the "stp_globals" map, through
 *   its mmap when the BPF side makes it BPF_F_MMAPABLE, else fetched on probe entry and written
 *   back on exit. Session state: the mmapped "stp_session" map (common/stp_records.h).
 * - Stats: per-CPU values are aggregated with stp_stat_merge (common/stp_format.h); a native
 *   stp_stat_add updates CPU 0's slot (native probes never run concurrently with each other).
 * - Records (printf, errors, exit, warnings, histograms) are handed to the loader's decoder by a
 *   direct call, byte-identical to what the BPF side puts in the ring buffer.
 * - Context: in user space pid()/tid()/execname()/uid() are ukstap's own (SystemTap's begin/end
 *   probes run in stapio the same way); cpu() is the CPU ukstap runs on.
 * Everything is static: the generated file includes this header exactly once.
 */
#ifndef STP_NATIVE_H
#define STP_NATIVE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

/* Zero a key or value temp before filling it: map keys hash every byte. */
#define STP_ZERO(c, ptr) memset((ptr), 0, sizeof(*(ptr)))

#include "common/stp_format.h"
#include "common/stp_limits.h"
#include "common/stp_records.h"
#include "native/stp_native_abi.h"

#define STP_EXPORT __attribute__((visibility("default"), used))
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#ifndef STP_MAXNESTING
#define STP_MAXNESTING 10
#endif

/* ------------------------------------------------------------------ loader interface state */
static stp_native_output_fn stp_n_out_fn;
static void *stp_n_out_ctx;
static struct stp_config stp_n_config;
static struct stp_session stp_n_local_session;
static volatile struct stp_session *stp_n_session = &stp_n_local_session;
static const char *stp_n_pp = "", *stp_n_pn = "", *stp_n_func = "";
static const char *stp_n_input = "";  /* input.char/input.line: the text being delivered */

/* A BPF map as the native side sees it. */
struct stp_nmap {
  const char *bpf_name;
  uint32_t key_size, value_size;
  int64_t max_entries;
  int wrap, percpu, hist_kind;
  int64_t hist_start, hist_stop, hist_interval;
  int fd;
  void *shared;
  struct stp_nmap *next;
};
static struct stp_nmap *stp_n_maps;
struct stp_common;
static struct stp_common *stp_n_cur_k;  /* the running handler, for tapset hooks */
static void stp_nmap_link(struct stp_nmap *m) { m->next = stp_n_maps; stp_n_maps = m; }
/* the BPF kernel reader (bpf/stp_bpf_kread.h, stp_n_kread): its program and byte map */
static int stp_n_kread_prog_fd = -1, stp_n_kread_buf_fd = -1;

STP_EXPORT int stp_native_abi_version(void) { return STP_NATIVE_ABI_VERSION; }
STP_EXPORT void stp_native_set_output(stp_native_output_fn fn, void *ctx) { stp_n_out_fn = fn; stp_n_out_ctx = ctx; }
STP_EXPORT void stp_native_configure(const struct stp_config *cfg) { stp_n_config = *cfg; }
STP_EXPORT void stp_native_set_probe(const char *pp, const char *pn, const char *func)
{
  stp_n_pp = pp ? pp : "";
  stp_n_pn = pn ? pn : "";
  stp_n_func = func ? func : "";
}
/* Before running an input probe (__input.char/__input.line): the character or line read from
 * stdin, NUL-terminated, valid until the probe returns. */
STP_EXPORT void stp_native_set_input(const char *text) { stp_n_input = text ? text : ""; }
STP_EXPORT int stp_native_register_map(const char *name, int fd, void *shared, unsigned long vsize)
{
  struct stp_nmap *m;
  (void)vsize;
  if (strcmp(name, "stp_kread_prog") == 0) return (stp_n_kread_prog_fd = fd), 0;
  if (strcmp(name, "stp_kread_buf") == 0) return (stp_n_kread_buf_fd = fd), 0;
  if (strcmp(name, "stp_session") == 0 && shared) {
    stp_n_session = (volatile struct stp_session *)shared;
    return 0;
  }
  for (m = stp_n_maps; m; m = m->next)
    if (strcmp(m->bpf_name, name) == 0) {
      m->fd = fd;
      m->shared = shared;
      return 0;
    }
  return -1;
}

/* ------------------------------------------------------------------------------- context */
struct stp_common {
  int error;                 /* an uncaught error is pending in this handler */
  int loc;                   /* location id of the error (STP_LOC_NONE for error()) */
  int cur_loc;               /* location of the statement running (STP_SET_LOC) */
  int64_t actions;
  int64_t max_actions;       /* MAXACTION, or MAXACTION_INTERRUPTIBLE (STP_INTERRUPTIBLE) */
  int nesting;
  int probe_id;
  char errmsg[STP_MAXSTRINGLEN];
  /* the printf record being built */
  uint32_t rec_len;
  unsigned char rec[STP_REC_BODY + STP_MAX_PRINTF_ARGS * (8 + STP_REC_STR_SIZE(STP_MAXSTRINGLEN))];
};

#define STP_DEFINE_CONTEXT(T)                        \
  struct stp_context { struct stp_common k; T l; };  \
  static struct stp_context stp_n_ctx_storage

#define STP_ERRORED(c) ((c)->k.error)
#define STP_CATCHABLE(c) ((c)->k.error)
#define STP_SET_LOC(c, id) ((c)->k.cur_loc = (id))


static void stp_n_emit(const void *rec, uint32_t len)
{
  if (stp_n_out_fn)
    stp_n_out_fn(stp_n_out_ctx, rec, len);
}

/* One record with an optional string payload. */
static void stp_n_emit_str(uint16_t type, uint16_t id, const char *s)
{
  unsigned char buf[sizeof(struct stp_rec_hdr) + STP_REC_STR_SIZE(4096)];
  struct stp_rec_hdr h;
  uint32_t n = s ? (uint32_t)strnlen(s, 4096) : 0;
  memset(buf, 0, sizeof buf);
  h.type = type;
  h.id = id;
  h.len = s ? STP_REC_STR_SIZE(n) : 0;
  memcpy(buf, &h, sizeof h);
  if (s) {
    memcpy(buf + sizeof h, &n, 4);
    memcpy(buf + sizeof h + 4, s, n);
  }
  stp_n_emit(buf, (uint32_t)(sizeof h + h.len));
}

#define STP_LOC_CURRENT (-2) /* stp_error(): the location set by STP_SET_LOC, as in BPF */

static void stp_n_error(struct stp_common *ck, const char *msg, int loc)
{
  if (ck->error)
    return;
  ck->error = 1;
  if (loc == STP_LOC_CURRENT) loc = ck->cur_loc;
  ck->loc = loc < 0 ? STP_LOC_NONE : loc;
  snprintf(ck->errmsg, sizeof ck->errmsg, "%s", msg);
}

/* Script division, as the BPF side: "division by 0", and INT64_MIN / -1 wraps instead of
 * trapping. */
static int64_t stp_n_div(struct stp_common *ck, int64_t a, int64_t b, int mod)
{
  if (b == 0) {
    stp_n_error(ck, "division by 0", ck->cur_loc);
    return 0;
  }
  if (b == -1) return mod ? 0 : (int64_t)(0 - (uint64_t)a);
  return mod ? a % b : a / b;
}
#define stp_div(c, a, b) stp_n_div(&(c)->k, (a), (b), 0)
#define stp_mod(c, a, b) stp_n_div(&(c)->k, (a), (b), 1)

/* s =~ "re": POSIX extended regular expressions (SystemTap's dialect is ERE-based). Compiled on
 * each use: user-space probes are reports, not hot paths. */
static int64_t stp_n_regex_match(struct stp_common *ck, const char *s, const char *re)
{
  regex_t r;
  int rc;
  if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0) {
    stp_n_error(ck, "invalid regular expression", STP_LOC_CURRENT);
    return 0;
  }
  rc = regexec(&r, s, 0, NULL, 0);
  regfree(&r);
  return rc == 0;
}
#define stp_regex_match(c, s, re) stp_n_regex_match(&(c)->k, (s), (re))

#define STP_ACTION(c, n)                                                    \
  do {                                                                      \
    (c)->k.actions += (n);                                                  \
    if ((c)->k.actions > (c)->k.max_actions) stp_n_error(&(c)->k, "MAXACTION exceeded", -1); \
  } while (0)
/* A begin, end or error handler: SystemTap allows it MAXACTION_INTERRUPTIBLE statements. */
#define STP_INTERRUPTIBLE(c) ((c)->k.max_actions = STP_MAXACTION_INTERRUPTIBLE)

/* ------------------------------------------------------------------------------ globals */
static void *stp_n_globals_fetch(void);
static void stp_n_globals_store(void);

#define STP_DEFINE_GLOBALS(T)                                                   \
  static T stp_n_globals_copy;                                                  \
  static struct stp_nmap stp_n_globals_map = {"stp_globals", 4, sizeof(T), 1, 0, 0, 0, 0, 0, 0, -1, 0, 0}; \
  __attribute__((constructor)) static void stp_n_globals_reg(void) { stp_nmap_link(&stp_n_globals_map); } \
  static void *stp_n_globals_fetch(void)                                        \
  {                                                                             \
    uint32_t zero = 0;                                                          \
    if (stp_n_globals_map.shared) return stp_n_globals_map.shared;              \
    if (stp_n_globals_map.fd >= 0)                                              \
      bpf_map_lookup_elem(stp_n_globals_map.fd, &zero, &stp_n_globals_copy);    \
    return &stp_n_globals_copy;                                                 \
  }                                                                             \
  static void stp_n_globals_store(void)                                         \
  {                                                                             \
    uint32_t zero = 0;                                                          \
    if (!stp_n_globals_map.shared && stp_n_globals_map.fd >= 0)                 \
      bpf_map_update_elem(stp_n_globals_map.fd, &zero, &stp_n_globals_copy, BPF_ANY); \
  }

/* --------------------------------------------------------------------------- probe glue */
/* Generated functions take the BPF program's context in BPF builds only (bpf/stp_bpf.h). */
#define STP_FN_CTX_PARAM
#define STP_FN_CTX_ARG
/* A function pass 3 shares between BPF probes (codegen/shared_functions.h): inlined here. */
#define STP_FN_SHARED static __always_inline

/* The loader calls stp_probe_<id>(NULL) after stp_native_set_probe(). */
#define STP_PROBE_NATIVE(id) STP_EXPORT int stp_probe_##id(struct stp_context *stp_c_arg)

#define STP_PROBE_ENTER(id)                                                     \
  struct stp_context *c = stp_c_arg ? stp_c_arg : &stp_n_ctx_storage;           \
  struct stp_globals *g;                                                        \
  memset(&c->k, 0, offsetof(struct stp_common, errmsg));                      \
  c->k.errmsg[0] = 0;                                                           \
  c->k.probe_id = (id);                                                         \
  c->k.max_actions = STP_MAXACTION;                                             \
  stp_n_cur_k = &c->k;                                                          \
  g = (struct stp_globals *)stp_n_globals_fetch();                              \
  (void)g

static void stp_n_leave(struct stp_common *ck)
{
  stp_n_globals_store();
  if (ck->error) {
    stp_n_emit_str(STP_REC_ERROR, (uint16_t)ck->loc, ck->errmsg);
    __atomic_add_fetch(&stp_n_session->errors, 1, __ATOMIC_SEQ_CST);
    if (stp_n_session->errors > (uint64_t)STP_MAXERRORS)
      stp_n_session->state = STP_SESSION_ERROR;
  }
  stp_n_cur_k = 0;
}
#define STP_PROBE_LEAVE() do { stp_n_leave(&c->k); return 0; } while (0)

/* Runs the generated global initializers (global x = 5) once, before begin probes. */
#define STP_GLOBALS_INIT                                                        \
  static void stp_n_globals_init_body(struct stp_context *c, struct stp_globals *g); \
  STP_EXPORT void stp_native_globals_init(void)                                 \
  {                                                                             \
    struct stp_context *c = &stp_n_ctx_storage;                                 \
    memset(&c->k, 0, sizeof c->k);                                           \
    stp_n_cur_k = &c->k;                                                        \
    stp_n_globals_init_body(c, (struct stp_globals *)stp_n_globals_fetch());    \
    stp_n_globals_store();                                                      \
    stp_n_cur_k = 0;                                                          \
  }                                                                             \
  static void stp_n_globals_init_body(struct stp_context *c, struct stp_globals *g)

#define STP_LOOP(c) for (;;)

/* ------------------------------------------------------------------------------ strings */
static __always_inline void stp_n_str_copy(struct stp_common *ck, char *dst, const char *src)
{
  (void)ck;
  if (dst != src) { strncpy(dst, src, STP_MAXSTRINGLEN - 1); dst[STP_MAXSTRINGLEN - 1] = 0; }
}
static __always_inline void stp_n_str_cat(struct stp_common *ck, char *dst, const char *src)
{
  size_t n = strnlen(dst, STP_MAXSTRINGLEN - 1);
  (void)ck;
  strncpy(dst + n, src, STP_MAXSTRINGLEN - 1 - n);
  dst[STP_MAXSTRINGLEN - 1] = 0;
}
static __always_inline int stp_n_str_cmp(struct stp_common *ck, const char *a, const char *b)
{
  (void)ck;
  return strncmp(a, b, STP_MAXSTRINGLEN);
}
static __always_inline int64_t stp_n_str_len(struct stp_common *ck, const char *s)
{
  (void)ck;
  return (int64_t)strnlen(s, STP_MAXSTRINGLEN);
}
#define stp_str_lit(dst, lit) stp_n_str_copy(0, (dst), (lit))
/* A key field sized for a ubacktrace() token (STP_TOKEN_KEY_SIZE, not MAXSTRINGLEN). */
#define stp_token_key_copy(c, dst, src) \
  do { strncpy((dst), (src), sizeof(dst) - 1); (dst)[sizeof(dst) - 1] = 0; } while (0)
static __always_inline void stp_n_long_to_str(struct stp_common *ck, char *dst, int64_t v)
{
  (void)ck;
  snprintf(dst, STP_MAXSTRINGLEN, "%lld", (long long)v);
}

/* sprintf */
static __always_inline void stp_n_sfmt_begin(struct stp_common *ck, char *dst) { (void)ck; dst[0] = 0; }
static __always_inline void stp_n_sfmt_lit(struct stp_common *ck, char *dst, const char *s)
{
  uint32_t pos = (uint32_t)strnlen(dst, STP_MAXSTRINGLEN - 1);
  (void)ck;
  stp_fmt_lit(dst, STP_MAXSTRINGLEN, pos, s, STP_MAXSTRINGLEN);
}
static __always_inline void stp_n_sfmt_long(struct stp_common *ck, char *dst, int64_t v, int conv, int flags, int width, int prec)
{
  uint32_t pos = (uint32_t)strnlen(dst, STP_MAXSTRINGLEN - 1);
  (void)ck;
  stp_fmt_long(dst, STP_MAXSTRINGLEN, pos, v, conv, flags, width, prec);
}
static __always_inline void stp_n_sfmt_str(struct stp_common *ck, char *dst, const char *s, int flags, int width, int prec)
{
  uint32_t pos = (uint32_t)strnlen(dst, STP_MAXSTRINGLEN - 1);
  (void)ck;
  stp_fmt_str(dst, STP_MAXSTRINGLEN, pos, s, STP_MAXSTRINGLEN, flags, width, prec);
}
static __always_inline void stp_n_sfmt_char(struct stp_common *ck, char *dst, int64_t v, int flags, int width)
{
  uint32_t pos = (uint32_t)strnlen(dst, STP_MAXSTRINGLEN - 1);
  (void)ck;
  stp_fmt_char(dst, STP_MAXSTRINGLEN, pos, v, flags, width);
}

/* ------------------------------------------------------------------------------- output */
#ifdef STP_CTF
/* --ctf: the event's context after the header (common/stp_records.h), as the BPF side writes
 * it; a native probe runs in ukstap itself. */
static void stp_n_rec_ctx(unsigned char *rec, int probe_id)
{
  struct stp_rec_ctx x;
  struct timespec ts;
  memset(&x, 0, sizeof x);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  x.time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  x.cpu = (uint32_t)sched_getcpu();
  x.probe_id = (uint32_t)probe_id;
  x.pid = (uint32_t)getpid();
  x.tid = (uint32_t)syscall(SYS_gettid);
  prctl(PR_GET_NAME, x.comm, 0, 0, 0);
  memcpy(rec + sizeof(struct stp_rec_hdr), &x, sizeof x);
}
#endif

static __always_inline void stp_n_printf_begin(struct stp_common *ck, int fmt_id)
{
  struct stp_rec_hdr h = {STP_REC_PRINTF, (uint16_t)fmt_id, 0};
#ifdef STP_CTF
  h.type |= STP_REC_CTX_FLAG;
  stp_n_rec_ctx(ck->rec, ck->probe_id);
#endif
  memcpy(ck->rec, &h, sizeof h);
  ck->rec_len = STP_REC_BODY;
}
static __always_inline void stp_n_printf_long(struct stp_common *ck, int64_t v)
{
  if (ck->rec_len + 8 > sizeof ck->rec) return;
  memcpy(ck->rec + ck->rec_len, &v, 8);
  ck->rec_len += 8;
}
static __always_inline void stp_n_printf_str(struct stp_common *ck, const char *s)
{
  uint32_t n = (uint32_t)strnlen(s, STP_MAXSTRINGLEN);
  uint32_t sz = STP_REC_STR_SIZE(n);
  if (ck->rec_len + sz > sizeof ck->rec) return;
  memset(ck->rec + ck->rec_len, 0, sz);
  memcpy(ck->rec + ck->rec_len, &n, 4);
  memcpy(ck->rec + ck->rec_len + 4, s, n);
  ck->rec_len += sz;
}
/* %m/%M: prec bytes at addr, here in ukstap's own memory (read without risking a fault). */
static void stp_n_printf_mem(struct stp_common *ck, int64_t addr, int64_t prec, int user)
{
  unsigned char buf[STP_MAXSTRINGLEN];
  uint32_t n = prec < 0 ? 1 : prec > STP_MAXSTRINGLEN ? STP_MAXSTRINGLEN : (uint32_t)prec;
  struct iovec l = {buf, n}, r = {(void *)(uintptr_t)addr, n};
  uint32_t sz;
  (void)user;
  if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)n) n = 0;
  sz = STP_REC_STR_SIZE(n);
  if (ck->rec_len + sz > sizeof ck->rec) return;
  memset(ck->rec + ck->rec_len, 0, sz);
  memcpy(ck->rec + ck->rec_len, &n, 4);
  memcpy(ck->rec + ck->rec_len + 4, buf, n);
  ck->rec_len += sz;
}
#define stp_printf_mem(c, addr, prec, user) stp_n_printf_mem(&(c)->k, (addr), (prec), (user))

static __always_inline void stp_n_printf_end(struct stp_common *ck)
{
  struct stp_rec_hdr h;
  memcpy(&h, ck->rec, sizeof h);
  h.len = ck->rec_len - (uint32_t)sizeof h;
  memcpy(ck->rec, &h, sizeof h);
  stp_n_emit(ck->rec, ck->rec_len);
}

static void stp_n_request_exit(void)
{
  stp_n_session->exit_requested = 1;
  if (stp_n_session->state != STP_SESSION_ERROR) stp_n_session->state = STP_SESSION_STOPPING;
  stp_n_emit_str(STP_REC_EXIT, STP_EXIT_NORMAL, 0);
}
static __always_inline void stp_n_exit(struct stp_common *ck) { (void)ck; stp_n_request_exit(); }
static __always_inline void stp_n_warn(struct stp_common *ck, const char *msg) { (void)ck; stp_n_emit_str(STP_REC_WARN, 0, msg); }
#ifdef STP_CTF
static void stp_n_log(struct stp_common *ck, const char *msg)
{
  unsigned char buf[STP_REC_BODY + STP_REC_STR_SIZE(4096)];
  struct stp_rec_hdr h = {STP_REC_LOG | STP_REC_CTX_FLAG, 0, 0};
  uint32_t n = (uint32_t)strnlen(msg, 4096);
  memset(buf, 0, sizeof buf);
  stp_n_rec_ctx(buf, ck->probe_id);
  h.len = (uint32_t)(STP_REC_BODY - sizeof h) + STP_REC_STR_SIZE(n);
  memcpy(buf, &h, sizeof h);
  memcpy(buf + STP_REC_BODY, &n, 4);
  memcpy(buf + STP_REC_BODY + 4, msg, n);
  stp_n_emit(buf, (uint32_t)(sizeof h + h.len));
}
#else
static __always_inline void stp_n_log(struct stp_common *ck, const char *msg) { (void)ck; stp_n_emit_str(STP_REC_LOG, 0, msg); }
#endif

/* API names (README) over the stp_common-based implementations */
#define stp_error(c, msg, loc) stp_n_error(&(c)->k, (msg), (loc))
#define stp_str_copy(c, dst, src) stp_n_str_copy(&(c)->k, (dst), (src))
#define stp_str_cat(c, dst, src) stp_n_str_cat(&(c)->k, (dst), (src))
#define stp_str_cmp(c, a, b) stp_n_str_cmp(&(c)->k, (a), (b))
#define stp_str_len(c, s) stp_n_str_len(&(c)->k, (s))
#define stp_long_to_str(c, dst, v) stp_n_long_to_str(&(c)->k, (dst), (v))
#define stp_sfmt_begin(c, dst) stp_n_sfmt_begin(&(c)->k, (dst))
#define stp_sfmt_lit(c, dst, s) stp_n_sfmt_lit(&(c)->k, (dst), (s))
#define stp_sfmt_long(c, dst, v, conv, flags, width, prec) stp_n_sfmt_long(&(c)->k, (dst), (v), (conv), (flags), (width), (prec))
#define stp_sfmt_str(c, dst, s, flags, width, prec) stp_n_sfmt_str(&(c)->k, (dst), (s), (flags), (width), (prec))
#define stp_sfmt_char(c, dst, v, flags, width) stp_n_sfmt_char(&(c)->k, (dst), (v), (flags), (width))
#define stp_printf_begin(c, fmt_id) stp_n_printf_begin(&(c)->k, (fmt_id))
#define stp_printf_long(c, v) stp_n_printf_long(&(c)->k, (v))
#define stp_printf_str(c, s) stp_n_printf_str(&(c)->k, (s))
#define stp_printf_end(c) stp_n_printf_end(&(c)->k)
#define stp_exit(c) stp_n_exit(&(c)->k)
#define stp_warn(c, msg) stp_n_warn(&(c)->k, (msg))
#define stp_log(c, msg) stp_n_log(&(c)->k, (msg))

/* ------------------------------------------------------------------------------ maps */
#define STP_DEFINE_MAP(name, K, V, max, wrap_)                                        \
  static struct stp_nmap stp_nmap_##name = {"stp_map_" #name, sizeof(K), sizeof(V), (max), (wrap_), 0, 0, 0, 0, 0, -1, 0, 0}; \
  __attribute__((constructor)) static void stp_nmap_reg_##name(void) { stp_nmap_link(&stp_nmap_##name); }

#define STP_DEFINE_STATS(name, K, V, max, kind, start, stop, interval)               \
  static struct stp_nmap stp_nmap_##name = {"stp_stat_" #name, sizeof(K), sizeof(V), (max), 0, 1, (kind), (start), (stop), (interval), -1, 0, 0}; \
  __attribute__((constructor)) static void stp_nmap_reg_##name(void) { stp_nmap_link(&stp_nmap_##name); }

static int stp_n_nr_cpus(void)
{
  int n = (int)stp_n_config.nr_cpus;
  if (n <= 0) n = (int)sysconf(_SC_NPROCESSORS_CONF);
  return n > 0 ? n : 1;
}

static void stp_n_map_get(struct stp_common *ck, struct stp_nmap *m, const void *key, void *val)
{
  (void)ck;
  if (m->fd < 0 || bpf_map_lookup_elem(m->fd, key, val) != 0) memset(val, 0, m->value_size);
}
static void stp_n_map_set(struct stp_common *ck, struct stp_nmap *m, const void *key, const void *val, const char *name)
{
  /* Insertion number first (see runtime/bpf/stp_bpf_maps.h): kept for an existing key. */
  static unsigned char old[1 << 16];
  uint64_t seq;
  if (m->fd < 0) return;
  if (m->value_size <= sizeof old && bpf_map_lookup_elem(m->fd, key, old) == 0)
    memcpy(&seq, old, 8);
  else
    seq = __atomic_add_fetch(&stp_n_session->seq, 1, __ATOMIC_SEQ_CST);
  memcpy((void *)val, &seq, 8);
  if (bpf_map_update_elem(m->fd, key, val, BPF_ANY) == 0) return;
  if (errno == E2BIG || errno == ENOMEM || errno == ENOSPC) {
    if (m->wrap) {  /* drop some entry, then retry */
      unsigned char k[4096];
      if (m->key_size <= sizeof k && bpf_map_get_next_key(m->fd, NULL, k) == 0) {
        bpf_map_delete_elem(m->fd, k);
        if (bpf_map_update_elem(m->fd, key, val, BPF_ANY) == 0) return;
      }
    }
    (void)name;
    stp_n_error(ck, "Array overflow, check MAXMAPENTRIES", STP_LOC_CURRENT);
  }
}
static int stp_n_map_exists(struct stp_common *ck, struct stp_nmap *m, const void *key)
{
  static unsigned char tmp[1 << 16];
  (void)ck;
  if (m->fd < 0) return 0;
  if (m->percpu) {
    unsigned char *buf = malloc((size_t)stp_n_nr_cpus() * ((m->value_size + 7) & ~7u));
    int r = buf && bpf_map_lookup_elem(m->fd, key, buf) == 0;
    free(buf);
    return r;
  }
  return m->value_size <= sizeof tmp && bpf_map_lookup_elem(m->fd, key, tmp) == 0;
}
static void stp_n_map_delete(struct stp_common *ck, struct stp_nmap *m, const void *key)
{
  (void)ck;
  if (m->fd >= 0) bpf_map_delete_elem(m->fd, key);
}
/* `delete MAP`: the keys present now are walked once, then deleted. Deleting "the first key"
 * until none is left never ended while a kernel probe kept re-inserting a key (a syscall probe's
 * p[1]++ runs on the very syscalls the loop makes): the timer probe spun, -T and SIGINT were
 * never looked at. The walk is bounded by the map's size (a hash walk restarts from its first
 * key when the previous one was deleted meanwhile); entries inserted during the walk may stay,
 * as with an insertion right after the delete. */
static void stp_n_map_clear(struct stp_common *ck, struct stp_nmap *m)
{
  size_t cap = m->max_entries > 0 ? (size_t)m->max_entries : 1, n = 0, i;
  unsigned char *keys;
  (void)ck;
  if (m->fd < 0 || !m->key_size) return;
  keys = malloc(cap * m->key_size);
  if (!keys) return;
  while (n < cap && bpf_map_get_next_key(m->fd, n ? keys + (n - 1) * m->key_size : NULL,
                                         keys + n * m->key_size) == 0)
    n++;
  for (i = 0; i < n; i++) bpf_map_delete_elem(m->fd, keys + i * m->key_size);
  free(keys);
}

#define stp_map_get(c, NAME, key, val) stp_n_map_get(&(c)->k, &stp_nmap_##NAME, (key), (val))
#define stp_map_set(c, NAME, key, val) stp_n_map_set(&(c)->k, &stp_nmap_##NAME, (key), (val), #NAME)
#define stp_map_exists(c, NAME, key) stp_n_map_exists(&(c)->k, &stp_nmap_##NAME, (key))
#define stp_map_delete(c, NAME, key) stp_n_map_delete(&(c)->k, &stp_nmap_##NAME, (key))
#define stp_map_clear(c, NAME) stp_n_map_clear(&(c)->k, &stp_nmap_##NAME)
/* A statistic's map has the same native descriptor (stp_nmap_NAME). */
#define stp_stat_delete(c, NAME, key) stp_map_delete(c, NAME, key)
#define stp_stat_clear(c, NAME) stp_map_clear(c, NAME)

/* Stats: per-CPU values (value_size rounded to 8 per CPU, as the kernel returns them). */
static void stp_n_stat_agg(struct stp_nmap *m, const unsigned char *percpu, void *out)
{
  size_t stride = (m->value_size + 7) & ~7u, nb = (m->value_size - sizeof(struct stp_stat_base)) / 8, b;
  int cpu;
  struct stp_stat_base *dst = (struct stp_stat_base *)out;
  memset(out, 0, m->value_size);
  for (cpu = 0; cpu < stp_n_nr_cpus(); cpu++) {
    const unsigned char *v = percpu + cpu * stride;
    struct stp_stat_base src;
    memcpy(&src, v, sizeof src);
    stp_stat_merge(dst, &src);
    for (b = 0; b < nb; b++) {
      int64_t x, y;
      memcpy(&x, (unsigned char *)out + sizeof(struct stp_stat_base) + b * 8, 8);
      memcpy(&y, v + sizeof(struct stp_stat_base) + b * 8, 8);
      x += y;
      memcpy((unsigned char *)out + sizeof(struct stp_stat_base) + b * 8, &x, 8);
    }
  }
}
static void stp_n_stat_get(struct stp_common *ck, struct stp_nmap *m, const void *key, void *agg)
{
  size_t stride = (m->value_size + 7) & ~7u;
  unsigned char *buf = calloc((size_t)stp_n_nr_cpus(), stride);
  (void)ck;
  memset(agg, 0, m->value_size);
  if (buf && m->fd >= 0 && bpf_map_lookup_elem(m->fd, key, buf) == 0) stp_n_stat_agg(m, buf, agg);
  free(buf);
}
static void stp_n_stat_add(struct stp_common *ck, struct stp_nmap *m, const void *key, int64_t v,
                           int shift)
{
  size_t stride = (m->value_size + 7) & ~7u;
  unsigned char *buf = calloc((size_t)stp_n_nr_cpus(), stride);
  struct stp_stat_base s;
  if (!buf || m->fd < 0) { free(buf); return; }
  if (bpf_map_lookup_elem(m->fd, key, buf) != 0) memset(buf, 0, (size_t)stp_n_nr_cpus() * stride);
  memcpy(&s, buf, sizeof s);
  if (!s.seq) s.seq = (int64_t)__atomic_add_fetch(&stp_n_session->seq, 1, __ATOMIC_SEQ_CST);
  stp_stat_update_shift(&s, v, shift);
  memcpy(buf, &s, sizeof s);
  if (m->hist_kind) {
    int64_t nb = (int64_t)(m->value_size - sizeof(struct stp_stat_base)) / 8, i, x;
    if (m->hist_kind == STP_HIST_LOG) i = stp_hist_log_index(v);
    else i = stp_hist_linear_index(v, m->hist_start, m->hist_interval, nb);
    if (i >= 0 && i < nb) {
      memcpy(&x, buf + sizeof(struct stp_stat_base) + i * 8, 8);
      x++;
      memcpy(buf + sizeof(struct stp_stat_base) + i * 8, &x, 8);
    }
  }
  if (bpf_map_update_elem(m->fd, key, buf, BPF_ANY) != 0 && (errno == E2BIG || errno == ENOMEM))
    stp_n_error(ck, "Array overflow, check MAXMAPENTRIES", STP_LOC_CURRENT);
  free(buf);
}
#define stp_stat_add(c, NAME, key, v) stp_n_stat_add(&(c)->k, &stp_nmap_##NAME, (key), (v), 0)
#define stp_stat_add_shift(c, NAME, key, v, shift) \
  stp_n_stat_add(&(c)->k, &stp_nmap_##NAME, (key), (v), (shift))
#define stp_stat_get(c, NAME, key, agg) stp_n_stat_get(&(c)->k, &stp_nmap_##NAME, (key), (agg))

static void stp_n_print_hist(struct stp_common *ck, struct stp_nmap *m, const void *key, int stats_id)
{
  unsigned char *agg = calloc(1, m->value_size), *rec;
  struct stp_rec_hdr h;
  stp_n_stat_get(ck, m, key, agg);
  if (((struct stp_stat_base *)agg)->count == 0) {
    free(agg);
    stp_n_error(ck, "empty aggregate", -1);
    return;
  }
  rec = calloc(1, STP_REC_BODY + STP_REC_ALIGN(m->value_size));
  h.type = STP_REC_HIST;
  h.id = (uint16_t)stats_id;
  h.len = (uint32_t)(STP_REC_BODY - sizeof h) + STP_REC_ALIGN(m->value_size);
#ifdef STP_CTF
  h.type |= STP_REC_CTX_FLAG;
  stp_n_rec_ctx(rec, ck->probe_id);
#endif
  memcpy(rec, &h, sizeof h);
  memcpy(rec + STP_REC_BODY, agg, m->value_size);
  stp_n_emit(rec, (uint32_t)(sizeof h + h.len));
  free(rec);
  free(agg);
}
/* The stats id is the order of STP_DEFINE_STATS in the file: found by position in the list. */
static int stp_n_stats_id(struct stp_nmap *m)
{
  struct stp_nmap *p;
  int n = 0, idx = -1;
  for (p = stp_n_maps; p; p = p->next)
    if (p->percpu) n++;
  for (p = stp_n_maps; p; p = p->next)
    if (p->percpu) {
      n--;
      if (p == m) idx = n;
    }
  return idx;
}
#define stp_print_hist(c, NAME, key) stp_n_print_hist(&(c)->k, &stp_nmap_##NAME, (key), stp_n_stats_id(&stp_nmap_##NAME))

#include "native/stp_native_iter.h"
#include "native/stp_native_tapset.h"
#include "native/stp_native_task.h"
#include "native/stp_native_procfs.h"

#endif /* STP_NATIVE_H */
