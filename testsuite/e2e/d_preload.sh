#!/bin/bash
# -d/--ldd (man page): a program another process starts (here ls, a child of the -c shell) has
# its unwind tables loaded before it runs, so ubacktrace() walked in the kernel reaches ls's
# _start from its very first getdents call. Truth: the outermost frame of ls's main thread is
# its entry point _start (gdb's bt at getdents64 ends there). Without -d the first calls race the table
# load (they may stop at ls's first frame), so that case is not asserted. Root; under CI=true not
# being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

"$UKSTAP" -o "$T_TMP/d.out" -d /bin/ls --ldd -e '
  global s
  probe syscall.getdents { if (execname() == "ls" && ppid() == target()) s[ubacktrace()] <<< 1 }
  probe end { foreach (k in s) { println("=="); print_ustack(k) } }' \
  -c 'sh -c "ls / > /dev/null; true"' > /dev/null 2> "$T_TMP/d.err"
rc=$?
t "-d /bin/ls --ldd, ls run by the -c shell: the run" 0 '' '' -- bash -c "cat '$T_TMP/d.err' >&2; exit $rc"
t "every ubacktrace() stack of that ls ends at its _start" 0 '' '' -- bash -c "
  n=\$(grep -c '^==\$' '$T_TMP/d.out')
  ends=\$(awk '/^==/ {if (prev) print prev; prev=\"\"; next} {prev=\$0} END {print prev}' '$T_TMP/d.out' |
    grep -c ' : _start+0x[0-9a-f]*/0x[0-9a-f]* \[/usr/bin/ls\]\$')
  [ \"\$n\" -ge 1 ] && [ \"\$ends\" = \"\$n\" ] || { echo \"n=\$n ends=\$ends\"; cat < '$T_TMP/d.out'; exit 1; }"
t_done
