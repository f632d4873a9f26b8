#!/bin/bash
# ukstap's memory stays bounded while short processes come and go: the mappings of every exited
# process used to be kept for good (~4 KB each: 69 -> 204 MB over 41,700 processes). Now an
# exited process's history is freed once its records have been read and 1,024 newer ones
# exited (vma-tracker/tracker.h Retention). The truth is the kernel's: VmRSS in
# /proc/PID/status, before and after 6,000 processes ran and exited under -c.
# e2e-schedule: alone (run-e2e.sh): 6,000 short processes load the machine.
source "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

N=6000
go=$T_TMP/go done=$T_TMP/done end=$T_TMP/end
# The -c command waits for the go, runs N processes, says done, and waits for the end.
cmd="while [ ! -e $go ]; do sleep 0.1; done; for i in \$(seq $N); do /bin/true; done; touch $done;
     while [ ! -e $end ]; do sleep 0.1; done"
"$UKSTAP" -c "sh -c '$cmd'" \
  -e 'probe syscall.getppid { if (pid() == target()) print_ubacktrace() } probe begin { warn("ready") }' \
  > /dev/null 2> "$T_TMP/uk.err" &
pid=$!
rss() { awk '/^VmRSS/ { print $2 }' /proc/$pid/status; }
# settled_rss: VmRSS once two reads 0.5 s apart differ by under 64 kB (up to 30 s): ukstap has
# caught up with the records of what ran, whatever the machine's load.
settled_rss() {
  local a b
  a=$(rss)
  for _ in $(seq 60); do
    sleep 0.5; b=$(rss)
    [ $((b > a ? b - a : a - b)) -lt 64 ] && break
    a=$b
  done
  echo "$b"
}
for _ in $(seq 1200); do grep -q ready "$T_TMP/uk.err" && break; kill -0 $pid 2> /dev/null || break; sleep 0.1; done
t "ukstap started" 0 '' '' -- grep -q ready "$T_TMP/uk.err"
before=$(settled_rss)  # after the start-up allocations (unwind tables of sh, libc, ld.so)
touch "$go"
for _ in $(seq 1200); do [ -e "$done" ] && break; kill -0 $pid 2> /dev/null || break; sleep 0.1; done
t "$N processes ran" 0 '' '' -- test -e "$done"
after=$(settled_rss)
touch "$end"; wait $pid
echo "  VmRSS: $before kB before, $after kB after $N processes"
# Before the bound: +15 MB here (6,000 kept histories); with it ~+3 MB. Allow 8 MB (malloc keeps some slack).
t "RSS grew by less than 8 MB over $N exited processes ($before -> $after kB)" 0 '' '' -- \
  test $((after - before)) -lt 8192
t_done
