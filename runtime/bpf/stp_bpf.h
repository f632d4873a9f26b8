/* ukstap BPF runtime umbrella. Include order matters: base (context, errors) before the rest.
 *
 * Build (pass 4):  clang -target bpf -mcpu=v3 -O2 -g -D__UKSTAP_BPF__ -D__TARGET_ARCH_x86
 *                  -I<runtime> -I<dir with vmlinux.h> -c module.c -o module.bpf.o
 *   vmlinux.h:     bpftool btf dump file /sys/kernel/btf/vmlinux format c > <dir>/vmlinux.h
 *   -mcpu=v3:      atomic xchg/cmpxchg/fetch-add (context busy flag, error counting), 32-bit
 *                  jumps; clang 14's default (v1) cannot express them.
 */
#ifndef STP_BPF_H
#define STP_BPF_H

#include "bpf/stp_bpf_base.h"
#include "bpf/stp_bpf_strings.h"
#include "bpf/stp_bpf_output.h"
#include "bpf/stp_bpf_maps.h"
#include "bpf/stp_bpf_hooks.h"   /* before probes: the syscall record reads the task's registers */
#include "bpf/stp_bpf_probes.h"
#include "bpf/stp_bpf_syscall_shared.h"  /* syscall probes sharing one program */
#include "bpf/stp_bpf_ktypes.h"
#include "bpf/stp_bpf_process.h"  /* the process family: filters, task-finder events */
#include "bpf/stp_bpf_netfilter.h"  /* the netfilter family: verdict, $skb/$in/$out */
#include "bpf/stp_bpf_kfunc.h"  /* kernel.function: fentry/fexit or kprobe/kretprobe */
/* The user-stack walk, by job: its data (mirror, kernel VMA, tables, row cache), a frame's row,
 * the walk, then the records and hooks. */
#include "bpf/stp_bpf_vma_mirror.h"
#include "bpf/stp_bpf_kvma_cache.h"
#include "bpf/stp_bpf_cfi_tables.h"
#include "bpf/stp_bpf_row_cache.h"
#include "bpf/stp_bpf_frame_row.h"
#include "bpf/stp_bpf_uwalk.h"
#include "bpf/stp_bpf_usnap.h"   /* a stack copy for walks waiting for a table */
#include "bpf/stp_bpf_ustack_records.h"
#include "bpf/stp_bpf_kstack.h"
#include "bpf/stp_bpf_stackid.h"
#include "bpf/stp_bpf_task.h"     /* STP_TASK_READ for the task functions */
#include "bpf/stp_bpf_regex.h"   /* =~ in kernel-side probes: a DFA from pass 3 */
#include "bpf/stp_bpf_kread.h"   /* kernel reads for native probes (BPF_PROG_TEST_RUN) */

/* Generated functions (stp_fn_*) take the program's context pointer after c and g: the kernel
 * stack helper needs it (bpf/stp_bpf_kstack.h). Native functions have none. */
#define STP_FN_CTX_PARAM , void *ctx
#define STP_FN_CTX_ARG , ctx
/* A function that pass 3 shares between probes (codegen/shared_functions.h): one subprogram. */
#define STP_FN_SHARED static __noinline

/* Sorted iteration runs natively only (runtime/README.md), but frame layouts are shared by both
 * builds, so the BPF side needs the type's name and some size. */
struct stp_iter { uint64_t unused[8]; };

#endif /* STP_BPF_H */
