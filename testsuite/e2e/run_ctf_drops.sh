#!/bin/bash
# Ring-buffer losses in a --ctf trace (issue 18): records the BPF ring had no room for become CTF
# discarded events (the packet context's events_discarded), which babeltrace2 reports as
# "WARNING: Tracer discarded N events".
#
# One run forced to lose: a 64 KiB ring (-D STP_RINGBUF_SIZE), ukstap stopped (SIGSTOP) while the
# traced program makes M getppid(2) calls, one single-record event each; SIGCONT then. Truths: the
# program's own count of calls (it writes it), ukstap's own report on stderr ("Number of dropped
# records"), and babeltrace2's reading of the trace: events + discarded = the program's count,
# discarded = ukstap's report. Root only; under CI=true not being root is a failure.
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

M=20000 F="$T_TMP/fifo" D="$T_TMP/tr"
mkfifo "$F"
t "run: 64 KiB ring, ukstap stopped while the program makes $M calls" 0 '' '' -- bash -c "
  '$UKSTAP' -D STP_RINGBUF_SIZE=65536 --ctf='$D' \
    -e 'probe syscall.getppid { if (pid() == target()) printf(\"%d\\n\", pid()) }' \
    -c '$T_TMP/calls $F $M $T_TMP/count' 2> '$T_TMP/uk.err' & pid=\$!
  exec 3> '$F'  # returns once the program, started after the probes are attached, opened it
  kill -STOP \$pid
  echo go >&3; exec 3>&-
  for i in \$(seq 600); do [ -s '$T_TMP/count' ] && break; sleep 0.1; done
  kill -CONT \$pid
  wait \$pid"
lost=$(sed -n 's/^WARNING: Number of dropped records: \([0-9]*\)$/\1/p' "$T_TMP/uk.err")
calls=$(cat "$T_TMP/count" 2> /dev/null)
babeltrace2 "$D" > "$T_TMP/bt.out" 2> "$T_TMP/bt.err"
events=$(grep -c ' syscall.getppid: ' "$T_TMP/bt.out")
discarded=$(sed -n 's/^WARNING: Tracer discarded \([0-9]*\) events .*/\1/p' "$T_TMP/bt.err" | awk '{s += $1} END {print s + 0}')
echo "  program: ${calls:-?} calls; ukstap: ${lost:-no} dropped records; trace: $events events, $discarded discarded"
t "the program made its $M calls; ukstap reports lost records" 0 '' '' -- \
  test "$calls" = "$M" -a "${lost:-0}" -gt 0
t "babeltrace2's discarded events = ukstap's dropped records" 0 '' '' -- test "$discarded" = "$lost"
t "... and events + discarded = the program's calls" 0 '' '' -- test $((events + discarded)) = "$calls"
t_done
