#!/bin/bash
# The last streamed records of a run are printed at exit: stack records are written without
# waking ukstap (runtime/bpf/stp_bpf_output.h stp__rec_wake: only when a record makes a quarter
# of the ring wait), so a burst smaller than that is read only by the 20 ms poll or, when the
# program exits first, by the drain at exit (loader/run.cpp). The program makes N getppid()
# calls in a few ms, the last through last_call(), and exits; truth: the count it writes itself.
# Every event's stack must be printed, the last one naming last_call, and no record dropped.
# The tables are loaded before the program starts (-d --ldd): this is about the records, not
# about a first event's tables (run_first_events).
# Root only; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
P="$T_TMP/stream_tail_prog"
t_build "the test program" gcc -O2 -g -fno-optimize-sibling-calls -fno-ipa-icf -o "$P" \
  "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/stream_tail_prog.c" || { t_done; exit; }
N=4000  # 4,000 records of 184 bytes: under a quarter of the 4 MiB ring, no wake-up at all
t "run" 0 '' '' -- "$UKSTAP" -o "$T_TMP/stacks.out" -d "$P" --ldd -c "$P $N $T_TMP/calls" \
  -e 'probe syscall.getppid { if (pid() == target()) { printf("E\n"); print_ubacktrace() } }'
cat > "$T_TMP/check.py" <<'PY'
import re, sys
out, calls = open(sys.argv[1]).read(), open(sys.argv[2]).read()
m = re.match(r"calls (\d+)$", calls.strip())
if not m:
    sys.exit("program output: %r" % calls)
n = int(m.group(1))
stacks = out.split("E\n")[1:]
if len(stacks) != n:
    sys.exit("%d stacks printed, the program made %d calls" % (len(stacks), n))
names = [re.findall(r" : (\w+)\+", s) for s in stacks]
bad = [i for i, f in enumerate(names[:-1]) if "each_call" not in f or "main" not in f]
if bad:
    sys.exit("stack %d: %r" % (bad[0], stacks[bad[0]]))
if "last_call" not in names[-1] or "main" not in names[-1]:
    sys.exit("the last stack: %r" % stacks[-1])
PY
t "every call's stack printed, the last one through last_call" 0 '' '' -- \
  python3 "$T_TMP/check.py" "$T_TMP/stacks.out" "$T_TMP/calls"
t_done
