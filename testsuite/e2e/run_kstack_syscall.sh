#!/bin/bash
# print_backtrace() in a syscall probe is the kernel's own stack of that event: the functions of
# the tracefs stacktrace trigger on the same syscalls:sys_enter_getppid event of the same
# process (in an instance of our own), below its first frame (the event's tracing function,
# ftrace_syscall_enter). On Debian 12's 6.1 the syscalls:* perf-event tracepoint gives BPF the
# user registers and backtrace() was empty; behind the syscall dispatcher a fixed count of glue
# frames cut syscall_trace_enter there. Root only; under CI=true not being root is a failure.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
TR=/sys/kernel/tracing
[ -d "$TR/instances" ] || TR=/sys/kernel/debug/tracing
I="$TR/instances/ukstap-kstack-$$"
mkdir "$I" || { t "tracefs instance" 0 '' '' -- false; t_done; exit; }
trap 'echo 0 > "$I/events/syscalls/sys_enter_getppid/enable"; echo "!stacktrace" > "$I/events/syscalls/sys_enter_getppid/trigger"; rmdir "$I"; rm -rf "$T_TMP"' EXIT

# The target sets the instance's filter to its own pid, then becomes perl (same pid).
TARGET="bash -c 'echo \"common_pid == \$\$\" > $I/events/syscalls/sys_enter_getppid/filter &&
  echo stacktrace > $I/events/syscalls/sys_enter_getppid/trigger &&
  echo 1 > $I/events/syscalls/sys_enter_getppid/enable && exec perl -e getppid'"
t "print_backtrace() in syscall.getppid: run" 0 '*' '' -- "$UKSTAP" -o "$T_TMP/bt.out" \
  -e 'global n; probe syscall.getppid { if (pid() == target() && !n++) print_backtrace() }' -c "$TARGET"
awk 's && !/^ => / {exit} /<stack trace>/ {s = 1; next} s {print $2}' "$I/trace" |
  sed 's/\.constprop\.[0-9]*$//; s/\.isra\.[0-9]*$//' | grep -v '^ftrace_syscall_enter$\|^__traceiter_sys_enter$' > "$T_TMP/tracefs.txt"
awk 'NR > 1 && !/^ 0x/ {exit} {print}' "$T_TMP/bt.out" | sed -n 's/^ 0x[0-9a-f]* : \([^+]*\)+.*/\1/p' |
  sed 's/\.constprop\.[0-9]*$//; s/\.isra\.[0-9]*$//' > "$T_TMP/ukstap.txt"
t "print_backtrace() = tracefs's stacktrace of the same event, below its tracing function" 0 '' '' -- \
  bash -c "[ -s '$T_TMP/tracefs.txt' ] && diff '$T_TMP/tracefs.txt' '$T_TMP/ukstap.txt' >&2 ||
    { echo tracefs:; cat '$T_TMP/tracefs.txt'; echo ukstap:; cat '$T_TMP/bt.out'; exit 1; } >&2"
t_done
