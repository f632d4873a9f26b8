#!/bin/bash
# The reader's whole-stack text cache (loader/stack_text_cache.h): a stack printed again with
# the same pcs takes the text printed before only while every pc is in the same mapping. The
# program calls through tc_one of one library, dlcloses it, then through tc_two of another
# built from the same code and loaded at the same address: the same pcs, another function and
# file. Truth: the program's own order of calls and dladdr()'s file of each library. Fails
# with the cache's validity checks (tracker generation, mapping time window) removed: the
# second library's stacks then print the first's names. It also guards the record's reused
# event time (runtime/bpf/stp_bpf_rec_time.h): with the mm_lock_seq comparison removed, the
# first stacks after the dlclose/dlopen carry a time from before it and print tc_one. Root only;
# under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"
P="$T_TMP/stack_text_prog" L1="$T_TMP/libtc_a.so" L2="$T_TMP/libtc_b.so"
src="$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs"
t_build "the test program" gcc -O2 -g -o "$P" "$src/stack_text_prog.c" -ldl || { t_done; exit; }
for x in "one $L1" "two $L2"; do
  set -- $x
  t_build "library tc_$1" gcc -O2 -g -fPIC -shared -fno-optimize-sibling-calls -DTC_NAME="tc_$1" \
    -o "$2" "$src/stack_text_lib.c" || { t_done; exit; }
done
N=40
cat > "$T_TMP/check.py" <<'PY'
import re, sys
out, prog, n = open(sys.argv[1]).read(), open(sys.argv[2]).read(), int(sys.argv[3])
libs = {int(k): (f, base, fn) for k, f, base, fn in re.findall(r"^lib (\d) (\S+) (\S+) (\S+)$", prog, re.M)}
if len(libs) != 2:
    sys.exit("program output: %r" % prog)
stacks = out.split("E\n")[1:]
want = [("tc_one", libs[1][0])] * n + [("tc_two", libs[2][0])] * n
got, pcs = [], []
for s in stacks:
    line = [l for l in s.splitlines() if " : tc_" in l]
    m = re.match(r" (0x[0-9a-f]+) : (tc_\w+)\+\S+ \[(\S+)\]$", line[0]) if line else None
    got.append((m.group(2), m.group(3)) if m else s)
    pcs.append(m.group(1) if m else None)
# The premise (else the test shows nothing): both libraries at one address, the same pcs.
if libs[1][1] != libs[2][1] or libs[1][2] != libs[2][2] or len(set(pcs)) != 1:
    sys.exit("premise: libraries at %s / %s, functions %s / %s, frame pcs %s" %
             (libs[1][1], libs[2][1], libs[1][2], libs[2][2], sorted(set(map(str, pcs)))))
if got != want:
    bad = next(i for i in range(max(len(got), len(want))) if i >= len(got) or i >= len(want) or got[i] != want[i])
    sys.exit("%d stacks (want %d); first difference at stack %d: got %r, want %r" %
             (len(got), len(want), bad, got[bad] if bad < len(got) else None, want[bad] if bad < len(want) else None))
PY
t "same pcs, another library at the same address: each stack names its own function and file" 0 '' '' -- bash -c "
  '$UKSTAP' -o '$T_TMP/stacks.out' -d '$L1' -d '$L2' -c '$P $L1 $L2 $N' \
    -e 'probe syscall.getppid { if (pid() == target()) { printf(\"E\\n\"); print_ubacktrace() } }' > '$T_TMP/prog.out' &&
  python3 '$T_TMP/check.py' '$T_TMP/stacks.out' '$T_TMP/prog.out' $N"
t_done
