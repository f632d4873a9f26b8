#!/bin/bash
# Arrays keyed by usymname() placeholders hold one entry per name, as SystemTap's text keys do
# (passes/symbol_key_merge.h, loader/symbol_key_merge.h): the placeholder hashes the address, and
# two_sites() makes its getppid calls at two pcs. Truth: the program's own count per function
# (two_sites 2N, one_site M), which strace's getppid total confirms. Checked on one run: foreach
# with a count and a statistic read per key, a set's keys, and the end-of-run display of a
# written-only array.
# Root; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"
prog=$T_TMP/two_sites
t_build two_sites gcc -O1 -g -o "$prog" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/two_sites.c" || { t_done; exit; }

"$prog" 3 2 > "$T_TMP/truth"
t "strace counts the getppid calls the program says it makes" 0 '8' '' -- bash -c "
  strace -f -e trace=getppid -o '$T_TMP/strace' '$prog' 3 2 > /dev/null && grep -c '^[0-9]* *getppid' '$T_TMP/strace' | tr -d '\n'"

"$UKSTAP" -o "$T_TMP/sk.out" -e '
  global n, s, shown, seen
  probe syscall.getppid { if (pid() == target()) {
    n[usymname(uaddr())] += 1; s[usymname(uaddr())] <<< 1; shown[usymname(uaddr())]++
    seen[usymname(uaddr())] = 1 } }
  probe end {
    foreach (f in n) printf("%s %d %d\n", f, n[f], @count(s[f]))
    foreach (f in seen) printf("seen %s %d\n", f, seen[f]) }' \
  -c "$prog 3 2" > /dev/null 2> "$T_TMP/sk.err"
rc=$?
t "the run" 0 '' '' -- bash -c "cat '$T_TMP/sk.err' >&2; exit $rc"
# foreach: one line per function, its count and its statistic's @count equal to the program's.
t "foreach gives one entry per function name, counts summed over its pcs" 0 "$(awk '{print $1, $2, $2}' "$T_TMP/truth" | sort)"$'\n' '' -- \
  bash -c "grep -v '^s[eh]' '$T_TMP/sk.out' | sort"
t "the end-of-run display of a written-only array, one entry per name" 0 "$(awk '{printf "shown[\"%s\"]=%s\n", $1, $2}' "$T_TMP/truth" | sort)"$'\n' '' -- \
  bash -c "grep '^shown' '$T_TMP/sk.out' | sort"
t "a set (every entry assigned 1): one entry per name" 0 "$(awk '{print "seen", $1, 1}' "$T_TMP/truth" | sort)"$'\n' '' -- \
  bash -c "grep '^seen' '$T_TMP/sk.out' | sort"
t_done
