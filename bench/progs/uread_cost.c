/* bench/uread_cost.sh's loader: uread_cost PROGRAM LEN CALLS loads one program of
 * uread_cost.bpf.c, attaches it, makes CALLS getppid() calls and prints
 * "PROGRAM LEN ns_per_run runs" from the kernel's BPF run-time statistics. */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
typedef __u32 u32;
#include "uread_cost.skel.h"

int main(int argc, char **argv)
{
  struct uread_cost_bpf *s;
  struct bpf_program *p, *want = 0;
  struct bpf_prog_info info;
  unsigned info_len = sizeof info;
  long calls;
  int stats;
  if (argc != 4) {
    fprintf(stderr, "usage: uread_cost PROGRAM LEN CALLS\n");
    return 2;
  }
  calls = atol(argv[3]);
  s = uread_cost_bpf__open();
  if (!s)
    return 1;
  s->rodata->target = getpid();
  s->rodata->len = atoi(argv[2]);
  bpf_object__for_each_program(p, s->obj) {
    int me = !strcmp(bpf_program__name(p), argv[1]);
    bpf_program__set_autoload(p, me);
    if (me)
      want = p;
  }
  if (!want || uread_cost_bpf__load(s) || !bpf_program__attach(want)) {
    fprintf(stderr, "uread_cost: cannot load or attach %s\n", argv[1]);
    return 1;
  }
  stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (stats < 0) {
    fprintf(stderr, "uread_cost: cannot enable BPF run-time statistics\n");
    return 1;
  }
  for (long i = 0; i < calls; i++)
    syscall(SYS_getppid);
  memset(&info, 0, sizeof info);
  if (bpf_obj_get_info_by_fd(bpf_program__fd(want), &info, &info_len) || !info.run_cnt)
    return 1;
  printf("%s %s %.1f %llu\n", argv[1], argv[2], (double)info.run_time_ns / info.run_cnt,
         (unsigned long long)info.run_cnt);
  close(stats);
  uread_cost_bpf__destroy(s);
  return 0;
}
