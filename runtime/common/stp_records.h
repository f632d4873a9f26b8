/* ukstap runtime: what crosses the kernel/user boundary.
 *
 * Plain C structs (BPF C, native C, C++). The BPF module writes records into the ring buffer
 * "stp_events"; the native module hands the same bytes to the loader by a direct call. So the
 * ukstap binary has ONE decoder. Everything is 8-byte aligned and little-endian (host order).
 *
 * Record = struct stp_rec_hdr + payload; `len` counts the payload bytes including its padding,
 * so the next record (native batches) starts at hdr + 8 + len.
 *
 * Payload encodings:
 *   long    8 bytes (int64_t)
 *   string  uint32_t n, n bytes (no NUL), zero padding so the element ends 8-aligned:
 *           element size = STP_REC_STR_SIZE(n)
 *   PRINTF  id = format id; the arguments in format order (long or string per the conversion;
 *           %m/%M arguments are sent as strings holding the raw bytes)
 *   LOG     id = 0; one string (the text without the added "\n")
 *   WARN    id = 0; one string (the message without "WARNING: ")
 *   ERROR   id = location id (0xffff: none, i.e. error()); one string (the message)
 *   EXIT    id = STP_EXIT_NORMAL or STP_EXIT_ABORT; no payload
 *   HIST    id = stats id (order of STP_DEFINE_STATS in the generated file); the aggregated
 *           stats value struct of that statistic, verbatim (struct stp_stat_base + buckets)
 *   DROPS   id = 0; one long: records lost so far (sent by user space to itself, or by BPF)
 *   USTACK  id = symbol flags (_STP_SYM_*); struct stp_ustack, then by kind: nr pcs (uint64_t),
 *           or one string (a ubacktrace() hex list for print_ustack/sprint_ustack, or the
 *           probe point when kind is NO_USER and probe_id is STP_USTACK_NATIVE_PROBE). With a token,
 *           nothing is printed: the record defines what the string token "\x1eU<16 hex>\x1f"
 *           left in a script string stands for (deferred symbolization, RUNTIME-HOOKS.md).
 *           Kind ID: one long, a stack id of ustack_id(): the pcs are in the BPF map
 *           "stp_ustacks" (struct stp_stack_ent), read by user space when the record is printed.
 *   KSTACK  the same layout for kernel stacks and symbols (context-unwind.stp): pcs from
 *           bpf_get_stack(), symbolized from /proc/kallsyms; kind NO_USER means "no kernel
 *           stack" (a user-mode sample, a uprobe, a native probe); kind ID reads "stp_kstacks".
 *           Its tokens are "\x1eK<16 hex>\x1f".
 */
#ifndef STP_COMMON_RECORDS_H
#define STP_COMMON_RECORDS_H

#include "stp_limits.h"
#include "stp_stack_abi.h"  /* stop reasons and deferred tokens of USTACK/KSTACK records */

enum stp_rec_type {
  STP_REC_PRINTF = 1,
  STP_REC_LOG = 2,
  STP_REC_WARN = 3,
  STP_REC_ERROR = 4,
  STP_REC_EXIT = 5,
  STP_REC_HIST = 6,
  STP_REC_DROPS = 7,
  STP_REC_USTACK = 8,
  STP_REC_KSTACK = 9,
  STP_REC_WAKE = 10,   /* no payload: wakes the reader so it drains the VMA side-band now */
  STP_REC_USNAP = 11,  /* a copy of the top of a user stack for the next USTACK record of its
                          thread (common/stp_usnap.h) */
  STP_REC_SWITCH_FILE = 12,  /* no payload: switch_file(): -o output moves to the next file */
};

/* Symbol flags of the backtrace/symbol hooks (RUNTIME-HOOKS.md), the id of a USTACK record. */
#define _STP_SYM_FULL 1        /* " 0xADDR : sym+0xOFF/0xSIZE [path]" per frame */
#define _STP_SYM_BRIEF 2       /* "sym+0xOFF" */
#define _STP_SYM_SIMPLE 4      /* "sym+0xOFF [basename]" (sprint_ubacktrace) */
#define _STP_SYM_LINENUMBER 8  /* + " at FILE:LINE" */
#define _STP_SYM_SYMBOL 16     /* usymname */
#define _STP_SYM_DATA 32       /* usymdata */
#define _STP_SYM_MODULE 64     /* umodname */
#define _STP_SYM_LIST 128      /* print_syms/sprint_syms: " %s : %s\n" (token, symdata) per address */
#define _STP_SYM_FILE 256      /* usymfile: the source file; with _STP_SYM_LINE usymfileline FILE:LINE */
#define _STP_SYM_LINE 512      /* usymline: the source line (decimal); 0x… when unknown */

/* A user stack or user address to symbolize in user space (only pcs leave the kernel). */
enum stp_ustack_kind {
  STP_USTACK_PCS = 0,      /* nr return addresses, innermost first */
  STP_USTACK_HEXSTR = 1,   /* a string of "0x... " addresses (print_ustack/sprint_ustack) */
  STP_USTACK_SYM = 2,      /* one address (usymname/usymdata/umodname): nr = 1 */
  STP_USTACK_NO_USER = 3,  /* no user registers (kernel thread, begin/end probes) */
  STP_USTACK_ID = 4,       /* one stack id (ustack_id()/kstack_id()): the map entry has the pcs */
};
#define STP_USTACK_NATIVE_PROBE 0xffffu  /* probe_id of native probes: the pp string follows */

struct stp_ustack {
  uint32_t pid;        /* tgid whose mappings resolve the addresses (0: any, native probes) */
  uint32_t tid;
  uint64_t time_ns;    /* CLOCK_MONOTONIC (bpf_ktime_get_ns) at the event: which mappings */
  uint64_t token;      /* 0: print now; else the token of a deferred string */
  uint16_t probe_id;   /* for `<no user backtrace at PP>` */
  uint16_t nr;         /* pcs that follow (kind PCS/SYM) */
  uint16_t exact;      /* frames [0, exact) are exact; the rest print " (inexact)" */
  uint8_t kind;        /* enum stp_ustack_kind */
  uint8_t stop;        /* enum stp_unwind_stop (stp_stack_abi.h): why the walk ended */
};

/* A stack stored once under its id (ustack_id()/kstack_id(), bpf/stp_bpf_stackid.h): the value
 * of the BPF hash maps "stp_ustacks" / "stp_kstacks" (key: the uint64_t id) is a struct
 * stp_ustack followed by MAXBACKTRACE pcs (user space takes the value size from the map). Its
 * kind is PCS or NO_USER (no stack at probe_id), time_ns the first event's (whose mappings),
 * token the id itself. */

struct stp_rec_hdr {
  uint16_t type;  /* enum stp_rec_type */
  uint16_t id;
  uint32_t len;   /* payload bytes after this header, a multiple of 8 */
};

/* `ukstap --ctf=DIR` (compiled with -DSTP_CTF; loader/ctf_output.h): records of probes carry
 * the event's context between the header and the payload, and their type has this bit. Text
 * runs are compiled without it: their records and their cost are unchanged. */
#define STP_REC_CTX_FLAG 0x8000u
struct stp_rec_ctx {
  uint64_t time_ns;   /* CLOCK_MONOTONIC (bpf_ktime_get_ns) when the probe was hit */
  uint32_t cpu;       /* | STP_REC_CTX_SLOT1 for a record of the context's slot 1 */
  uint32_t probe_id;  /* ProbeInfo id: the event's name is its probe point */
  uint32_t pid;       /* tgid */
  uint32_t tid;
  char comm[16];
};
/* cpu's top bit: the record comes from context slot 1 (perf_event programs, which run in NMI
 * and may interrupt a slot-0 hit between two of its records on the same CPU): the loader keeps
 * each (CPU, slot)'s event apart. CPU numbers stay far below 2^31. */
#define STP_REC_CTX_SLOT1 0x80000000u
/* Where a record's payload starts in the scratch buffer that builds it. */
#ifdef STP_CTF
#define STP_REC_BODY (sizeof(struct stp_rec_hdr) + sizeof(struct stp_rec_ctx))
#else
#define STP_REC_BODY sizeof(struct stp_rec_hdr)
#endif

#define STP_REC_ALIGN(n) (((n) + 7u) & ~7u)
#define STP_REC_STR_SIZE(n) STP_REC_ALIGN(4u + (uint32_t)(n))
#define STP_LOC_NONE 0xffff
#define STP_EXIT_NORMAL 0
#define STP_EXIT_ABORT 1

/* Session states (stp_session.state). Kernel probes run only while RUNNING. */
enum stp_session_state {
  STP_SESSION_STARTING = 0,  /* begin probes running (set by the loader before attach) */
  STP_SESSION_RUNNING = 1,   /* set by the loader after begin probes */
  STP_SESSION_ERROR = 2,     /* errors > MAXERRORS, or abort(): end probes are skipped */
  STP_SESSION_STOPPING = 3,  /* exit() requested: end probes run */
};

/* Shared mutable session state: BPF array map "stp_session" (1 entry, BPF_F_MMAPABLE). The
 * loader mmaps it; native probes use the same mapping, so both sides see one copy. Counters are
 * updated with atomic adds. */
struct stp_session {
  uint32_t state;            /* enum stp_session_state */
  uint32_t exit_requested;   /* exit() or abort() was called */
  uint64_t errors;           /* uncaught runtime errors */
  uint64_t skipped;          /* probes skipped: context busy (re-entry/preemption), no slot */
  uint64_t drops;            /* records the ring buffer had no room for */
  uint64_t seq;              /* last insertion number given to an array element */
  uint64_t ustack_stops[16]; /* user-stack walks by enum stp_unwind_stop */
  uint64_t ustack_fp_frames; /* frames found by the frame-pointer fallback (no unwind table) */
  uint64_t stacks_lost;      /* ustack_id()/kstack_id() stacks not stored: the map was full */
  uint64_t mirror_wake_ns;    /* last STP_REC_WAKE (bpf_ktime_get_ns): rate limit */
  /* [lo, hi) of __traceiter_sys_enter and __traceiter_sys_exit (0 0: unknown): the frame the
   * kernel adds when 2+ programs share a raw syscall tracepoint (bpf/stp_bpf_kstack.h). */
  uint64_t syscall_glue[4];
  /* [lo, hi) of bpf_trace_run2, __bpf_trace_sys_enter and __bpf_trace_sys_exit: the frames
   * between a dispatched syscall probe and syscall_trace_enter (or the exit path). How many of
   * them a stack shows depends on the kernel's build (6.18: both, Debian 12's 6.1: one), so
   * the first walk counts them: syscall_kskip = that count + 1 (0: not counted yet). */
  uint64_t syscall_glue_fixed[6];
  uint32_t syscall_kskip;
  uint32_t syscall_pad;
  /* --ctf/--lttng: trace events lost with the records dropped (an event with a stack is 2+
   * records; bpf/stp_bpf_output.h): the count a trace's discarded events carry. */
  uint64_t drop_events;
  /* user-stack records not written (the ring was full, or --ctf left out a stack whose event's
   * first record was lost) whose walk waited for a table: not "cut short" (loader/exit_report) */
  uint64_t ustack_unwritten_waits;
};

/* Read-only configuration filled by the loader before load: the BPF global
 * `const volatile struct stp_config stp_config` in .rodata (look up its offset in the .rodata
 * DATASEC of the object's BTF and write it into bpf_map__initial_value()). Native modules get
 * a pointer to the same struct. */
#define STP_TABLES_OFF 0          /* no tables (UKSTAP_NO_UNWIND_TABLES=1, no user stacks) */
#define STP_TABLES_ALL 1          /* every process is tracked (no -c/-x) */
#define STP_TABLES_TARGET_TREE 2  /* the -c/-x target and its descendants are tracked */
struct stp_config {
  uint32_t nr_cpus;             /* libbpf_num_possible_cpus(): stats aggregation bound */
  uint32_t config_hz;           /* CONFIG_HZ if the loader knows it, else 0 (kconfig is used) */
  int64_t target_pid;           /* -x / -c pid, else 0 */
  int64_t runtime_pid;          /* the ukstap process */
  int64_t runtime_uid;
  int64_t realtime_offset_ns;   /* CLOCK_REALTIME - CLOCK_BOOTTIME, measured at load */
  uint32_t vdso_file_id;        /* the VMA tracker's file id of the [vdso] (unwind tables) */
  uint32_t tables_loading;      /* unwind tables are on and every file a tracked process maps
                                   gets an entry (empty when it has no table), so a file
                                   without one is waiting for its table
                                   (bpf/stp_bpf_frame_row.h): STP_TABLES_* */
  uint64_t reserved[3];
};

/* Probe strings for pp()/pn()/probefunc(): `const volatile struct stp_probe_strings
 * stp_probe_table[STP_NPROBES]` in .rodata, indexed by probe id, filled by the loader from
 * ModuleInfo::probes exactly like stp_config (texts longer than MAXSTRINGLEN-1 are cut). */
struct stp_probe_strings {
  char pp[STP_MAXSTRINGLEN];
  char pn[STP_MAXSTRINGLEN];
  char func[STP_MAXSTRINGLEN];
};

#endif /* STP_COMMON_RECORDS_H */
