#!/bin/bash
# Alias suffixes (SystemTap's langref, "Alias suffixes"): a probe point whose leading components
# name an alias gets the rest appended to each of the alias's points, and the alias's prologue
# runs. Truths: timer.ms(N) fires (the suffix made a valid point of `timer`), and the return
# value of getpid seen through `grp.return` (syscall.getpid.return) equals the pid the traced
# python process prints itself. A suffix that makes no valid point is "probe point mismatch".
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { # vm.pagefault.return would be vm.pagefault's points + .return; SystemTap's is a kprobe on a
# function's return, which no tracepoint replaces: one error naming the point and why.
t alias_suffix_unavailable_point 1 '' \
  '~probe point vm.pagefault.return is not available: .*no tracepoint marks the end of a page fault' \
  -- "$UKSTAP" -p2 -e 'probe vm.pagefault.return { println(pp()) }'
t_done; exit; }

t alias_suffix_timer 0 $'alias t\n' '' -- \
  "$UKSTAP" -e 'probe t = timer { tag = "alias t" } probe t.ms(10) { println(tag); exit() }'

# The traced process prints its own pid last; every line the probe prints must carry that pid.
check_getpid() {
  "$UKSTAP" -e 'probe grp = syscall.{close,getpid} { k = "grp" }
probe grp.return { if (pid() == target() && name == "getpid") printf("%s %s %d\n", k, name, retval) }' \
    -c "python3 -c 'import os; print(\"self\", os.getpid())'" > "$T_TMP/gp" || return 1
  local self; self=$(awk '$1 == "self" { print $2 }' "$T_TMP/gp")
  [ -n "$self" ] && grep -q '^grp getpid ' "$T_TMP/gp" &&
    ! grep '^grp ' "$T_TMP/gp" | grep -vqx "grp getpid $self" && echo ok
}
t alias_suffix_syscall_return 0 $'ok\n' '' -- check_getpid

t alias_suffix_mismatch 1 '' '~probe point mismatch' -- \
  "$UKSTAP" -e 'probe t = begin { } probe t.foo { exit() }'
# vm.pagefault.return would be vm.pagefault's points + .return; SystemTap's is a kprobe on a
# function's return, which no tracepoint replaces: one error naming the point and why.
t alias_suffix_unavailable_point 1 '' \
  '~probe point vm.pagefault.return is not available: .*no tracepoint marks the end of a page fault' \
  -- "$UKSTAP" -p2 -e 'probe vm.pagefault.return { println(pp()) }'
t_done
