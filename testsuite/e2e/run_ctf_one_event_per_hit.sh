#!/bin/bash
# --ctf (and --lttng, the same assembler: loader/ctf_output.h) writes one event per probe hit: the
# statement's values with the stack printed after it. The event loop drains the ring every 20 ms
# whatever it holds; a drain that fell between a hit's printf record and its stack record wrote
# the statement without its stack and the stack as an event of its own (run_lttng_live's flake:
# 59 live events for 58 hits). Here each hit spends ~10-20 ms in a loop between its printf and its
# print_ubacktrace(), so drains fall there: ukstap and perl are pinned to two CPUs (on one CPU the
# reader would run only between hits, never inside one). Truths: the 20 getppid calls perl was asked to make,
# and the -o text of the same run (printf line + backtrace lines: no assembling), event by event.
# Root only; under CI=true not being root is a failure.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
N=20
cat > "$T_TMP/s.stp" <<'STP'
global j
probe syscall.getppid {
  if (pid() == target()) {
    printf("hit %d\n", pid())
    for (i = 0; i < 1000000; i++) j += i
    print_ubacktrace()
  }
}
STP
PIN_U=() PIN_P=
if [ "$(nproc)" -ge 2 ]; then PIN_U=(taskset -c 0) PIN_P="taskset -c 1"; fi
t "run: $N hits, each ~10-20 ms between its printf and its print_ubacktrace()" 0 '' '' -- \
  "${PIN_U[@]}" "$UKSTAP" -D MAXACTION=4000000 --ctf="$T_TMP/tr" -o "$T_TMP/text" "$T_TMP/s.stp" \
  -c "$PIN_P perl -e 'getppid() for 1..$N'"
cat > "$T_TMP/check.py" <<'PY'
import re, sys
import bt2
evs = [m.event for m in bt2.TraceCollectionMessageIterator(sys.argv[1])
       if type(m) is bt2._EventMessageConst and m.event.name == "syscall.getppid"]
hits = []
for line in open(sys.argv[2]):
    if line.startswith("hit "):
        hits.append((int(line.split()[1]), []))
    elif re.match(r"^ 0x[0-9a-f]+ : ", line):
        hits[-1][1].append(int(line.split()[0], 16))
if len(evs) != len(hits):
    sys.exit("%d events, %d hits in the text" % (len(evs), len(hits)))
for i, (e, (pid, addrs)) in enumerate(zip(evs, hits)):
    got = (int(e.payload_field["pid"]), [int(a) for a in e.common_context_field["callstack_user"]])
    if got != (pid, addrs) or not addrs:
        sys.exit("event %d: pid %d, stack %s; the text: %d, %s" % (i, got[0], got[1], pid, addrs))
print("ok", len(evs))
PY
t "one event per hit ($N), each with its value and the backtrace the text printed after it" 0 "~^ok $N$" '' -- \
  /usr/bin/python3 "$T_TMP/check.py" "$T_TMP/tr" "$T_TMP/text"
t_done
