#!/bin/bash
# ukstap never hides events from other tools: with a ukstap script on a tracepoint, a perf
# session on the same tracepoint still counts every event. (A perf-event tracepoint program's
# return value decides whether the kernel hands the event on to perf's own events on it: 0
# hid them all.) The truth is the workload itself: a program making exactly N getppid calls
# through syscall(2) (no libc caching).
source "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

N=801
prog=$T_TMP/ukc_getppid$$  # a name no one else runs: the scripts count only it
cat > "$T_TMP/getppid_n.c" <<'C'
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  for (long i = 0; i < n; i++) syscall(SYS_getppid);
  return 0;
}
C
t_build "the workload" gcc -O2 -o "$prog" "$T_TMP/getppid_n.c" || { t_done; exit; }
comm=$(basename "$prog" | cut -c1-15)

# coexist NAME PROBE: ukstap on PROBE, counting the workload's events; perf stat on the
# tracepoint meanwhile; both must count N.
coexist() {
  local name=$1 probe=$2 out=$T_TMP/uk.out
  # Removed first: the background job truncates it only once it runs, and the wait below could
  # read the previous run's "ready" before that (seen once: perf ran before the attach, "ukstap 0").
  rm -f "$out"
  "$UKSTAP" -e "global n
    probe $probe { if (execname() == \"$comm\") n++ }
    probe begin { println(\"ready\") }
    probe end { printf(\"ukstap %d\\n\", n) }" > "$out" 2> "$T_TMP/uk.err" &
  local pid=$!
  # Compiling may take a while on a loaded machine; "ready" comes once the probe is attached.
  for _ in $(seq 1200); do grep -q ready "$out" 2> /dev/null && break; kill -0 $pid 2> /dev/null || break; sleep 0.1; done
  t "$name: ukstap is attached" 0 '' '' -- grep -q ready "$out"
  perf stat -x, -e syscalls:sys_enter_getppid -- "$prog" $N 2> "$T_TMP/perf.out" > /dev/null
  kill -TERM $pid; wait $pid
  t "$name: perf counts every event with ukstap attached" 0 "$N" '' -- \
    awk -F, '/syscalls:sys_enter_getppid/ { printf "%s", $1 }' "$T_TMP/perf.out"
  t "$name: ukstap counts them too" 0 "ready
ukstap $N
" '' -- cat "$out"
}
coexist 'kernel.trace' 'kernel.trace("syscalls:sys_enter_getppid")'
coexist 'syscall.getppid' 'syscall.getppid'
t_done
