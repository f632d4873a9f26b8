#!/bin/bash
# Code shared between probes (pass 4's cost, docs/DESIGN.md "Pass 4"): the runtime's prologue,
# epilogue, error and record functions are BPF subprograms every probe calls, and a script
# function called from two places or more with at most two levels of calls below it is one
# subprogram too (codegen/shared_functions.h) -- here execname(), ppid() and target(), each
# called from six entry and return probes. Truth: strace's record of the same command (the syscalls, their
# order, return values and error names), and SystemTap's documented error report for a probe
# that fails (error(): "ERROR: MSG", the script exits with status 1).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

missing=/nonexistent-ukstap-shared-$$
# strace runs cat under ukstap (same environment for both records: cat's locale files depend
# on it); the probes take cat's events (a child of the target, strace).
cmd="strace -qq -o $T_TMP/strace.out -e trace=openat,read,close -e signal=none cat /etc/hostname $missing"
script='
global n
function show(what, r) { printf("%s %s\n", what, r < 0 ? errno_str(-r) : sprint(r)) }
probe syscall.openat.return, syscall.read.return, syscall.close.return {
  if (ppid() == target() && execname() == "cat") show(name, retval)
}
probe syscall.openat, syscall.read, syscall.close {
  if (ppid() == target() && execname() == "cat") n[name]++
}
probe end { foreach (k+ in n) printf("entry %s %d\n", k, n[k]) }'
"$UKSTAP" -e "$script" -c "$cmd" > "$T_TMP/shared.out" 2> "$T_TMP/shared.err"
rc=$?
# "openat 3" / "openat ENOENT" / "read 12" / "close 0", from strace's `NAME(ARGS) = RET [ERR ...]`.
expected=$(sed -nE 's/^(openat|read|close)\(.*\) += (-1 ([A-Z0-9]+)|([0-9]+)).*/\1 \3\4/p' "$T_TMP/strace.out")
entries=$(printf '%s\n' "$expected" | awk '{ n[$1]++ } END { for (k in n) printf "entry %s %d\n", k, n[k] }' | sort)
# cat fails on the missing file (status 1, passed on by strace): ukstap says so, nothing else.
t shared_run_stderr 0 '' '' -- bash -c "[ $rc = 1 ] && ! grep -Ev '^(cat: $missing: No such file or directory|WARNING: Child process exited with status 1)\$' '$T_TMP/shared.err' >&2"
t shared_returns_as_strace 0 "$expected"$'\n' '' -- bash -c "grep -Ev '^entry ' '$T_TMP/shared.out' | grep -vxFf /etc/hostname"
# Each entry probe fired once per call strace saw.
t shared_entries_as_strace 0 "$entries"$'\n' '' -- bash -c "grep '^entry ' '$T_TMP/shared.out' | sort"

# An error in one of several probes: reported through the shared epilogue with its message,
# and the script stops with status 1 (SystemTap's error() with MAXERRORS 0).
"$UKSTAP" -e 'probe syscall.read, syscall.close, syscall.openat {
  if (pid() == target() && execname() == "cat") error("p4-shared-error") }' \
  -c "cat /etc/hostname" > /dev/null 2> "$T_TMP/shared.err2"
rc=$?
t shared_error_status 0 '' '' -- bash -c "[ $rc = 1 ] || { echo rc=$rc; cat '$T_TMP/shared.err2'; } >&2; [ $rc = 1 ]"
t shared_error_message 0 '' '' -- grep -q '^ERROR: p4-shared-error' "$T_TMP/shared.err2"
# Which functions are shared (pass 3's C): called from two places or more with at most two
# levels of calls below them (pid; show -> execname, once); not one called once (once,
# execname), not one with three levels below it (top), not embedded C that reads the kernel
# stack (print_backtrace, addr(): its stack would hold the subprogram's frame).
"$UKSTAP" -p3 -e 'function once() { return 1 }
function show(r) { printf("%s %d\n", execname(), r + once()) }
function l1() { return pid() } function l2() { return l1() } function top() { return l2() }
probe syscall.read, syscall.close { show(pid()); print_backtrace(); println(top()); println(addr()) }' > "$T_TMP/shared.c" 2> /dev/null
t shared_p3_functions 0 $'pid\nshow\n' '' -- bash -c "sed -nE 's/^STP_FN_SHARED void stp_fn_([a-z_0-9]+)\\(.*\\{\$/\\1/p' '$T_TMP/shared.c' | sort"
t_done
