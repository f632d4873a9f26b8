/* bench/uread_cost.sh: what one user-memory read and the task helpers cost a BPF program on the
 * running kernel, by destination (docs/DESIGN.md "What a walk costs"). Each program is attached
 * alone to the getppid() tracepoint, filtered to the loader's own pid. The reads copy `len`
 * bytes from the user stack pointer; CONFIG_HARDENED_USERCOPY checks the destination on every
 * call (mm/usercopy.c), and what it checks depends on where the destination lives. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

const volatile __u32 target = 0;
const volatile __u32 len = 632;

#define MAP(name, typ, n, sz, flags)                                                      \
  struct {                                                                                \
    __uint(type, typ);                                                                    \
    __uint(max_entries, n);                                                               \
    __uint(map_flags, flags);                                                             \
    __type(key, __u32);                                                                   \
    __type(value, char[sz]);                                                              \
  } name SEC(".maps")

MAP(m_mmap, BPF_MAP_TYPE_ARRAY, 1, 1024, BPF_F_MMAPABLE);  /* vmalloc'ed (mmapable) */
MAP(m_big, BPF_MAP_TYPE_ARRAY, 128, 32768, 0);             /* 4 MiB: vmalloc'ed, as stp_ctx */
MAP(m_slab, BPF_MAP_TYPE_ARRAY, 1, 1024, 0);               /* kmalloc'ed: a slab object */
MAP(m_pages, BPF_MAP_TYPE_ARRAY, 1, 16384, 0);             /* kmalloc'ed > 8 KiB: pages */
MAP(m_pcpu, BPF_MAP_TYPE_PERCPU_ARRAY, 1, 1024, 0);        /* a per-CPU chunk */

static __always_inline int mine(void)
{
  return (__u32)(bpf_get_current_pid_tgid() >> 32) == target;
}

static __always_inline __u64 user_sp(void)
{
  struct task_struct *t = bpf_get_current_task_btf();
  struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);
  return r->sp;
}

#define TP SEC("tracepoint/syscalls/sys_enter_getppid")

TP int empty(void *ctx) { return 0; }
TP int pid_filter(void *ctx) { return mine(); }
/* the filter and bpf_get_current_task_btf */
TP int task_btf(void *ctx)
{
  struct task_struct *t;
  if (!mine())
    return 0;
  t = bpf_get_current_task_btf();
  return t->tgid == 1;
}
/* ... and bpf_task_pt_regs: the read variants' base */
TP int regs_helper(void *ctx)
{
  if (!mine())
    return 0;
  return user_sp() == 1;
}
/* ... the registers at their offset from the task's stack instead (16 KiB stacks, no FRED
 * padding: this kernel's figure; the runtime learns the offset from the helper) */
TP int regs_cast(void *ctx)
{
  struct task_struct *t;
  struct pt_regs *r;
  if (!mine())
    return 0;
  t = bpf_get_current_task_btf();
  r = bpf_rdonly_cast((char *)t->stack + 16384 - sizeof(struct pt_regs),
                      bpf_core_type_id_kernel(struct pt_regs));
  return r->sp == 1;
}

#define READER(name, map, idx)                                                            \
  TP int name(void *ctx)                                                                  \
  {                                                                                       \
    __u32 k = idx, n = len;                                                               \
    __u64 sp;                                                                             \
    char *b;                                                                              \
    if (!mine())                                                                          \
      return 0;                                                                           \
    b = bpf_map_lookup_elem(&map, &k);                                                    \
    if (!b)                                                                               \
      return 0;                                                                           \
    sp = user_sp();                                                                       \
    asm volatile("%0 &= 1023" : "+r"(n));                                                 \
    if (n == 0)                                                                           \
      n = 1;                                                                              \
    bpf_probe_read_user(b, n, (void *)sp);                                                \
    return b[0] == 42;                                                                    \
  }
READER(read_mmap, m_mmap, 0)
READER(read_vmalloc, m_big, 5)
READER(read_slab, m_slab, 0)
READER(read_pages, m_pages, 0)
READER(read_percpu, m_pcpu, 0)

/* Into the program's stack (at most 448 bytes here: the BPF stack is 512). Since 6.13 a
 * tracepoint program with 64 bytes of stack or more runs on a per-CPU private stack, not the
 * task's kernel stack, so usercopy's early "on the stack" exit does not apply. */
TP int read_stack(void *ctx)
{
  char buf[448];
  __u32 n = len;
  __u64 sp;
  if (!mine())
    return 0;
  sp = user_sp();
  if (n > 448)
    n = 448;
  if (n == 0)
    n = 1;
  bpf_probe_read_user(buf, n, (void *)sp);
  return buf[0] == 42 && buf[n & 255] == 1;
}

char LICENSE[] SEC("license") = "GPL";
