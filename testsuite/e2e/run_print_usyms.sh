#!/bin/bash
# print_usyms/sprint_usyms (issue 17): one record resolved in user space. Before, the tapset
# looped over usymdata() in the probe: a timer.profile probe was rejected by the verifier
# ("program too large", also at MAXSTRINGLEN=512), and in an end probe the text it built was
# cut at MAXSTRINGLEN in the middle of an address.
#
# Truth: progs/ustack_prog.c's own libunwind backtrace ("truth: PC ...", printed just before its
# getppid()) for the addresses; print_ubacktrace() of the same probe for the symbols (its format,
# docs/STAP-FORMATS.md §4, has usymdata's text after " : ").
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
P="$T_TMP/ustack_prog"
t_build ustack_prog gcc -O2 -g -fomit-frame-pointer -o "$P" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/ustack_prog.c" \
  -lunwind -ldl -lpthread || { t_done; exit; }

# timer.profile: print_usyms(ubacktrace()) then print_ubacktrace() of the same sample. Every
# line " ADDR : usymdata" must be that sample's backtrace line for ADDR (address, symbol+offset,
# module: print_ubacktrace looks a caller up at ADDR-1, the same function with the same offset).
# Samples of the program only: one in ukstap's child before its exec (the target's pid already)
# walks ukstap, whose table is not loaded: the value is cut short there, the print is finished
# from its stack copy, and ukstap says so (a flake: 78 of 79 samples, once). The program's and its
# libraries' tables are loaded before the run (-d PROG --ldd): a sample just after the exec would
# otherwise find "unwind table not loaded yet", a shorter value and a "cut short" warning on
# stderr; this test is about print_usyms, not a cold start (run_chain_cache, d_preload are).
cat > "$T_TMP/same.py" <<'PY'
import sys
samples = open(sys.argv[1]).read().split("==\n")[:-1]
ok = 0
for s in samples:
    usyms, bt = s.split("--\n")
    # (a stack cut short ends in a "<user stack cut short: ...>" line: no frame)
    key = lambda text: [(l.split()[0], l.split()[2], l.split()[-1]) for l in text.splitlines() if l[:1] != "<"]
    ok += key(usyms) == key(bt) and len(key(bt)) >= 1
sys.exit(0 if len(samples) >= 5 and ok == len(samples) else "%d of %d samples agree" % (ok, len(samples)))
PY
for d in "" "-D MAXSTRINGLEN=512"; do
  t "timer.profile ${d:-(defaults)}: loads; print_usyms(ubacktrace()) = print_ubacktrace()" 0 '' '' -- bash -c "
    '$UKSTAP' $d -d '$P' --ldd -o '$T_TMP/prof.out' -c '$P vdso 0.3' \
      -e 'probe timer.profile { if (pid() == target() && execname() == \"ustack_prog\") { print_usyms(ubacktrace()); print(\"--\n\"); print_ubacktrace(); print(\"==\n\") } }' > /dev/null &&
    python3 '$T_TMP/same.py' '$T_TMP/prof.out' || { head -40 '$T_TMP/prof.out'; exit 1; }"
done

# The end probe: a 36-frame ubacktrace() kept in a global (more than MAXSTRINGLEN holds). The
# addresses print_usyms and sprint_usyms print are whole and in order: after the first (the
# syscall's site, where libunwind's walk had print_truth's), libunwind's pcs from its second on.
cat > "$T_TMP/end.py" <<'PY'
import re, sys
truth = [l for l in open(sys.argv[2]) if l.startswith("truth:")][0].split()[1:]
lines = open(sys.argv[1]).read().splitlines()
bad = [l for l in lines if not re.fullmatch(r" 0x[0-9a-f]+ : \S+\+0x[0-9a-f]+/0x[0-9a-f]+ \[/\S+\]", l)]
got = [l.split()[0] for l in lines]
half = len(got) // 2
if bad or len(got) % 2 or half < 20 or got[:half] != got[half:] or got[1:half] != truth[2:half + 1]:
    sys.exit("bad lines %s; got %s; truth %s" % (bad, got, truth))
PY
t "end probe: print_usyms(k), sprint_usyms(k) of a stored ubacktrace(): whole addresses = libunwind's" 0 '' '' -- bash -c "
  '$UKSTAP' -o '$T_TMP/end.out' -c '$P recurse 30' \
    -e 'global k; probe syscall.getppid { if (pid() == target()) k[1] = ubacktrace() } probe end { print_usyms(k[1]); print(sprint_usyms(k[1])) }' > '$T_TMP/prog.out' &&
  python3 '$T_TMP/end.py' '$T_TMP/end.out' '$T_TMP/prog.out'"
t_done
