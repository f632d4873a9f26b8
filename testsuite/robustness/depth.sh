#!/bin/bash
# Deep scripts: beyond the parser's nesting limit (500 levels, or a left-associative chain of
# 1000 operators, each counting half a level) one parse error at file:line:col; just under it, every pass works,
# including clang on the generated C of a kernel probe, and the BPF program computes what
# the shell computes independently.
. "$(dirname "$0")/../e2e-lib.sh"

NL=$'\n'
gen() { python3 -c "$1" > "$T_TMP/$2"; }
gen 'print("probe begin { x = " + " + ".join(["1"] * 14000) + "; println(x) }")' chain14000.stp
gen 'print("probe begin { x = " + "+".join(["1"] * 100000) + "; println(x) }")' chain100000.stp
gen 'print("probe begin { x = " + " + ".join(["1"] * 900) + "; println(x) }")' chain900.stp
gen 'print("probe begin {\n  x = " + "(" * 501 + "1" + ")" * 501 + "\n}")' parens501.stp
gen 'print("probe begin { y = 1\n" + "if (y) " * 501 + "x = 1 }")' ifs501.stp
gen 'print("probe begin { x = " + "1 ? " * 60 + "1" + " : 0" * 60 + "; println(x); exit() }")' folded60.stp

TOO="parse error: too deeply nested: more than 500 levels of nested expressions and statements, or 1000 chained operators"
# At the token that goes one level too deep, as stap points at a parse error.
t "14000-term chain: one parse error with its location" 1 '' "~^         at: operator '\\+' at .*chain14000.stp:1:[0-9]+\$" \
  -- "$UKSTAP" -p1 "$T_TMP/chain14000.stp"
t "14000-term chain: the message" 1 '' "~^$TOO\$" -- "$UKSTAP" -p3 "$T_TMP/chain14000.stp"
t "100000-term chain" 1 '' "~^$TOO\$" -- "$UKSTAP" -p3 "$T_TMP/chain100000.stp"
t "501 parentheses" 1 '' "~^         at: operator '\\(' at .*parens501.stp:2:[0-9]+\$" -- "$UKSTAP" -p3 "$T_TMP/parens501.stp"
t "501 nested ifs" 1 '' "~^         at: .* at .*ifs501.stp:2:[0-9]+\$" -- "$UKSTAP" -p3 "$T_TMP/ifs501.stp"
# A long chain as generated scripts write them (a sum of 900 terms) is no nesting.
t "900-term chain translates" 0 '*' '' -- "$UKSTAP" -p3 "$T_TMP/chain900.stp"
# 60 nested constant ternaries: 2^60 walks before folded ternaries were walked once.
t "60 folded ternaries translate at once" 0 '*' '' -- timeout 20 "$UKSTAP" -p3 "$T_TMP/folded60.stp"

if t_require_root; then
  export XDG_CACHE_HOME=$T_TMP/cache
  # In a kernel probe, where clang compiles the expression for BPF: x = 241 * pid, built as
  # (y+(y+(...))) 240 deep (two levels each), and 480 nested ifs.
  gen 'print("probe kernel.trace(\"syscalls:sys_enter_execve\") { if (pid() == target()) { y = pid(); x = " + "(y+" * 240 + "y" + ")" * 240 + "\n" + "if (y) " * 480 + "z = 7\nprintf(\"%d %d %d\\n\", x, y, z) } }")' kdeep.stp
  t "deep expression and statements in a kernel probe run" 0 '*' '' \
    -- sh -c "timeout 300 '$UKSTAP' -c /bin/true '$T_TMP/kdeep.stp' > '$T_TMP/kdeep.out'"
  read -r x y z < "$T_TMP/kdeep.out"
  t "the kernel computed 241 * pid and took 480 ifs" 0 "$((241 * y)) $y 7$NL" '' -- cat "$T_TMP/kdeep.out"
fi
t_done
