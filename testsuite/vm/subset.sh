#!/bin/bash
# The cases make check runs inside the 6.1 guest (testsuite/run-vm.sh boots one guest and runs
# this file there; sourced helpers: testsuite/e2e-lib.sh). To add a case: one `vt` line below,
# same arguments as e2e-lib's `t`. Each case prints its seconds ("--- NAME: N s").
# Two pairs of cases share one ukstap run ("Two cases, one run" below): "loop in a kernel-side
# probe" + "kernel.function(\"do_sys_openat2\") \$filename", and "print_ubacktrace() in a timer
# probe" + "uprobe process.function". The second of each reads the first one's output file, and
# only the first checks the run's stderr: a VM_XFAIL entry must name both cases of a pair.
#
# The guest's ukstap cache (XDG_CACHE_HOME, set by testsuite/vm/run to its state directory) is
# kept: a case's pass-4 objects, compiled once, are reused by the next make check while the
# generated C and the runtime are unchanged. So no case here sets XDG_CACHE_HOME. The compiles
# themselves run on the host (testsuite/run-vm.sh: testsuite/vm/host-compile and
# compile-server; under TCG a compile took 12-46 s), so a cold cache (CI) costs seconds.
#
# Inputs (testsuite/run-vm.sh, through the T_* variables the bed passes): T_VM_SPLIT, the built
# testsuite/e2e/progs/split_prog.c (main -> work -> spin_a 75% / spin_b 25% -> burn).
. "$(dirname "$0")/../e2e-lib.sh"

# ------------------------------------------------------------------------- expected failures
# THE place for cases that fail on 6.1 today because of a known gap, until the named work lands
# (issue 16). e2e-lib's t_xfail: the failure counts as passed; a pass ("XPASS") counts as failed
# so that the line here is removed with the gap.
# None today: loops (bpf_loop), --profile -c (no $group_dead), the user-stack walk (6.1's verifier)
# and kernel.function landed on 2026-11-26.
# Cases sharing one run (see the header): list both or neither.
declare -A VM_XFAIL=()

vt() {  # vt NAME ...: e2e-lib's t, or t_xfail when NAME is listed above; prints its seconds
  local name=$1 t0=$SECONDS
  if [ -n "${VM_XFAIL[$name]:-}" ]; then t_xfail "${VM_XFAIL[$name]}" "$@"; else t "$@"; fi
  echo "--- $name: $((SECONDS - t0)) s"
}

S=${T_VM_SPLIT:?T_VM_SPLIT: the built split_prog (testsuite/run-vm.sh builds it)}

# ------------------------------------------------------------------------------- the cases
# Two cases, one run of ukstap (a run under TCG is seconds of make check: passes 1-3, the
# compile's round trip, the load): a loop in a kernel-side probe, and kernel.function's $filename.
# Truths: the sum 0+1+...+9; the path cat is given is the file name it opens (strace shows the
# same openat). $filename is a user pointer (const char __user *): user_string, as in SystemTap.
# (kernel.function: the default mechanism, fentry/fexit; the kprobe case is further down.)
KO='global done
probe syscall.openat { if (pid() == target() && !done) { done = 1; s = 0; for (i = 0; i < 10; i++) s += i; printf("loop %d\n", s) } }
probe kernel.function("do_sys_openat2") { if (pid() == target()) printf("file %s\n", user_string($filename)) }'
vt "loop in a kernel-side probe" 0 $'loop 45\n' '' -- bash -c '"$UKSTAP" -c "cat /etc/hostname" -e "$1" > "$2" || exit; grep "^loop " "$2"' \
  _ "$KO" "$T_TMP/ko.out"
vt "kernel.function(\"do_sys_openat2\") \$filename" 0 '~^file /etc/hostname$' '' -- cat "$T_TMP/ko.out"

# Numbers formatted in the kernel (sprintf, argstr) on 6.1's verifier: the branch-free
# stp_bpf_sfmt_num (runtime/common/stp_format.h). Truths: C's printf of the same conversions
# (z is 0 at run time, so nothing is folded before the probe runs), and the openat line strace
# prints for `cat /etc/hostname`: openat(AT_FDCWD, "/etc/hostname", O_RDONLY).
NUM='probe syscall.openat { if (pid() == target() && user_string($filename, "") == "/etc/hostname") {
  z = pid() - pid(); println(argstr)
  println(sprintf("%d %#o %09d %-4x| %+d %5u", z - 5, z + 8, z + 42, z + 10, z + 3, z + 7)); exit() } }'
vt "sprintf and argstr numbers in a kernel-side probe" 0 \
  $'AT_FDCWD, "/etc/hostname", O_RDONLY\n-5 010 000000042 a   | +3     7\n' '' -- \
  bash -c '"$UKSTAP" -o "$2" -c "cat /etc/hostname" -e "$1" > /dev/null && cat "$2"' _ "$NUM" "$T_TMP/num.out"

# Truth: ls reads a directory through libc's readdir64, which makes the getdents64 call.
vt "print_ubacktrace() in a syscall probe" 0 '~^ 0x[0-9a-f]+ : __readdir64\+0x[0-9a-f]+/0x[0-9a-f]+ \[.*/libc\.so\.6\]$' '' -- \
  "$UKSTAP" -c 'ls /' -e 'probe syscall.getdents { if (pid() == target()) { print_ubacktrace(); exit() } }'

# Two cases, one run on split_prog: print_ubacktrace() in a timer probe, and uprobes.
# Truths: split_prog's call graph (burn <- spin_a|spin_b <- work <- main): every sample in burn
# has it, and there are at least 20 (the others are the -c child's before its exec and ld.so's:
# many under TCG, where start-up is slow; and at the uprobes' breakpoints); split_prog calls
# spin_b once per work(): the two counts are equal, and not zero.
vt "print_ubacktrace() in a timer probe" 0 '*' '' -- bash -c '
  "$UKSTAP" -c "$1 0.5" -e "global w, b
    probe timer.profile { if (pid() == target()) { println(\"==\"); print_ubacktrace() } }
    probe process(\"$1\").function(\"work\") { w++ } probe process(\"$1\").function(\"spin_b\") { b++ }
    probe end { printf(\"equal %d some %d\n\", w == b, b > 0) }" > "$2" || exit
  awk "/^==/ {b = s = w = 0; next}
       / : burn\\+/ {nb++; b = 1; next} b == 1 && / : spin_[ab]\\+/ {b = 2; next} b == 2 && / : work\\+/ {b = 3; next}
       b == 3 && / : main\\+/ {ok++} {b = 0}
       END {print ok + 0, \"of\", nb + 0, \"samples in burn have the chain\"; exit !(ok >= 20 && ok == nb)}" "$2" ||
    { head -n 30 "$2"; exit 1; }' \
  _ "$S" "$T_TMP/ubt.out"
vt "uprobe process.function" 0 $'equal 1 some 1\n' '' -- grep '^equal ' "$T_TMP/ubt.out"

# Truth: split_prog's call graph, in the folded stacks of a system-wide profile taken while it runs.
# (stderr: the profile's warnings of cut-short stacks and lost side-band records vary with the load)
# split_prog runs before ukstap starts (its mappings come from /proc, not from its exec), stopped
# (SIGSTOP) until ukstap -v says the sampling is on ("Pass 5: started", read from a fifo), then
# for the -T 2 s: under TCG ukstap's start-up takes seconds, which split_prog spent spinning on
# the guest's other CPU.
vt "--profile, system-wide" 0 '' '*' -- bash -c '
  "$1" 600 & p=$!
  exec {never}<> <(:)
  for i in $(seq 600); do [ "$(readlink /proc/$p/exe)" = "$1" ] && break; read -r -t 0.05 -u $never _; done
  kill -STOP $p
  mkfifo "$3"
  "$UKSTAP" -v --profile=499 -T 2 -o "$2" 2> "$3" & u=$!
  exec {err}< "$3"
  while IFS= read -r -u $err l; do echo "$l" >> "$3.log"; [[ $l == "Pass 5: started"* ]] && break; done
  kill -CONT $p
  cat <&$err >> "$3.log"
  wait $u; rc=$?; kill $p
  [ $rc = 0 ] && grep -Eq "^split_prog;.*;main;work;spin_[ab];burn [0-9]+$" "$2" || { head -n 5 "$2"; cat "$3.log" >&2; exit 1; }' \
  _ "$S" "$T_TMP/sys.folded" "$T_TMP/sys.fifo"

# Truth: split_prog's call graph, in the folded stacks of its own -c run.
vt "--profile -c" 0 '' '*' -- bash -c '
  "$UKSTAP" --profile=499 -o "$2" -c "$1 0.3" || exit
  grep -Eq "^split_prog;_start;.*;main;work;spin_[ab];burn [0-9]+$" "$2" || { head -n 5 "$2"; exit 1; }' \
  _ "$S" "$T_TMP/c.folded"

# kprobe/kretprobe (forced: the default is fentry/fexit, the case above), a member chain from a
# typed argument, @entry() of an argument and $return. Truth: cat reads /etc/hostname whole, then
# reads 0 bytes (end of file): the sizes stat gives and 0.
vt "kernel.function(\"vfs_read\").return by kprobe: \$return, @entry(\$count), \$file->...->name" 0 \
  "$(stat -c %s /etc/hostname)"$'\n0\n' '' -- "$UKSTAP" -D KERNEL_FUNCTION_MECHANISM=kprobe -c 'cat /etc/hostname' -o /dev/stdout -e '
  probe kernel.function("vfs_read").return {
    if (pid() == target() && @entry($count) > 0 && kernel_string(@entry($file->f_path->dentry->d_name->name)) == "hostname")
      println($return)
  }'

# Truth: the tracefs stacktrace trigger of the same syscalls:sys_enter_getppid event (6.1's
# syscalls:* perf-event tracepoint had no kernel stack: backtrace() was empty there).
vt "print_backtrace() in a syscall probe = tracefs's stack of the event" 0 '*' '' -- \
  env UKSTAP_TEST_CACHE="${XDG_CACHE_HOME:-$T_TMP/cache}" UKSTAP_KSTACK_SYSCALL_ONE_RUN=1 \
  bash "$(dirname "$0")/../e2e/run_kstack_syscall.sh"

t_done
