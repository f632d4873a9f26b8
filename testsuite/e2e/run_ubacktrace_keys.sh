#!/bin/bash
# ubacktrace() as an array key (translator/passes/backtrace_tokens.h): a key that is only ever
# used as a key or printed is kept in the kernel as a stack id, and printed as the same hex list.
# Truth: the traced program's own call counts and libunwind's stacks (progs/ubt_keys_prog.c),
# and the string path of the same run (`ubacktrace() . ""` stays text), for a deep stack whose
# text MAXSTRINGLEN (512) cuts and the token path keeps whole. Then which scripts the analysis
# turns to tokens (pass 3's C): any other use of a key keeps the text. Root only; under CI=true
# not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
PROGS="$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs"
P="$T_TMP/ubt_keys_prog"
t_build "the test program" gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -o "$P" "$PROGS/ubt_keys_prog.c" \
       -lunwind || { t_done; exit; }

KEYS='
global s, t, u, n
probe syscall.getppid {
  if (pid() == target()) {
    s[ubacktrace()] <<< 1
    t[ubacktrace() . ""] <<< 1
    u[ubacktrace(), n++ % 2] <<< 1
  }
}
probe end {
  foreach (k in s-) { printf("T %d %s\n", @count(s[k]), k); print_ustack(k) }
  foreach (j in t) println("S ", @count(t[j]), " ", j)
  foreach ([k, m-] in u) printf("U %d %d\n", m, @count(u[k, m]))
}'
t "keys: run" 0 '*' '' -- "$UKSTAP" -D MAXSTRINGLEN=512 -o "$T_TMP/keys.out" -e "$KEYS" \
  -c "$P $T_TMP/prog.out"
t "keys: ubacktrace() keys = the program's paths, counts and libunwind stacks, whole past MAXSTRINGLEN" \
  0 '' '' -- python3 "$UKSTAP_TOP_SRCDIR/testsuite/e2e/ubt_keys_check.py" "$T_TMP/keys.out" \
  "$T_TMP/prog.out" 512

# A key of tokens is token-sized (STP_TOKEN_KEY_SIZE, not MAXSTRINGLEN): a key after it is found
# where the native sort looks (foreach sorted by the second key). Truth: the program's order of
# events, paths 0 (3), 1 (5), 2 (7), numbered 0..14: (parity, count) per path and parity.
t "keys: sorted by a long key after a token key" 0 $'1 1\n1 3\n1 3\n0 2\n0 2\n0 4\n' '' -- bash -c "
  grep '^U ' '$T_TMP/keys.out' | awk '{print \$2, \$3}' > '$T_TMP/u.txt'
  awk 'NR > 1 && \$1 > prev {print \"not sorted by m: line \" NR; exit 1} {prev = \$1}' '$T_TMP/u.txt' &&
  sort -k1,1nr -k2,2n '$T_TMP/u.txt'"

# Pass 3's C: how many ubacktrace() calls became stack-id tokens.
tokens() {
  "$UKSTAP" -p3 -e "$1" > "$T_TMP/p3.c" 2> "$T_TMP/p3.err" || { cat "$T_TMP/p3.err"; return 1; }
  grep -c '_stp_ustack_hex_token(' "$T_TMP/p3.c" || true
}
AGG='global s; probe syscall.getppid { s[ubacktrace()] <<< 1 } '
t "analysis: stap's idiom (print_ustack, @count, sorted by count)" 0 '1
' '' -- tokens "$AGG"'probe end { foreach (k in s-) { print_ustack(k); println(@count(s[k])) } }'
keysize() {
  "$UKSTAP" -p3 -e "$1" 2> "$T_TMP/p3.err" | grep -o 'struct stp_key_s { char k0\[[A-Z_]*\]' || cat "$T_TMP/p3.err"
}
t "analysis: a key of tokens is token-sized" 0 'struct stp_key_s { char k0[STP_TOKEN_KEY_SIZE]
' '' -- keysize "$AGG"'probe end { foreach (k in s-) { print_ustack(k); println(@count(s[k])) } }'
t "analysis: a key of text is MAXSTRINGLEN-sized" 0 'struct stp_key_s { char k0[STP_MAXSTRINGLEN]
' '' -- keysize "$AGG"'probe end { foreach (k in s) println(substr(k, 0, 10)) }'
t "analysis: keys printed by print/printf %s, deleted, tested with in" 0 '1
' '' -- tokens "$AGG"'probe end { foreach ([k] in s) { printf("%s: %d\n", k, @count(s[k])); print(k); if (k in s) delete s[k] } }'
t "analysis: a key passed through another array's key" 0 '1
' '' -- tokens "$AGG"'global u; probe end { foreach (k in s) u[k] = 1; foreach (k in u) println(k) }'
t "analysis: substr of a key keeps the text" 0 '0
' '' -- tokens "$AGG"'probe end { foreach (k in s) println(substr(k, 0, 10)) }'
t "analysis: a key sorted by its text keeps the text" 0 '0
' '' -- tokens "$AGG"'probe end { foreach (k+ in s) println(k) }'
t "analysis: a padded %s keeps the text" 0 '0
' '' -- tokens "$AGG"'probe end { foreach (k in s) printf("%-40s\n", k) }'
t "analysis: a key copied to a variable keeps the text" 0 '0
' '' -- tokens "$AGG"'probe end { foreach (k in s) { x = k; println(x) } }'
t "analysis: another key of text in the same array keeps the text" 0 '0
' '' -- tokens "$AGG"'probe begin { s["x"] <<< 1 } probe end { foreach (k in s) println(k) }'
t "analysis: ubacktrace() printed or concatenated stays text" 0 '0
' '' -- tokens 'probe syscall.getppid { println(ubacktrace()); x = ubacktrace() . "!"; println(x) }'
t_done
