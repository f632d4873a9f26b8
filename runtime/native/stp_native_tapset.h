/* ukstap runtime, native side: what the tapsets' embedded C (%{ %}) calls, so the same bodies
 * compile into module.so (tapsets/RUNTIME-HOOKS.md). BPF helpers are emulated for ukstap's own
 * process: in user space the "current task" is ukstap (as SystemTap's begin probes run in
 * stapio). Kernel-only constructs (BPF_CORE_READ, bpf_get_current_task, pt_regs) are not
 * provided: tapset code using them must be under #ifdef __UKSTAP_BPF__. */
#ifndef STP_NATIVE_TAPSET_H
#define STP_NATIVE_TAPSET_H

#include <sys/prctl.h>
#include <sys/uio.h>

#include "common/stp_strings.h"

/* --- BPF helper shims ----------------------------------------------------------------- */
static inline uint64_t bpf_get_current_pid_tgid(void)
{
  return ((uint64_t)(uint32_t)getpid() << 32) | (uint32_t)syscall(SYS_gettid);
}
static inline uint64_t bpf_get_current_uid_gid(void)
{
  return ((uint64_t)(uint32_t)getgid() << 32) | (uint32_t)getuid();
}
static inline long bpf_get_current_comm(void *buf, uint32_t size)
{
  char comm[17] = {0};
  if (!size) return -22;
  prctl(PR_GET_NAME, comm, 0, 0, 0);
  snprintf((char *)buf, size, "%s", comm);
  return 0;
}
static inline uint64_t stp_n_clock(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline uint64_t bpf_ktime_get_ns(void) { return stp_n_clock(CLOCK_MONOTONIC); }
static inline uint64_t bpf_ktime_get_boot_ns(void) { return stp_n_clock(CLOCK_BOOTTIME); }
static inline uint64_t bpf_ktime_get_coarse_ns(void) { return stp_n_clock(CLOCK_MONOTONIC_COARSE); }
static inline uint64_t bpf_jiffies64(void)
{
  uint32_t hz = stp_n_config.config_hz ? stp_n_config.config_hz : 250;
  return stp_n_clock(CLOCK_MONOTONIC) / (1000000000ull / hz);
}
static inline uint32_t bpf_get_smp_processor_id(void)
{
  int cpu = sched_getcpu();
  return cpu < 0 ? 0 : (uint32_t)cpu;
}
static inline uint32_t bpf_get_prandom_u32(void) { return (uint32_t)random(); }
/* Reads "from kernel or user memory": in module.so both are ukstap's own memory. They go through
 * process_vm_readv on ukstap itself, so a bad address is -EFAULT (as in BPF), never a SIGSEGV. */
static inline long stp_n_read_self(void *dst, const void *src, size_t size)
{
  struct iovec l = { dst, size }, r = { (void *)src, size };
  ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
  return n < 0 ? -(long)errno : (long)n;
}
/* A kernel address (x86-64: the upper half) is read by the BPF kernel reader
 * (bpf/stp_bpf_kread.h) run with BPF_PROG_TEST_RUN: its helper's return code, the bytes copied
 * to dst; -14 when the reader is not there. str: as bpf_probe_read_kernel_str. */
static inline int stp_n_kernel_addr(const void *src) { return (uintptr_t)src >= 0xffff800000000000ull; }
static long stp_n_kread(void *dst, uint32_t size, const void *src, int str)
{
  struct { uint64_t addr; uint32_t size, str; int64_t rc; } a = { (uintptr_t)src, size, (uint32_t)str, -14 };
  static char bytes[STP_MAXSTRINGLEN];
  uint32_t zero = 0;
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &a, .ctx_size_in = sizeof a);
  if (size > STP_MAXSTRINGLEN || stp_n_kread_prog_fd < 0 || stp_n_kread_buf_fd < 0 ||
      bpf_prog_test_run_opts(stp_n_kread_prog_fd, &opts) != 0 || a.rc < 0 ||
      bpf_map_lookup_elem(stp_n_kread_buf_fd, &zero, bytes) != 0)
    return a.rc < 0 ? a.rc : -14;
  memcpy(dst, bytes, size);
  return a.rc;
}
static inline long bpf_probe_read_kernel(void *dst, uint32_t size, const void *src)
{
  if (!size) return 0;
  if (stp_n_kernel_addr(src)) {
    long rc = stp_n_kread(dst, size, src, 0);
    if (rc < 0) memset(dst, 0, size);
    return rc < 0 ? rc : 0;
  }
  if (!src || stp_n_read_self(dst, src, size) != (long)size) { memset(dst, 0, size); return -14; }
  return 0;
}
#define bpf_probe_read_user bpf_probe_read_kernel
#define bpf_probe_read bpf_probe_read_kernel
/* Page by page, so a string that ends just before an unmapped page is still read. */
static inline long bpf_probe_read_kernel_str(void *dst, uint32_t size, const void *src)
{
  char *d = (char *)dst;
  uintptr_t a = (uintptr_t)src;
  uint32_t got = 0;
  if (!size) return -22;
  d[0] = 0;
  if (!src) return -14;
  if (stp_n_kernel_addr(src)) {
    long rc = stp_n_kread(dst, size, src, 1);
    if (rc < 0) d[0] = 0;
    return rc;
  }
  while (got < size - 1) {
    size_t chunk = 4096 - ((a + got) & 4095);
    const char *nul;
    if (chunk > size - 1 - got) chunk = size - 1 - got;
    if (stp_n_read_self(d + got, (const void *)(a + got), chunk) != (long)chunk) {
      if (!got) { d[0] = 0; return -14; }
      break;
    }
    nul = (const char *)memchr(d + got, 0, chunk);
    if (nul) return (long)(nul - d) + 1;
    got += (uint32_t)chunk;
  }
  d[got] = 0;
  return (long)got + 1;
}
#define bpf_probe_read_user_str bpf_probe_read_kernel_str
#define bpf_probe_read_str bpf_probe_read_kernel_str
#define bpf_get_current_task() 0L

/* --- function ABI (RUNTIME-HOOKS.md) --------------------------------------------------- */
#ifndef STAP_ERROR
#define STAP_ERROR(...)                                                        \
  do {                                                                         \
    char stp_n_msg_[STP_MAXSTRINGLEN];                                         \
    snprintf(stp_n_msg_, sizeof stp_n_msg_, __VA_ARGS__);                      \
    stp_n_error(stp_n_cur_k, stp_n_msg_, STP_N_CUR_LOC);                       \
    goto out;                                                                  \
  } while (0)
#endif
#ifndef STAP_ERROR_NOLOC
#define STAP_ERROR_NOLOC(msg)                                                  \
  do { stp_n_error(stp_n_cur_k, (msg), -1); goto out; } while (0)
#endif
/* The function's declaration (generated code defines STAP_FN_LOC around each body), so the
 * message ends with ` near ...` as on the BPF side (docs/STAP-FORMATS.md §5). */
#define STP_N_CUR_LOC (STAP_FN_LOC)

/* --- diagnostics and control ----------------------------------------------------------- */
#ifdef STP_CTF  /* --ctf: the record carries the running probe's context (stp_n_log) */
static inline void _stp_log(const char *msg)
{
  if (stp_n_cur_k) stp_n_log(stp_n_cur_k, msg);
  else stp_n_emit_str(STP_REC_LOG, 0, msg);
}
#else
static inline void _stp_log(const char *msg) { stp_n_emit_str(STP_REC_LOG, 0, msg); }
#endif
static inline void _stp_warn(const char *msg) { stp_n_emit_str(STP_REC_WARN, 0, msg); }
static inline void _stp_exit(void) { stp_n_request_exit(); }
static inline void _stp_switch_file(void) { stp_n_emit_str(STP_REC_SWITCH_FILE, 0, 0); }
static inline void _stp_abort(void)
{
  stp_n_session->state = STP_SESSION_ERROR;
  stp_n_session->exit_requested = 1;
  stp_n_emit_str(STP_REC_EXIT, STP_EXIT_ABORT, 0);
}

/* --- context --------------------------------------------------------------------------- */
static inline void _stp_probe_point(char *buf, long n) { snprintf(buf, (size_t)n, "%s", stp_n_pp); }
static inline void _stp_probe_name(char *buf, long n) { snprintf(buf, (size_t)n, "%s", stp_n_pn); }
static inline void _stp_probe_func(char *buf, long n) { snprintf(buf, (size_t)n, "%s", stp_n_func); }
static inline void _stp_input_text(char *buf, long n) { snprintf(buf, (size_t)n, "%s", stp_n_input); }
static inline long _stp_target_pid(void) { return (long)stp_n_config.target_pid; }
static inline long _stp_runtime_pid(void) { return (long)getpid(); }
static inline long _stp_runtime_uid(void) { return (long)getuid(); }
static inline long _stp_user_mode(void) { return 0; }
static inline long _stp_is_return(void) { return 0; }
static inline long _stp_returnval(void) { return 0; }
static inline long _stp_user_pc(void) { return 0; }
static inline long _stp_kernel_pc(void) { return 0; }
static inline long _stp_gettimeofday_ns(void) { return (long)stp_n_clock(CLOCK_REALTIME); }
static inline long _stp_config_hz(void) { return stp_n_config.config_hz ? stp_n_config.config_hz : 250; }

struct _stp_tokenize { char buf[STP_MAXSTRINGLEN]; long pos; };
static inline struct _stp_tokenize *_stp_tokenize_state(void)
{
  static struct _stp_tokenize t;
  return &t;
}

/* --- strings: the same algorithms as the BPF side (common/stp_strings.h) ------------------- */
#define _stp_strlen(s) stp_s_strlen((s), STP_MAXSTRINGLEN)
#define _stp_substr(out, s, start, len) \
  ((void)stp_s_substr((out), (s), STP_MAXSTRINGLEN, (int64_t)(start), (int64_t)(len)))
#define _stp_strpos(h, n) stp_s_strpos((h), (n), STP_MAXSTRINGLEN)
#define _stp_str_replace(out, s, srch, rplc) \
  ((void)stp_s_str_replace((out), (s), (srch), (rplc), STP_MAXSTRINGLEN))
#define _stp_tokenize(out, input, delim)                                                    \
  ((void)stp_s_tokenize((out), _stp_tokenize_state()->buf,                                  \
                        (int64_t *)&_stp_tokenize_state()->pos, (input), (delim), STP_MAXSTRINGLEN))
#define _stp_strtol(s, base) stp_s_strtol((s), (int64_t)(base), STP_MAXSTRINGLEN)
#define _stp_flags_str(out, v, table) ((void)stp_s_flags_str((out), STP_MAXSTRINGLEN, (int64_t)(v), (table)))

/* _stp_text_str (RUNTIME-HOOKS.md): the BPF side's stp__text_str over ukstap's own memory. */
static inline void _stp_text_str(char *out, unsigned long in, long inlen, long outlen, int quoted,
                                 int user, int buffer)
{
  char tmp[STP_MAXSTRINGLEN];
  long n;
  (void)user;
  if (inlen < 0) inlen = 0;
  if (inlen > STP_MAXSTRINGLEN) inlen = STP_MAXSTRINGLEN;
  if (outlen <= 0 || outlen > STP_MAXSTRINGLEN) outlen = STP_MAXSTRINGLEN;
  if (!in) {
    n = -1;
  } else if (buffer) {
    n = inlen == 0 ? 0 : bpf_probe_read_kernel(tmp, (uint32_t)inlen, (const void *)in);
    if (n == 0) n = inlen;
  } else {
    n = bpf_probe_read_kernel_str(tmp, STP_MAXSTRINGLEN, (const void *)in);
    if (n > 0 && n - 1 < inlen) inlen = n - 1;
  }
  if (n < 0) {
    stp_fmt_long(out, STP_MAXSTRINGLEN, 0, (int64_t)in, 'x', STP_FLAG_ALT, 0, -1);
    return;
  }
  stp_text_escape(out, STP_MAXSTRINGLEN, (uint32_t)outlen, (const uint8_t *)tmp, (uint32_t)inlen,
                  quoted != 0, buffer != 0);
}

/* --- user backtraces and symbols -------------------------------------------------------- */
/* Native probes (begin, end, interval timers) run in ukstap itself: there is no user stack to
 * walk (print_ubacktrace prints `<no user backtrace at PP>`, ubacktrace() is "\n"). Addresses
 * given to print_ustack/usym* resolve against the target process, else against the process that
 * last had them mapped (pid 0 in the record: see loader/ustack_output.cpp). */
static inline void stp_n_stack_emit(int type, int flags, int kind, uint64_t token, const char *str,
                                    const uint64_t *pcs, uint16_t n)
{
  unsigned char buf[sizeof(struct stp_rec_hdr) + sizeof(struct stp_ustack) + STP_REC_STR_SIZE(4096)];
  struct stp_rec_hdr h;
  struct stp_ustack u;
  uint32_t len = sizeof u;
  memset(buf, 0, sizeof buf);
  memset(&u, 0, sizeof u);
  u.time_ns = bpf_ktime_get_ns();
  u.token = token;
  u.probe_id = STP_USTACK_NATIVE_PROBE;
  u.kind = (uint8_t)kind;
  u.nr = n;
  u.exact = n;
  u.stop = kind == STP_USTACK_NO_USER ? STP_STOP_NO_USER : STP_STOP_END;
  memcpy(buf + sizeof h, &u, sizeof u);
  if (n) {
    memcpy(buf + sizeof h + len, pcs, (size_t)n * 8);
    len += (uint32_t)n * 8;
  } else if (str) {
    uint32_t sl = (uint32_t)strnlen(str, 4096);
    memcpy(buf + sizeof h + len, &sl, 4);
    memcpy(buf + sizeof h + len + 4, str, sl);
    len += STP_REC_STR_SIZE(sl);
  }
  h.type = (uint16_t)type;
  h.id = (uint16_t)flags;
  h.len = len;
  memcpy(buf, &h, sizeof h);
  stp_n_emit(buf, (uint32_t)(sizeof h + len));
}
#define stp_n_ustack_emit(flags, kind, token, str, pcs, n) \
  stp_n_stack_emit(STP_REC_USTACK, (flags), (kind), (token), (str), (pcs), (n))
#define stp_n_token_str(buf, token) stp_token_str((buf), (token), STP_TOKEN_USER)
/* The token of a hex-list string: FNV-1a 64 over its bytes (common/stp_stack_abi.h). */
static inline uint64_t stp_n_str_token(const char *s, int kind, int flags)
{
  uint64_t h = STP_FNV_OFFSET;
  for (; *s; s++) h = stp_fnv_u64(h, (unsigned char)*s);
  return stp_stack_token(h, kind, flags);
}
static inline void _stp_ustack_print(int flags)
{
  stp_n_ustack_emit(flags, STP_USTACK_NO_USER, 0, stp_n_pp, 0, 0);
}
static inline void _stp_ustack_sprint(char *buf, long n, int flags) { (void)n; (void)flags; buf[0] = '\0'; }
static inline void _stp_ustack_hex(char *buf, long n, long skip, long max)
{
  (void)skip; (void)max;
  snprintf(buf, (size_t)n, "\n");
}
/* ubacktrace() as a key (passes/backtrace_tokens.h): no user stack natively, "\n" as ubacktrace(). */
#define _stp_ustack_hex_token(buf) _stp_ustack_hex((buf), STP_MAXSTRINGLEN, 0, MAXBACKTRACE)
static inline void _stp_ustack_print_str(const char *stk, int flags)
{
  stp_n_ustack_emit(flags, STP_USTACK_HEXSTR, 0, stk, 0, 0);
}
static inline void _stp_ustack_sprint_str(char *buf, long n, const char *stk, int flags)
{
  uint64_t token = stp_n_str_token(stk, STP_USTACK_HEXSTR, flags);
  (void)n;
  stp_n_ustack_emit(flags, STP_USTACK_HEXSTR, token, stk, 0, 0);
  stp_n_token_str(buf, token);
}
static inline void _stp_usym_sprint(char *buf, long n, long addr, int flags)
{
  uint64_t a = (uint64_t)addr;
  uint64_t token = stp_value_token(a, STP_USTACK_SYM, flags);
  (void)n;
  stp_n_ustack_emit(flags, STP_USTACK_SYM, token, 0, &a, 1);
  stp_n_token_str(buf, token);
}

/* --- kernel backtraces and symbols (context-unwind.stp) --------------------------------- */
/* Native probes have no kernel stack: print_backtrace prints `<no kernel backtrace at PP>`,
 * backtrace() is "\n". Addresses given to print_stack/symname/symdata resolve from
 * /proc/kallsyms as in kernel probes. */
#define stp_n_kstack_emit(flags, kind, token, str, pcs, n) \
  stp_n_stack_emit(STP_REC_KSTACK, (flags), (kind), (token), (str), (pcs), (n))
static inline void _stp_kstack_print(int flags)
{
  stp_n_kstack_emit(flags, STP_USTACK_NO_USER, 0, stp_n_pp, 0, 0);
}
static inline void _stp_kstack_sprint(char *buf, long n, int flags) { (void)n; (void)flags; buf[0] = '\0'; }
static inline void _stp_kstack_hex(char *buf, long n, long skip, long max)
{
  (void)skip; (void)max;
  snprintf(buf, (size_t)n, "\n");
}
static inline void _stp_kstack_print_str(const char *stk, int flags)
{
  stp_n_kstack_emit(flags, STP_USTACK_HEXSTR, 0, stk, 0, 0);
}
static inline void _stp_kstack_sprint_str(char *buf, long n, const char *stk, int flags)
{
  uint64_t token = stp_n_str_token(stk, STP_USTACK_HEXSTR, flags);
  (void)n;
  stp_n_kstack_emit(flags, STP_USTACK_HEXSTR, token, stk, 0, 0);
  stp_token_str(buf, token, STP_TOKEN_KERNEL);
}
static inline void _stp_ksym_sprint(char *buf, long n, long addr, int flags)
{
  uint64_t a = (uint64_t)addr;
  uint64_t token = stp_value_token(a, STP_USTACK_SYM, flags);
  (void)n;
  stp_n_kstack_emit(flags, STP_USTACK_SYM, token, 0, &a, 1);
  stp_token_str(buf, token, STP_TOKEN_KERNEL);
}

/* --- stack ids (stackid.stp) ------------------------------------------------------------ */
/* ustack_id()/kstack_id() need a probe with a stack: 0 here (printed as an unknown id). Ids
 * made by kernel probes print from the maps, read by user space (bpf/stp_bpf_stackid.h). */
static inline long _stp_ustack_id(void) { return 0; }
static inline long _stp_kstack_id(void) { return 0; }
static inline void stp_n_stackid(int type, char letter, char *buf, long id, int flags)
{
  uint64_t a = (uint64_t)id, token = 0;
  if (buf)
    token = stp_value_token(a, STP_USTACK_ID, flags);
  stp_n_stack_emit(type, flags, STP_USTACK_ID, token, 0, &a, 1);
  if (buf) stp_token_str(buf, token, letter);
}
#define _stp_ustack_id_print(id, flags) stp_n_stackid(STP_REC_USTACK, STP_TOKEN_USER, 0, (id), (flags))
#define _stp_ustack_id_sprint(buf, n, id, flags) \
  stp_n_stackid(STP_REC_USTACK, STP_TOKEN_USER, (buf), (id), (flags))
#define _stp_kstack_id_print(id, flags) stp_n_stackid(STP_REC_KSTACK, STP_TOKEN_KERNEL, 0, (id), (flags))
#define _stp_kstack_id_sprint(buf, n, id, flags) \
  stp_n_stackid(STP_REC_KSTACK, STP_TOKEN_KERNEL, (buf), (id), (flags))

#endif /* STP_NATIVE_TAPSET_H */
