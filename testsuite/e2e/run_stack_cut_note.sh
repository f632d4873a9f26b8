#!/bin/bash
# A user stack cut short ends with a line that says why (issue 17; loader/stack_cut_note.h);
# a complete one does not. The exit warning puts each count before its reason.
#
# Truth: MAXBACKTRACE's documented meaning (SystemTap: at most that many frames) on a program
# whose whole stack is known: progs/cxx_names.cpp's getppid() is called by syscall() in spin(),
# from operator(), main, ... _start (nm names them; the default run must reach _start).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
X="$T_TMP/cxx_names"
t_build cxx_names g++ -O2 -o "$X" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/cxx_names.cpp" || { t_done; exit; }
NL=$'\n'
SCRIPT='probe syscall.getppid { if (pid() == target()) { print_ubacktrace(); print("--\n"); print(sprint_ubacktrace()); print("--\n") } }'
NOTE='<user stack cut short: depth limit (MAXBACKTRACE)>'

t "complete stack: run" 0 '' '' -- "$UKSTAP" -o "$T_TMP/full.out" -c "$X 0" -e "$SCRIPT"
t "complete stack: ends at _start, no note" 0 '' '' -- bash -c "
  awk '/^--/ {print last} {last = \$0}' '$T_TMP/full.out' > '$T_TMP/ends'
  grep -q '^ 0x[0-9a-f]* : _start+0x[0-9a-f]*/0x[0-9a-f]* \[$X\]\$' '$T_TMP/ends' && grep -q '^_start+0x[0-9a-f]* \[cxx_names\]\$' '$T_TMP/ends' &&
  ! grep -q '^<' '$T_TMP/full.out' || { cat '$T_TMP/full.out'; exit 1; }"
t "-D MAXBACKTRACE=3: run; the exit warning counts before the reason" 0 '' \
  "WARNING: 2 of 2 user stacks were cut short: 2 depth limit (MAXBACKTRACE) (rerun with -v)$NL" -- \
  "$UKSTAP" -D MAXBACKTRACE=3 -o "$T_TMP/cut.out" -c "$X 0" -e "$SCRIPT"
t "-D MAXBACKTRACE=3: print_ubacktrace and sprint_ubacktrace: the first 3 frames, then the note" 0 '' '' -- bash -c "
  head -n 3 '$T_TMP/full.out' > '$T_TMP/want'; echo '$NOTE' >> '$T_TMP/want'; echo -- >> '$T_TMP/want'
  sed -n '/^--/,\$p' '$T_TMP/full.out' | sed -n '2,4p' >> '$T_TMP/want'; echo '$NOTE' >> '$T_TMP/want'; echo -- >> '$T_TMP/want'
  sed 's/^ 0x[0-9a-f]* :/ ADDR :/' '$T_TMP/want' > '$T_TMP/want.n'; sed 's/^ 0x[0-9a-f]* :/ ADDR :/' '$T_TMP/cut.out' > '$T_TMP/got.n'
  cmp -s '$T_TMP/want.n' '$T_TMP/got.n' || { diff '$T_TMP/want.n' '$T_TMP/got.n'; exit 1; }"
t "-v: walks counted with the count first" 0 '' '~walks ended by: 1 depth limit \(MAXBACKTRACE\)$' -- \
  "$UKSTAP" -v -D MAXBACKTRACE=3 -o /dev/null -c "$X 0" -e 'probe syscall.getppid { if (pid() == target()) print_ubacktrace() }'
# --profile: a stack cut short is rooted at "[user stack cut short: REASON]" under its process
# (every stack cut for one reason under one box of the flame graph). MAXBACKTRACE=3 cuts every
# sample with spin() in it: its stack is at least 4 user frames deep (spin, operator(), dive,
# main, ...), so any 3 of them are cut.
t "--profile -D MAXBACKTRACE=3: every stack through spin starts with the cut-short frame" 0 '' '*' -- bash -c "
  '$UKSTAP' --profile=499 -D MAXBACKTRACE=3 -o '$T_TMP/cut.folded' -c '$X 0.4' &&
  awk '/^cxx_names;.*Spinner<3>::spin/ {n += \$NF; if (index(\$0, \"cxx_names;[user stack cut short: depth limit (MAXBACKTRACE)];\") == 1) ok += \$NF}
       END {exit !(n >= 20 && ok == n)}' '$T_TMP/cut.folded' || { cat '$T_TMP/cut.folded'; exit 1; }"
t_done
