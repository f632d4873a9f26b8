#!/bin/bash
# kernel.trace("SYSTEM:EVENT"): $field and $$vars/$$parms built from the event's format file
# (the truth here is tracefs itself, read by this test), from a BPF probe on a real exec.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

TRACEFS=/sys/kernel/tracing
[ -d $TRACEFS/events ] || mount -t tracefs nodev $TRACEFS 2>/dev/null
FMT=$TRACEFS/events/sched/sched_process_exec/format
# The visible fields, in order: every "field:" line but the common_ ones.
want_names=$(grep -o 'field:[^;]*;' "$FMT" | sed 's/field://; s/;$//; s/\[.*\]//' | awk '{print $NF}' |
  grep -v '^common_' | tr '\n' ' ' | sed 's/ $//')
CAT=$(command -v cat)

t "\$\$parms of sched_process_exec has the format file's fields" 0 \
  "~^filename=\"$(readlink -f "$CAT")\" pid=0x[0-9a-f]+ old_pid=0x[0-9a-f]+\$" '' -- \
  "$UKSTAP" -e 'probe kernel.trace("sched:sched_process_exec") { if (pid() == target()) { println($$parms); exit() } }' \
  -c "$CAT /dev/null"
t "the field names are those of tracefs ($want_names)" 0 '' '' -- sh -c "
  [ \"$want_names\" = 'filename pid old_pid' ]"
t "\$field reads: \$pid is the exec'ing pid" 0 $'1\n' '' -- \
  "$UKSTAP" -e 'probe kernel.trace("sched:sched_process_exec") { if (pid() == target()) { printf("%d\n", $pid == pid()); exit() } }' \
  -c "$CAT /dev/null"
t "\$\$vars of syscalls:sys_enter_openat names every argument" 0 \
  '~^dfd=0x[0-9a-f]+ filename=0x[0-9a-f]+ flags=0x[0-9a-f]+ mode=0x[0-9a-f]+$' '' -- \
  "$UKSTAP" -e 'probe kernel.trace("syscalls:sys_enter_openat") { if (pid() == target()) { println($$vars); exit() } }' \
  -c "$CAT /dev/null"
# The syscall events store every argument in an 8-byte slot marked unsigned (`field:int dfd;
# size:8; signed:0`); $dfd is the C int, as in SystemTap. cat opens files relative to AT_FDCWD
# (strace shows openat(AT_FDCWD, ...)), whose value is the kernel header's.
AT_FDCWD=$(awk '$1 == "#define" && $2 == "AT_FDCWD" { print $3 }' /usr/include/linux/fcntl.h)
t "\$dfd of openat is the C int AT_FDCWD ($AT_FDCWD), sign-extended in \$\$parms too" 0 \
  "~^$AT_FDCWD $(printf 'dfd=%#x' "$AT_FDCWD") filename=0x" '' -- \
  "$UKSTAP" -e 'probe kernel.trace("syscalls:sys_enter_openat") { if (pid() == target()) { printf("%d %s\n", $dfd, $$parms); exit() } }' \
  -c "$CAT /dev/null"
# A 4-byte signed field (`field:int code; size:4; signed:1`): a signal a thread sends itself
# with tgkill (python's pthread_kill) has si_code SI_TKILL, a negative number from the kernel's
# header; main read it as 4294967290.
SI_TKILL=$(awk '$1 == "#define" && $2 == "SI_TKILL" { print $3 }' /usr/include/asm-generic/siginfo.h)
t "signal_generate's int \$code of a tgkill is SI_TKILL ($SI_TKILL)" 0 "$(kill -l USR1) $SI_TKILL"$'\n' '' -- \
  "$UKSTAP" -e 'probe kernel.trace("signal:signal_generate") { if (pid() == target() && $sig == 10) printf("%d %d\n", $sig, $code) }' \
  -c "python3 -c 'import signal, threading; signal.signal(signal.SIGUSR1, lambda *a: None); signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)'"
t_done
