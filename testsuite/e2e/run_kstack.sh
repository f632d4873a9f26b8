#!/bin/bash
# Kernel backtraces and symbols (context-unwind.stp), and stacks aggregated in the kernel
# (stackid.stp: ustack_id/kstack_id).
#
# Truth comes from outside ukstap: /proc/kallsyms read by kstack_check.py (every kernel frame's
# symbol, offset and size), the kernel's syscall entry path, the traced program's own record of
# how many calls it made from where (testsuite/e2e/progs/kstack_prog.c), and print_ubacktrace()
# of the same events. Root only; under CI=true not being root is a failure, never a skip.
# e2e-schedule: first (run-e2e.sh): one of the longest scripts.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
CHECK="python3 $UKSTAP_TOP_SRCDIR/testsuite/e2e/kstack_check.py"
P="$T_TMP/kstack_prog"
t_build "the test program" gcc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -o "$P" \
       "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/kstack_prog.c" || { t_done; exit; }

# runp NAME PROG_OUT CMD...: CMD's stdout (the traced program's own record) into PROG_OUT; a
# check that it exited 0 with nothing on stderr.
runp() {
  local name=$1 out=$2; shift 2
  "$@" > "$out" 2> "$out.err"
  local rc=$?
  t "$name" 0 '' '' -- bash -c "cat '$out.err' >&2; exit $rc"
}
sect() { awk -v s="== $2" '$0 == s {on=1; next} /^== / {on=0} on' "$T_TMP/$1"; }

# --- syscall.getdents: every frame is a real kernel function, the syscall entry path included -
runp "getdents: run" "$T_TMP/gd.prog" "$UKSTAP" -o "$T_TMP/gd.out" -DMAXSTRINGLEN=1024 -e '
  global bt
  probe syscall.getdents { if (pid() == target() && bt == "") {
    println("== print"); print_backtrace()
    bt = backtrace()
    printf("== hex\n%s\n== simple\n%s", bt, sprint_backtrace())
    printf("== names\n%s|%s\n", symname(strtol(tokenize(bt, " "), 16)), symdata(strtol(tokenize(bt, " "), 16)))
    printf("== callers\n%s\n", callers(2))
    println("== syms"); print_syms(bt)
  } }
  probe end { println("== stack"); print_stack(bt); printf("== sstack\n%s", sprint_stack(bt)) }' \
  -c "ls /"
sect gd.out print > "$T_TMP/gd.print"
t "getdents: kernel frames = /proc/kallsyms symbols (name, offset, size), via do_syscall_64 and entry_SYSCALL_64" 0 '' '' -- \
  $CHECK frames "$T_TMP/gd.print" 'do_syscall_64' 'entry_SYSCALL_64.*'
t "getdents: at least 3 frames, all [kernel]" 0 '' '' -- bash -c "
  n=\$(grep -c ' \[kernel\]\$' '$T_TMP/gd.print'); m=\$(wc -l < '$T_TMP/gd.print')
  [ \"\$n\" -ge 3 ] && [ \"\$n\" = \"\$m\" ] || { echo \"\$n of \$m\"; cat '$T_TMP/gd.print'; exit 1; }"
# Syscall probes behind the dispatcher (raw sys_enter/sys_exit): the stack starts where the
# syscall path does, without the tracing glue (the BPF program, bpf_trace_run*, __bpf_trace_*,
# and with two programs on the tracepoint __traceiter_*). Names from /proc/kallsyms.
for two in 0 1; do
  extra=$([ $two = 1 ] && echo 'probe syscall.getppid, syscall.getppid.return { }')
  t "dispatched syscall probes ($((two + 1)) per syscall): enter/exit stacks start at syscall_trace_enter/syscall_exit_work" 0 '' '' -- bash -c "
    '$UKSTAP' -D STP_SYSCALL_DISPATCH=1 -e 'global e, x
      probe syscall.getppid { if (pid() == target() && !e) { e = 1; println(\"== enter\"); print_backtrace() } }
      probe syscall.getppid.return { if (pid() == target() && !x) { x = 1; println(\"== exit\"); print_backtrace() } }
      $extra' -c '$P sites 1 0' -o '$T_TMP/disp$two.out' > /dev/null || exit 1
    awk '/^== enter/ {getline; e = \$3} /^== exit/ {getline; x = \$3}
         /__traceiter_|bpf_trace_run|__bpf_trace_|bpf_prog_/ {bad = 1}
         END {exit !(e ~ /^syscall_trace_enter\+/ && x ~ /^syscall_exit_work\+/ && !bad)}' '$T_TMP/disp$two.out' ||
      { cat '$T_TMP/disp$two.out'; exit 1; }"
done
t "backtrace() = the addresses of print_backtrace(), each followed by a space" 0 '' '' -- bash -c "
  diff <(awk '{printf \"%s \", \$1} END {print \"\"}' '$T_TMP/gd.print') <(awk '/^== hex/{getline; print}' '$T_TMP/gd.out')"
t "sprint_backtrace() = NAME+0xOFF [kernel] per frame" 0 '' '' -- bash -c "
  diff <(sed -E 's/^ 0x[0-9a-f]+ : ([^ ]+)\/0x[0-9a-f]+ (\[kernel\])\$/\1 \2/' '$T_TMP/gd.print') \
       <(awk '/^== simple/ {on=1; next} /^== / {on=0} on' '$T_TMP/gd.out')"
t "symname/symdata = the first frame" 0 '' '' -- bash -c "
  read -r pc _ sym mod < '$T_TMP/gd.print'
  want=\"\${sym%%+*}|\$sym \$mod\"
  got=\$(awk '/^== names/{getline; print}' '$T_TMP/gd.out')
  [ \"\$got\" = \"\$want\" ] || { echo \"got  \$got\"; echo \"want \$want\"; exit 1; }"
t "callers(2) = frames 2 and 3" 0 '' '' -- bash -c "
  diff <(awk 'NR == 2 || NR == 3 {printf \"%s \", \$1} END {print \"\"}' '$T_TMP/gd.print') <(awk '/^== callers/{getline; print}' '$T_TMP/gd.out')"
t "print_syms(backtrace()) = ' ADDR : symdata' per address" 0 '' '' -- bash -c "
  diff '$T_TMP/gd.print' <(awk '/^== syms/ {on=1; next} /^== / {on=0} on' '$T_TMP/gd.out')"
t "print_stack(backtrace()) in an end probe = print_backtrace()" 0 '' '' -- bash -c "
  diff '$T_TMP/gd.print' <(awk '/^== stack/ {on=1; next} /^== / {on=0} on' '$T_TMP/gd.out')"
t "sprint_stack(backtrace()) = sprint_backtrace()" 0 '' '' -- bash -c "
  diff <(awk '/^== simple/ {on=1; next} /^== / {on=0} on' '$T_TMP/gd.out') \
       <(awk '/^== sstack/ {on=1; next} /^== / {on=0} on' '$T_TMP/gd.out')"

# --- inside a foreach of a kernel probe (its callback gets the program context) --------------
t "backtrace() in a function called from a foreach body in a kernel probe = backtrace() outside" 0 '*' $'same\n' -- \
  "$UKSTAP" -e 'global a, x, y; function f() { return backtrace() }
    probe syscall.getppid { if (pid() == target()) { a[1] = 1; foreach (k in a) x = f(); y = backtrace() } }
    probe end { println(x == y && x != "" ? "same" : x . "|" . y) }' -c "$P sites 1 0" -o /dev/stderr

# --- equal kernel stacks give equal sprint_backtrace() strings -----------------------------
runp "sprint_backtrace() as an array key: run" "$T_TMP/agg.prog" "$UKSTAP" -o "$T_TMP/agg.out" \
  -e 'global n; probe syscall.getppid { if (pid() == target()) n[sprint_backtrace()]++ }
      probe end { foreach (k in n) printf("%d\n", n[k]) }' -c "$P sites 5 7"
t "sprint_backtrace() as an array key groups equal stacks (12 getppid calls, one kernel path)" 0 $'12\n' '' -- \
  cat "$T_TMP/agg.out"

# --- timer.profile: kernel and user stacks of one sample -----------------------------------
runp "profile: run" "$T_TMP/prof.prog" "$UKSTAP" -o "$T_TMP/prof.out" \
  -e 'probe timer.profile { if (pid() == target()) { printf("== %d\n", user_mode()); print_backtrace(); print_ubacktrace() } }' \
  -c "$P mixed 1500"
t "profile: user-mode samples print <no kernel backtrace at timer.profile> then the user stack; kernel-mode ones kernel frames (kallsyms) down to the entry point, then the user stack" 0 '' '' -- \
  $CHECK profile "$T_TMP/prof.out"

# --- stacks aggregated in the kernel: ustack_id()/kstack_id() ------------------------------
runp "stack ids: run" "$T_TMP/ids.prog" "$UKSTAP" -o "$T_TMP/ids.out" -e '
  global u, k, seen
  probe syscall.getppid { if (pid() == target()) {
    id = ustack_id(); u[id] <<< 1; k[kstack_id()] <<< 1
    if (!(id in seen)) { seen[id] = 1; println("== first"); print_ubacktrace() }
  } }
  probe end {
    foreach (i in u-) { println("== byid"); print_ustack_id(i); printf("== count\n%d\n", @count(u[i])) }
    foreach (i in k-) { printf("== kid\n%s== kcount\n%d\n", sprint_kstack_id(i), @count(k[i])) }
    foreach (i in u- limit 1) printf("== sid\n%s", sprint_ustack_id(i))
  }' -c "$P sites 30 20"
t "ustack_id: one id per call site, counted in the kernel as the program counted" 0 $'30\n20\n' '' -- \
  bash -c "awk '/^== count/{getline; print}' '$T_TMP/ids.out'"
t "print_ustack_id(id) at end = print_ubacktrace() of the id's first event (the program has exited)" 0 '' '' -- bash -c "
  sort <(awk '/^== first/ {on=1; next} /^== / {on=0} on' '$T_TMP/ids.out') > '$T_TMP/ids.first'
  sort <(awk '/^== byid/ {on=1; next} /^== / {on=0} on' '$T_TMP/ids.out') > '$T_TMP/ids.byid'
  grep -q ' : site_a+' '$T_TMP/ids.byid' && grep -q ' : site_b+' '$T_TMP/ids.byid' && diff '$T_TMP/ids.first' '$T_TMP/ids.byid'"
t "ustack_id: the most frequent stack is site_a's" 0 '' '' -- bash -c "
  awk '/^== byid/ {n++; on=1; next} /^== / {on=0} on && n == 1' '$T_TMP/ids.out' | grep -q ' : site_a+'"
t "kstack_id: one kernel stack for all 50 calls, printed by sprint_kstack_id" 0 '' '' -- bash -c "
  [ \"\$(awk '/^== kcount/{getline; print}' '$T_TMP/ids.out')\" = 50 ] &&
  awk '/^== kid/ {on=1; next} /^== / {on=0} on' '$T_TMP/ids.out' | grep -qx 'do_syscall_64+0x[0-9a-f]* \[kernel\]'"
t "sprint_ustack_id(id) = NAME+0xOFF [basename] per frame" 0 '' '' -- bash -c "
  diff <(awk '/^== byid/ {n++; on=1; next} /^== / {on=0} on && n == 1' '$T_TMP/ids.out' | sed -E 's/^ 0x[0-9a-f]+ : ([^ ]+)\/0x[0-9a-f]+ \[(.*\/)?([^]/]+)\]( \(inexact\))?\$/\1 [\3]/') \
       <(awk '/^== sid/ {on=1; next} /^== / {on=0} on' '$T_TMP/ids.out')"

# --- a profile aggregated both ways: ubacktrace() strings (stap's way) and ustack_id() -------
runp "profile aggregation: run" "$T_TMP/pa.prog" "$UKSTAP" -o "$T_TMP/pa.out" -DMAXSTRINGLEN=2048 -e '
  global s, u, n
  probe timer.profile { if (pid() == target() && user_mode()) { s[ubacktrace()] <<< 1; u[ustack_id()] <<< 1; n++ } }
  probe end {
    foreach (k in s-) { println("== stack"); print_ustack(k); printf("== count %d\n", @count(s[k])) }
    foreach (i in u-) { println("== stack"); print_ustack_id(i); printf("== count %d\n", @count(u[i])) }
    printf("== samples %d\n", n)
  }' -c "$P mixed 1500"
t "profile aggregation: s[ubacktrace()] and u[ustack_id()] give the same stacks and counts, summing to the samples" 0 '' '' -- \
  $CHECK pairs "$T_TMP/pa.out"

# --- a full stack-id map: the id is counted, its stack is lost, ukstap says so -------------
t "MAXSTACKS=1: the second stack is not stored, one warning at exit" 0 \
  '~^<unknown stack id 0x[0-9a-f]+>$' \
  '~^WARNING: 1 stacks were not stored: a stack-id map is full \(raise -D MAXSTACKS=N\)$' -- \
  "$UKSTAP" -DMAXSTACKS=1 -e 'global u; probe syscall.getppid { if (pid() == target()) u[ustack_id()] <<< 1 }
    probe end { foreach (i in u) print_ustack_id(i) }' -c "$P sites 1 1"

# --- no kernel stack: begin probes; hidden kernel addresses ---------------------------------
t "begin probe: <no kernel backtrace at begin>, backtrace() is a newline" 0 \
  $'<no kernel backtrace at begin>\n[\n]\n' '' -- \
  "$UKSTAP" -e 'probe begin { print_backtrace(); printf("[%s]\n", backtrace()); exit() }'
# Without symbols the tracing frames above a dispatched syscall probe's stack (bpf_trace_run2,
# __bpf_trace_sys_enter: recognised by their kallsyms ranges) stay on top: said once on stderr.
# Truth for the frames: the real /proc/kallsyms, read here.
printf '0000000000000000 T _text\n0000000000000000 T do_syscall_64\n' > "$T_TMP/hidden"
t "kallsyms with zero addresses (kptr_restrict): one warning, hex frames, one about the tracing frames" 0 '*' \
  $'WARNING: kernel symbol addresses are hidden (/proc/kallsyms shows zeros; kernel.kptr_restrict = '"$(cat /proc/sys/kernel/kptr_restrict)"$'): kernel addresses are printed in hex\nWARNING: without kernel symbols the kernel\'s tracing frames cannot be recognised: a syscall probe\'s kernel backtrace starts with them (bpf_trace_run2, __bpf_trace_sys_enter/exit)\n' -- \
  env UKSTAP_KALLSYMS="$T_TMP/hidden" "$UKSTAP" -o "$T_TMP/hidden.out" -e 'global n; probe syscall.getppid { if (pid() == target() && !n++) print_backtrace() }' -c "$P sites 1 0"
t "... those top frames are in bpf_trace_run2 / __bpf_trace_sys_enter (/proc/kallsyms), the next is not" 0 '~^ok [1-3] tracing frames$' '' -- \
  python3 -c '
import sys
syms = sorted((int(a, 16), n) for a, t, n, *_ in (l.split() for l in open("/proc/kallsyms")) if t in "tT")
def name(pc):
    lo, hi = 0, len(syms)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if syms[mid][0] <= pc else (lo, mid)
    return syms[lo][1]
names = [name(int(l.split()[0], 16) - 1) for l in open(sys.argv[1]) if l.startswith(" 0x")]
glue = ("bpf_trace_run2", "__bpf_trace_sys_enter", "__traceiter_sys_enter")
k = 0
while k < len(names) and names[k] in glue:
    k += 1
if not 1 <= k < len(names) or names[k] in glue:
    sys.exit("frames: %s" % names)
print("ok %d tracing frames" % k)' "$T_TMP/hidden.out"
t_done
