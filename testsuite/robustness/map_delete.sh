#!/bin/bash
# `delete MAP` in a native probe (timer.s) while a kernel probe keeps inserting into MAP: the
# delete must end (it used to delete "the first key" until none was left, which never happened
# while every syscall re-inserted p[1]), so -T ends the run by itself, status 0. Bounded by
# timeout: a regression fails instead of hanging the suite.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"

t "-T 3 ends a run whose timer deletes a map a syscall probe fills" 0 '' '' -- \
  timeout -s KILL 60 "$UKSTAP" -T 3 -e 'global p; probe syscall_any { p[1]++ } probe timer.s(1) { delete p }'
# The same race through foreach: a walk of a map the kernel side empties and refills ends.
t "foreach over a map a syscall probe deletes from and refills ends" 0 '~^done$' '' -- \
  timeout -s KILL 60 "$UKSTAP" -T 3 -e 'global p; probe syscall_any { p[tid() % 7]++; delete p[(tid() + 1) % 7] }
    probe timer.ms(100) { foreach (k in p) n++ } probe end { println("done") } global n'
t_done
