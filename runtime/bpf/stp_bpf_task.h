/* ukstap BPF runtime: reading fields of a task_struct given by address, for the tapsets'
 * task functions (tapsets/task.stp, rlimit.stp, task_ancestry.stp; RUNTIME-HOOKS.md).
 *
 * STP_TASK_READ(dst, addr, field): CO-RE read of ((struct task_struct *)addr)->field into dst;
 * on a fault (or a NULL task) it raises SystemTap's error for a failed @task(...) dereference,
 * "read fault [man error::fault] at 0xADDR", and leaves the function body (STAP_ERROR). */
#ifndef STP_BPF_TASK_H
#define STP_BPF_TASK_H

#define STP_TASK_READ(dst, addr, field)                                                  \
  do {                                                                                   \
    struct task_struct *stp__t = (struct task_struct *)(unsigned long)(addr);           \
    if (!stp__t || bpf_core_read(&(dst), sizeof(dst), &stp__t->field) < 0)               \
      STAP_ERROR("read fault [man error::fault] at 0x%lx", (unsigned long)(addr));     \
  } while (0)

#endif /* STP_BPF_TASK_H */
