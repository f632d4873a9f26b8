#!/bin/bash
# -D MAXBACKTRACE=N holds for the walks finished in user space too (loader/deferred_unwind.h): a
# walk that stopped for an unwind table not loaded yet is finished over its stack copy, and that
# walk stopped at the runtime's default depth (128), not the script's: 9 frames under
# MAXBACKTRACE=3, and a 512-deep recursion under =600 cut at 128 with "depth limit" (seen in the
# 6.1 guest, where the first events often come before the tables). Truth: MAXBACKTRACE's meaning
# (at most N frames), and -v's count of walks finished in user space (at least one, so the path
# was taken). A cache of its own: the test is about a cold start (ld.so's first syscalls come
# before the loader has answered for its table). Root; under CI=true not being root is a failure.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"
t "first 100 syscalls of perl, -D MAXBACKTRACE=3: run" 0 '' '' -- bash -c "
  '$UKSTAP' -v -D MAXBACKTRACE=3 -o '$T_TMP/d.out' -c 'perl -e 1' -e 'global n
    probe kernel.trace(\"raw_syscalls:sys_enter\") { if (pid() == target() && n++ < 100) { println(\"==\"); print_ubacktrace() } }' \
    2> '$T_TMP/d.err' || { cat '$T_TMP/d.err' >&2; exit 1; }"
t "every stack has at most 3 frames, walks finished in user space included" 0 '' '' -- bash -c "
  grep -Eq 'walks waited for an unwind table: [1-9][0-9]* finished in user space' '$T_TMP/d.err' ||
    { echo 'no walk was finished in user space (the path under test was not taken):'; cat '$T_TMP/d.err'; exit 1; } >&2
  awk '/^==/ {c = 0; next} /^ 0x/ && ++c > 3 {print \"stack \" NR \": more than 3 frames\"; bad = 1} END {exit bad}' '$T_TMP/d.out' >&2"
# A walk that waited for a table is finished in user space only when it is printed: a value the
# script takes (ubacktrace(), ustack(n)) keeps the frames the kernel found. That was silent (the
# 6.1 guest's run_demangle: usymname(ustack(1)) was 0x0); now it is counted as cut short on
# stderr. Truth: the same event's print_ubacktrace(), finished from its stack copy.
t "first 40 syscalls of perl, ubacktrace() and print_ubacktrace(): run" 0 '' '' -- bash -c "
  '$UKSTAP' -o '$T_TMP/v.out' -c 'perl -e 1' -e 'global n
    probe kernel.trace(\"raw_syscalls:sys_enter\") { if (pid() == target() && n++ < 40) { println(ubacktrace()); print_ubacktrace(); println(\"--\") } }' \
    2> '$T_TMP/v.err' || { cat '$T_TMP/v.err' >&2; exit 1; }"
t "values shorter than the printed stack of the same event are said to be cut short" 0 '' '' -- bash -c "
  k=\$(awk 'BEGIN {v = -1} /^--\$/ {if (v < p) k++; v = -1; p = 0; next} v < 0 {v = NF; next} {p++} END {print k + 0}' '$T_TMP/v.out')
  n=\$(sed -n 's/^WARNING: [0-9]* of [0-9]* user stacks were cut short: \([0-9]*\) unwind table not loaded yet.*/\\1/p' '$T_TMP/v.err')
  [ \"\$k\" -ge 1 ] && [ \"\${n:-0}\" -ge \"\$k\" ] || { echo \"\$k values shorter than their printed stack; stderr:\"; cat '$T_TMP/v.err'; exit 1; } >&2"
t_done
