#!/bin/bash
# `delete a[k, *]` and `[k, *] in a` in a kernel (BPF) probe: the syscall-by-pid examples delete
# a process's entries when it exits (SystemTap's langref: a '*' matches any value of its index).
# Truth: the entries the probe itself put in, the ones that must stay and the ones that must go.
# Root only; under CI=true not being root fails.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
cd "$T_TMP" || exit 1
printf '#include <sys/syscall.h>\n#include <unistd.h>\nint main(void) { syscall(SYS_getpid); return 0; }\n' > one_getpid.c
t_build "one_getpid" gcc -o one_getpid one_getpid.c || { t_done; exit; }
t "kernel probe: delete a[pid(), *] removes that pid's entries only; [pid(), *] in a before and after" \
  0 $'before=1 after=0 other=1\nleft 3\nsleft x 7\n' '' -- \
  "$UKSTAP" -c ./one_getpid -e 'global a, s
probe kernel.trace("syscalls:sys_enter_getpid") {
  if (pid() != target()) next
  a[pid(), 1] = 1; a[pid(), 2] = 2; a[pid() + 1, 1] = 3
  s[pid(), "x"] <<< 5; s[pid(), "y"] <<< 6; s[pid() + 1, "x"] <<< 7
  before = [pid(), *] in a
  delete a[pid(), *]
  delete s[pid(), *]
  printf("before=%d after=%d other=%d\n", before, [pid(), *] in a, [*, 1] in a)
}
probe end {
  foreach ([p, k] in a) printf("left %d\n", a[p, k])
  foreach ([q, j] in s) printf("sleft %s %d\n", j, @sum(s[q, j]))
}'
t_done
