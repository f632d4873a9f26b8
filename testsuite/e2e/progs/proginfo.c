/* Prints "verified_insns xlated_insns" of the newest loaded BPF program named argv[1] (the
 * kernel's own count of instructions the verifier processed: bpf_prog_info.verified_insns, which
 * the installed bpftool may not show); with more arguments, only among the programs of those ids
 * (the ones a process holds: every ukstap names its first probe's program alike, and other runs
 * load theirs at the same time). Used by testsuite/e2e/run_functions.sh. */
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  __u32 id = 0, best = 0, vi = 0, xl = 0;
  if (argc < 2)
    return 2;
  while (bpf_prog_get_next_id(id, &id) == 0) {
    struct bpf_prog_info info;
    __u32 len = sizeof info;
    int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0)
      continue;
    memset(&info, 0, sizeof info);
    int listed = argc == 2;
    for (int i = 2; i < argc; i++)
      listed |= strtoul(argv[i], NULL, 10) == id;
    if (listed && bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && strcmp(info.name, argv[1]) == 0 &&
        id > best) {
      best = id;
      vi = info.verified_insns;
      xl = info.xlated_prog_len / 8;
    }
    close(fd);
  }
  if (!best)
    return 1;
  printf("%u %u\n", vi, xl);
  return 0;
}
