/* ukstap runtime, native side: what the tapsets' embedded C (%{ %}) calls, so the same bodies
 * compile into module.so (tapsets/RUNTIME-HOOKS.md). BPF helpers are emulated for ukstap's own
 * process: in user space the "current task" is ukstap (as SystemTap's begin probes run in
 * stapio). Kernel-only constructs (BPF_CORE_READ, bpf_get_current_task, pt_regs) are not
 * provided: tapset code using them must be under #ifdef __UKSTAP_BPF__. */
#ifndef STP_NATIVE_TAPSET_H
#define STP_NATIVE_TAPSET_H

#include <sys/prctl.h>

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
/* Reads "from kernel or user memory": in module.so both are ukstap's own memory. */
static inline long bpf_probe_read_kernel(void *dst, uint32_t size, const void *src)
{
  if (!src) { memset(dst, 0, size); return -14; }
  memcpy(dst, src, size);
  return 0;
}
#define bpf_probe_read_user bpf_probe_read_kernel
#define bpf_probe_read bpf_probe_read_kernel
static inline long bpf_probe_read_kernel_str(void *dst, uint32_t size, const void *src)
{
  size_t n;
  if (!size) return -22;
  if (!src) { ((char *)dst)[0] = 0; return -14; }
  n = strnlen((const char *)src, size - 1);
  memcpy(dst, src, n);
  ((char *)dst)[n] = 0;
  return (long)n + 1;
}
#define bpf_probe_read_user_str bpf_probe_read_kernel_str
#define bpf_probe_read_str bpf_probe_read_kernel_str

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
#ifdef STP_CUR_LOC
#define STP_N_CUR_LOC STP_CUR_LOC
#else
#define STP_N_CUR_LOC (-1)
#endif

/* --- diagnostics and control ----------------------------------------------------------- */
static inline void _stp_log(const char *msg) { stp_n_emit_str(STP_REC_LOG, 0, msg); }
static inline void _stp_warn(const char *msg) { stp_n_emit_str(STP_REC_WARN, 0, msg); }
static inline void _stp_exit(void) { stp_n_request_exit(); }
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
static inline long _stp_target_pid(void) { return (long)stp_n_config.target_pid; }
static inline long _stp_runtime_pid(void) { return (long)getpid(); }
static inline long _stp_runtime_uid(void) { return (long)getuid(); }
static inline long _stp_user_mode(void) { return 0; }
static inline long _stp_is_return(void) { return 0; }
static inline long _stp_returnval(void) { return 0; }
static inline long _stp_user_pc(void) { return 0; }
static inline long _stp_gettimeofday_ns(void) { return (long)stp_n_clock(CLOCK_REALTIME); }
static inline long _stp_config_hz(void) { return stp_n_config.config_hz ? stp_n_config.config_hz : 250; }

struct _stp_tokenize { char buf[STP_MAXSTRINGLEN]; long pos; };
static inline struct _stp_tokenize *_stp_tokenize_state(void)
{
  static struct _stp_tokenize t;
  return &t;
}

#endif /* STP_NATIVE_TAPSET_H */
