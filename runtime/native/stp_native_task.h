/* ukstap runtime, native side: STP_TASK_READ (bpf/stp_bpf_task.h) for the bodies of the task
 * functions compiled into module.so. Native probes (begin, end, timers) run in ukstap, where
 * kernel memory is out of reach: reading a task raises an error instead of inventing a value. */
#ifndef STP_NATIVE_TASK_H
#define STP_NATIVE_TASK_H

#define STP_TASK_READ(dst, addr, field)                                                  \
  do {                                                                                   \
    (void)(dst);                                                                         \
    STAP_ERROR("cannot read task 0x%lx in a user-space probe (begin, end, timer)",     \
               (unsigned long)(addr));                                                   \
  } while (0)

#endif /* STP_NATIVE_TASK_H */
