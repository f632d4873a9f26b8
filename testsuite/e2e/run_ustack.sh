#!/bin/bash
# User backtraces and symbols (issue 4: task finder, VMA tracker, symbolizer; frame-pointer walk
# until the DWARF unwinder lands).
#
# Truth comes from outside ukstap: the traced program's own libunwind backtrace and
# /proc/self/maps lines (testsuite/e2e/progs/ustack_prog.c), readelf's symbol tables and program
# headers (ustack_check.py). The programs keep frame pointers, leaves included
# (-mno-omit-leaf-frame-pointer): the frame-pointer walk then gives every frame. Root only; under CI=true not being root is a failure, never a skip.
# e2e-schedule: first (run-e2e.sh): one of the longest scripts (15 CPU s, 2026-11-26).
. "$(dirname "$0")/../e2e-lib.sh"
NL=$'\n'
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
# This file tests the frame-pointer walk (the fallback for code without unwind tables) and the
# symbolizer; run_dwarf.sh tests the DWARF walk.
export UKSTAP_NO_UNWIND_TABLES=1
CHECK="python3 $UKSTAP_TOP_SRCDIR/testsuite/e2e/ustack_check.py"
PROGS="$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs"

# runp NAME PROG_OUT CMD...: CMD's stdout (the traced program's own record) into PROG_OUT; a
# check that it exited 0 with nothing on stderr.
runp() {
  local name=$1 out=$2; shift 2
  "$@" > "$out" 2> "$out.err"
  local rc=$?
  t "$name" 0 '' '' -- bash -c "cat '$out.err' >&2; exit $rc"
}

P="$T_TMP/ustack_prog" L="$T_TMP/libustack.so"
t_build "the test programs" gcc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls -o "$P" "$PROGS/ustack_prog.c" \
       -lunwind -ldl -lpthread &&
  t_build "the test programs" gcc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls -fPIC -shared -o "$L" \
       "$PROGS/ustack_lib.c" || { t_done; exit; }

# --- a 12-deep chain: every frame up to main's caller, as libunwind saw it -----------------
GETPPID='probe syscall.getppid { if (pid() == target()) print_ubacktrace() }'
runp "chain: run" "$T_TMP/chain.prog" "$UKSTAP" -o "$T_TMP/chain.out" -e "$GETPPID" -c "$P chain"
t "chain: frames = libunwind's, symbols = readelf's" 0 '' '' -- \
  $CHECK chain "$T_TMP/chain.out" "$T_TMP/chain.prog" "$P" chain_12 main
t "chain: the leaf frame is exact, the frame-pointer frames inexact" 0 '' '' -- \
  bash -c "head -1 '$T_TMP/chain.out' | grep -v -q inexact && sed -n 2p '$T_TMP/chain.out' | grep -q ' (inexact)\$'"

# --- a thread: its own stack, resolved through its process ---------------------------------
runp "threads: run" "$T_TMP/thr.prog" "$UKSTAP" -o "$T_TMP/thr.out" -e "$GETPPID" -c "$P threads"
t "threads: frames = libunwind's up to thread_main's caller" 0 '' '' -- \
  $CHECK chain "$T_TMP/thr.out" "$T_TMP/thr.prog" "$P" chain_12 thread_main

# --- a stripped binary: its functions are named after their FDEs (sub_<start>) -------------
S="$T_TMP/ustack_stripped"
cp "$P" "$S" && strip --strip-all "$S"
runp "stripped: run" "$T_TMP/st.prog" "$UKSTAP" -o "$T_TMP/st.out" -e "$GETPPID" -c "$S chain"
t "stripped: frames = libunwind's; sub_<start> = the unstripped twin's function starts" 0 '' '' -- \
  $CHECK stripped "$T_TMP/st.out" "$T_TMP/st.prog" "$P" chain_12 main
t "stripped: no function is named after the symbol before it" 0 '' '' -- \
  bash -c "! grep -q ' : _init+\|: _start+\|: _fini+' '$T_TMP/st.out'"

# --- fork + exec: the exec'd child is not the -c target; its stack still symbolizes --------
runp "forkexec: run" "$T_TMP/fe.prog" "$UKSTAP" -o "$T_TMP/fe.out" \
  -e 'probe syscall.getppid { if (execname() == "ustack_prog") print_ubacktrace() }' \
  -c "$P forkexec"
t "forkexec: the exec'd child's frames = libunwind's" 0 '' '' -- \
  $CHECK chain "$T_TMP/fe.out" "$T_TMP/fe.prog" "$P" chain_12 main

# --- dlopen: a library mapped after the run started --------------------------------------
runp "dlopen: run" "$T_TMP/dl.prog" "$UKSTAP" -o "$T_TMP/dl.out" -e "$GETPPID" -c "$P dlopen $L"
t "dlopen: frames in the dlopen'd library = libunwind's and readelf's" 0 '' '' -- \
  $CHECK chain "$T_TMP/dl.out" "$T_TMP/dl.prog" "$L" lib_inner main

# --- short-lived processes: both ls runs have exited long before their stacks are printed ---
# Only the -c shell's ls processes (its children, or the shell itself had it exec'd the last
# one): other scripts of the pool list directories with ls meanwhile (an `ls /` loop beside
# this run made it count 3 processes in 2 of 3 runs).
runp "sh -c 'ls /; ls /': run" "$T_TMP/ls.prog" "$UKSTAP" -o "$T_TMP/ls.out" \
  -e 'probe syscall.getdents { if (execname() == "ls" && (ppid() == target() || pid() == target())) {
        printf("== %d\n", pid()); print_ubacktrace() } }' \
  -c 'sh -c "ls / > /dev/null; ls / > /dev/null"'
t "ls: two processes traced" 0 $'2\n' '' -- bash -c "grep '^== ' '$T_TMP/ls.out' | sort -u | wc -l"
t "ls: every stack starts in libc's getdents" 0 '' '' -- bash -c "
  n=\$(grep -c '^== ' '$T_TMP/ls.out')
  m=\$(grep -A1 '^== ' '$T_TMP/ls.out' | grep -cE '^ 0x[0-9a-f]+ : [_A-Za-z]*getdents[0-9]*\+0x[0-9a-f]+/0x[0-9a-f]+ \[/[^]]*libc\.so\.6\]\$')
  [ \"\$n\" -gt 0 ] && [ \"\$n\" = \"\$m\" ] || { echo \"\$m of \$n\"; exit 1; }"
t "ls: every printed frame has a symbol" 0 '' '' -- $CHECK symbols "$T_TMP/ls.out"

# --- a mapping replaced at the same address between two events -----------------------------
cp "$L" "$T_TMP/liba.so"; cp "$L" "$T_TMP/libb.so"
runp "remap: run" "$T_TMP/remap.prog" "$UKSTAP" -o "$T_TMP/remap.out" \
  -e 'probe syscall.madvise { if (pid() == target()) printf("%s|%s\n", umodname(start), usymdata(start)) }' \
  -c "$P remap $T_TMP/liba.so $T_TMP/libb.so"
t "remap: each event resolves against the file it saw (maps: A then B)" 0 '' '' -- bash -c "
  awk '/^map:/ {print \$NF}' '$T_TMP/remap.prog' > '$T_TMP/remap.want'
  cut -d'|' -f1 '$T_TMP/remap.out' > '$T_TMP/remap.got'
  diff '$T_TMP/remap.want' '$T_TMP/remap.got' && [ \$(wc -l < '$T_TMP/remap.got') = 2 ]"
t "remap: usymdata of a mapped file's header: 0xADDR [PATH+0x0/0x1000]" 0 '' '' -- bash -c "
  cut -d'|' -f2 '$T_TMP/remap.out' | grep -cxE '0x5e0000000000 \[$T_TMP/lib[ab]\.so\+0x0/0x1000\]' | grep -qx 2"

# --- script functions: usymname/usymdata/umodname/ubacktrace/sprint_ubacktrace/print_ustack --
runp "symbol functions: run" "$T_TMP/fn.prog" "$UKSTAP" -o "$T_TMP/fn.out" -DMAXSTRINGLEN=1024 -e '
  global u, s
  probe syscall.getppid { if (pid() == target()) {
    println("== print"); print_ubacktrace()
    printf("== names\n%s|%s|%s\n", usymname(uaddr()), usymdata(uaddr()), umodname(uaddr()))
    u = ubacktrace(); s = sprint_ubacktrace()
    printf("== hex\n%s\n== simple\n%s", u, s)
  } }
  probe end { println("== ustack"); print_ustack(u); printf("== sustack\n%s", sprint_ustack(u)) }' \
  -c "$P chain"
sect() { awk -v s="== $2" '$0 == s {on=1; next} /^== / {on=0} on' "$T_TMP/$1"; }
sect fn.out print > "$T_TMP/fn.print"
t "usymname/usymdata/umodname = the first frame of print_ubacktrace" 0 '' '' -- bash -c "
  read -r pc _ sym mod < <(head -1 '$T_TMP/fn.print')
  want=\"\${sym%%+*}|\$sym \$mod|\${mod:1:-1}\"
  got=\$(sed -n 2p <(sed -n '/^== names/,\$p' '$T_TMP/fn.out'))
  [ \"\$got\" = \"\$want\" ] || { echo \"got  \$got\"; echo \"want \$want\"; exit 1; }"
# (print_ubacktrace ends a stack cut short with "<user stack cut short: REASON>": no frame, and
# not in ubacktrace()'s hex list, which has no room for it.)
t "ubacktrace() = the addresses of print_ubacktrace" 0 '' '' -- bash -c "
  diff <(awk '/^ 0x/ {print \$1}' '$T_TMP/fn.print' | tr '\n' ' '; echo) <(sed -n '/^== hex/{n;p}' '$T_TMP/fn.out')"
t "sprint_ubacktrace() = SYM+0xOFF [basename] per frame" 0 '' '' -- bash -c "
  diff <(sed -E 's/^ 0x[0-9a-f]+ : ([^ ]+)\/0x[0-9a-f]+ \[(.*\/)?([^]/]+)\]( \(inexact\))?\$/\1 [\3]/' '$T_TMP/fn.print') \
       <(awk '/^== simple/ {on=1; next} /^== / {on=0} on' '$T_TMP/fn.out')"
t "print_ustack(ubacktrace()) in an end probe = print_ubacktrace (the exited target's maps)" 0 '' '' -- bash -c "
  diff <(sed '/^</d; s/ (inexact)\$//' '$T_TMP/fn.print') <(awk '/^== ustack/ {on=1; next} /^== / {on=0} on' '$T_TMP/fn.out')"
t "sprint_ustack(ubacktrace()) = sprint_ubacktrace()" 0 '' '' -- bash -c "
  diff <(awk '/^== simple/ {on=1; next} /^== / {on=0} on && !/^</' '$T_TMP/fn.out') \
       <(awk '/^== sustack/ {on=1; next} /^== / {on=0} on' '$T_TMP/fn.out')"

# --- equal stacks give equal sprint_ubacktrace() strings (aggregation keys) ---------------
runp "sprint_ubacktrace() as an array key: run" "$T_TMP/agg.prog" "$UKSTAP" -o "$T_TMP/agg.out" \
  -e 'global n; probe syscall.getppid { if (pid() == target()) n[sprint_ubacktrace()]++ }
      probe end { foreach (k in n) printf("%d\n", n[k]) }' -c "$P chain 3"
t "sprint_ubacktrace() as an array key groups equal stacks" 0 $'3\n' '' -- cat "$T_TMP/agg.out"

# --- the vDSO is a module like any other --------------------------------------------------
runp "vdso: run" "$T_TMP/vdso.prog" "$UKSTAP" -o "$T_TMP/vdso.out" \
  -e 'probe timer.profile { if (pid() == target() && user_mode()) printf("%s %s\n", umodname(uaddr()), usymname(uaddr())) }' \
  -c "$P vdso 1"
t "vdso: samples in [vdso] are named after a vDSO clock_gettime symbol" 0 '' '' -- bash -c "
  n=\$(grep -c '^\[vdso\] ' '$T_TMP/vdso.out'); m=\$(grep -cE '^\[vdso\] (__vdso_)?clock_gettime\$|^\[vdso\] do_hres' '$T_TMP/vdso.out')
  [ \"\$n\" -ge 10 ] && [ \"\$m\" -ge \$((n / 2)) ] || { echo \"\$m of \$n\"; head '$T_TMP/vdso.out'; exit 1; }"

# --- no user context: a kernel thread ------------------------------------------------------
# (Two CPUs' events may both run before exit() takes effect, as in SystemTap: one line each.)
t "kernel thread: <no user backtrace at PP>" 0 \
  $'<no user backtrace at kernel.trace("workqueue:workqueue_execute_start")>\n' '' -- \
  bash -c "'$UKSTAP' -T 10 -e 'probe kernel.trace(\"workqueue:workqueue_execute_start\") { print_ubacktrace(); exit() }' | uniq"
t "begin probe: <no user backtrace at begin>" 0 $'<no user backtrace at begin>\n' '' -- \
  "$UKSTAP" -e 'probe begin { print_ubacktrace(); exit() }'
t_done
