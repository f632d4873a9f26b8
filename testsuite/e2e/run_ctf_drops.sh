#!/bin/bash
# Ring-buffer losses in a --ctf trace (issue 18): records the BPF ring had no room for become CTF
# discarded events (the packet context's events_discarded), which babeltrace2 reports as
# "WARNING: Tracer discarded N events".
#
# One run forced to lose: a 64 KiB ring (-D STP_RINGBUF_SIZE), ukstap stopped (SIGSTOP) while the
# traced program (exec'd by the -c shell after the stop: ukstap has not loaded its unwind table)
# makes M getppid(2) calls, one single-record event each; SIGCONT then. Truths: the
# program's own count of calls (it writes it), ukstap's own report on stderr ("Number of dropped
# records"), and babeltrace2's reading of the trace: events + discarded = the program's count,
# discarded = ukstap's report. Again with print_ubacktrace() after the printf (two records per
# event): events + discarded = the program's count still (discarded counts events, not records);
# an event may lose its stack record alone only while the ring's last room (less than one stack
# record) fills with printf records: at most ceil(stack record / printf record) events lack their
# stack, by the record sizes (common/stp_records.h) and the deepest stack in the trace. Root only;
# under CI=true not being root is a failure.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"

cat > "$T_TMP/calls.c" <<'C'
/* calls FIFO M OUT: waits for a byte on FIFO, makes M getppid(2) calls, writes M to OUT. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) {
  char c;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0 || read(fd, &c, 1) != 1) return 1;
  long m = atol(argv[2]), done = 0;
  for (long i = 0; i < m; i++) done += syscall(SYS_getppid) > 0;
  FILE *f = fopen(argv[3], "w");
  if (!f) return 1;
  fprintf(f, "%ld\n", done);
  return fclose(f) != 0;
}
C
t_build calls gcc -O2 -o "$T_TMP/calls" "$T_TMP/calls.c" || { t_done; exit; }

M=20000 F="$T_TMP/fifo"
mkfifo "$F"
echo x > "$T_TMP/go"
# forced_loss TAG BODY: the run above with BODY as the probe's output; sets lost, calls, events,
# discarded, stacks (events with a user stack).
forced_loss() {
  local tag=$1 body=$2 D="$T_TMP/tr.$1"
  rm -f "$T_TMP/count"
  t "run ($tag): 64 KiB ring, ukstap stopped while the program makes $M calls" 0 '' '' -- bash -c "
  '$UKSTAP' -D STP_RINGBUF_SIZE=65536 --ctf='$D' \
    -e 'probe syscall.getppid { if (pid() == target() && execname() == \"calls\") { $body } }' \
    -c \"sh -c 'read x < $F; exec $T_TMP/calls $T_TMP/go $M $T_TMP/count'\" 2> '$T_TMP/uk.err' & pid=\$!
  exec 3> '$F'  # returns once the -c shell, started after the probes are attached, opened it
  kill -STOP \$pid
  echo go >&3; exec 3>&-
  for i in \$(seq 600); do [ -s '$T_TMP/count' ] && break; sleep 0.1; done
  kill -CONT \$pid
  wait \$pid"
  lost=$(sed -n 's/^WARNING: Number of dropped records: \([0-9]*\)$/\1/p' "$T_TMP/uk.err")
  cut=$(grep '^WARNING: .* user stacks were cut short: ' "$T_TMP/uk.err" | grep -o '[0-9]* unwind table not loaded yet' | cut -d' ' -f1)
  calls=$(cat "$T_TMP/count" 2> /dev/null)
  babeltrace2 "$D" > "$T_TMP/bt.out" 2> "$T_TMP/bt.err"
  events=$(grep -c ' syscall.getppid: ' "$T_TMP/bt.out")
  stacks=$(grep ' syscall.getppid: ' "$T_TMP/bt.out" | grep -c 'callstack_user_symbols = \[ \[0\]')
  # the deepest user stack's frames (babeltrace2: callstack_user_symbols = [ [0] = "...", ... ])
  frames=$(grep ' syscall.getppid: ' "$T_TMP/bt.out" | sed -n 's/.*callstack_user_symbols = \[\(.*\)/\1/p' |
    awk '{n = gsub(/\[[0-9]+\] = /, ""); if (n > m) m = n} END {print m + 0}')
  discarded=$(sed -n 's/^WARNING: Tracer discarded \([0-9]*\) events .*/\1/p' "$T_TMP/bt.err" | awk '{s += $1} END {print s + 0}')
  echo "  $tag: program: ${calls:-?} calls; ukstap: ${lost:-no} dropped records, ${cut:-no} stacks cut short for a table; trace: $events events ($stacks with a stack), $discarded discarded"
  t "the program made its $M calls; ukstap reports lost records" 0 '' '' -- \
    test "$calls" = "$M" -a "${lost:-0}" -gt 0
}
forced_loss printf 'printf("%d\n", pid())'
t "babeltrace2's discarded events = ukstap's dropped records (one record per event)" 0 '' '' -- test "$discarded" = "$lost"
t "... and events + discarded = the program's calls" 0 '' '' -- test $((events + discarded)) = "$calls"
# An event with a user stack is two records (the printf's, the stack's): the trace counts events.
forced_loss stack 'printf("%d\n", pid()); print_ubacktrace()'
t "with print_ubacktrace(): events + discarded = the program's calls (not records)" 0 '' '' -- \
  test $((events + discarded)) = "$calls"
# Ring records are 8-byte aligned with an 8-byte header; a record is hdr 8 + context 40 + payload:
# the printf's one long (8), a user stack's struct stp_ustack (32) + 8 per frame.
printf_rec=$((8 + 8 + 40 + 8)) stack_rec=$((8 + 8 + 40 + 32 + 8 * frames))
most_stackless=$(((stack_rec + printf_rec - 1) / printf_rec))
echo "  stack: deepest stack $frames frames: at most $most_stackless events without their stack; $((events - stacks)) are"
t "... events without their stack: at most ceil(stack record / printf record)" 0 '' '' -- \
  test "$frames" -gt 0 -a "$stacks" -le "$events" -a $((events - stacks)) -le "$most_stackless"
t "... fewer events were discarded than records dropped" 0 '' '' -- \
  test "$discarded" -gt 0 -a "$discarded" -lt "$lost"
# The program was exec'd while ukstap was stopped: its walks wait for its unwind table, and those
# whose stack record was lost with the ring are dropped records, not stacks "cut short" (before:
# ~19,970 of them for ~320 stacks in the trace).
t "... stacks reported cut short for a table: at most the stacks in the trace" 0 '' '' -- \
  test "${cut:-0}" -le "$stacks"

# --- the writer alone, fed wire.h messages by hand (as run_ctf.sh's feed.py): 7 lost before any
# event (cpu 1: a stream without a packet yet), 3 after an event at t=1000 and 4 after one at
# t=2000 (cpu 0). Truth: the input; every count is read back, none as "may have discarded" (a
# stream's first packet gives readers no count).
cat > "$T_TMP/feed.py" <<'PY'
import struct, sys
from ctf_writer_feed import msg, s, start_writer
a, w = start_writer(sys.argv[1], sys.argv[2])
lost = lambda cpu, ts, n: msg(b"\x05" + struct.pack("<IQQ", cpu, ts, n))
event = lambda ts, n: msg(b"\x03" + struct.pack("<IQI", 0, ts, 0) + struct.pack("<Q", n))
out = msg(b"\x01" + struct.pack("<Q", 0) + s(b"monotonic") + struct.pack("<II", 0, 0))
out += lost(1, 500, 7)
out += msg(b"\x02" + struct.pack("<I", 0) + s(b"ev") + struct.pack("<I", 1) + bytes([2, 64, 10, 0]) + s(b"n"))
out += event(1000, 1) + lost(0, 1000, 3) + event(2000, 2) + lost(0, 2000, 4)
a.sendall(out)
a.close()
sys.exit(w.wait())
PY
t "the writer fed by hand: losses before any event and between events" 0 '' '' -- \
  env PYTHONPATH="$UKSTAP_TOP_SRCDIR/testsuite/e2e" /usr/bin/python3 "$T_TMP/feed.py" "$UKSTAP" "$T_TMP/fed"
t "... babeltrace2 reads each count at its time, and both events" 0 \
  $'7 000000500\n3 000001000\n4 000002000\nev 1\nev 2\n' '' -- bash -c "
  babeltrace2 '$T_TMP/fed' 2>&1 | sed -nE -e 's/^WARNING: Tracer discarded ([0-9]+) events between \\[[0-9:]+\\.([0-9]+)\\].*/\\1 \\2/p' \
    -e 's/.* (ev): .* n = ([0-9]+) .*/\\1 \\2/p' -e '/may have discarded/p'"
t_done
