#!/bin/bash
# The function library added for SystemTap's shipped examples (issue 14): ctime & tz_ctime,
# ansi_*, task_*, cmdline_* & env_var, the *_arg register functions, addr, target_set_*,
# kernel_string of a known kernel string, proc_mem_*, conversions, stopwatches, speculation,
# device numbers, byte order, time texts. Each against a truth that is not ukstap:
#   ctime / tz_ctime      date(1) of the same epoch seconds (LC_ALL=C, TZ fixed)
#   ansi_*                printf(1) of the escape sequences SystemTap's reference documents
#   task_*, cmdline, env  the target program's own /proc/self/status, /proc/self/cmdline,
#                         /proc/PPID/status, getpriority (testsuite/e2e/progs/libfn_prog.c)
#   kernel_string         /proc/self/comm, read at task_struct.comm (offset from the kernel's
#                         BTF, dumped by bpftool)
#   proc_mem_*            /proc/self/statm printed by the program just before the probed open
#   *_arg                 the C arguments the program passes to args8(); at a syscall, the
#                         tracepoint's own fields; addr() = nm(1)'s address of args8 (no PIE)
#   target_set_pid        strace -f's list of the pids that exec'd under the target
#   MAJOR/MINOR           stat(1)'s %Hd / %Ld of a device number
#   the rest              SystemTap's documented results (function::NAME reference pages)
# Root only; under CI=true not being root is a failure, never a skip.
# e2e-schedule: first (run-e2e.sh): one of the longest scripts.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

PROG=$T_TMP/libfn_prog
t_build "the target program" gcc -O2 -Wall -no-pie -o "$PROG" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/libfn_prog.c" || { t_done; exit; }
MARK=$T_TMP/libfn-marker
printf 'x\n' > "$MARK"

# ---- ctime, tz_ctime: native (begin) and kernel probes against date(1) ------------------------
SECS="0 -1 1 86399 951782400 951868800 1709164800 2147483647 -2147483648 1795000000 -86400 68256000"
want_ctime=
for s in $SECS; do want_ctime+="$(date -u -d @$s '+%a %b %e %H:%M:%S %Y')"$'\n'; done
# TZ with a fixed offset (no tz database needed): 3 hours east of UTC, named XYZ.
want_tz=
for s in $SECS; do [ $s -ge 0 ] && [ $s -lt 2147000000 ] &&
  want_tz+="$(TZ=XYZ-3 date -d @$s '+%a %b %e %H:%M:%S %Y %Z')"$'\n'; done
{
  echo 'function list(which) {'
  for s in $SECS; do
    echo "  if (which == 0) println(ctime($s))"
    [ $s -ge 0 ] && [ $s -lt 2147000000 ] && echo "  if (which == 1) println(tz_ctime($s))"
  done
  echo '}'
} > "$T_TMP/ctime_fn.stp"
cat "$T_TMP/ctime_fn.stp" - > "$T_TMP/ctime_begin.stp" <<'EOF'
probe begin { list(0); list(1); exit() }
EOF
cat "$T_TMP/ctime_fn.stp" - > "$T_TMP/ctime_kernel.stp" <<'EOF'
probe kernel.trace("sched:sched_process_exec") { if (pid() == target()) { list(0); list(1); exit() } }
EOF
t "ctime/tz_ctime in a begin probe = date(1)" 0 "$want_ctime$want_tz" '' -- \
  env TZ=XYZ-3 "$UKSTAP" "$T_TMP/ctime_begin.stp"
t "ctime/tz_ctime in a kernel probe = date(1)" 0 "$want_ctime$want_tz" '' -- \
  env TZ=XYZ-3 "$UKSTAP" "$T_TMP/ctime_kernel.stp" -c /bin/true
# with string formatting (bpf_loop callbacks, which need the object's BTF accepted by the kernel)
t "ctime in a syscall probe that also formats its filename = date(1)" 0 \
  "$(printf '%-25s|"/bin/true"' "$(date -u -d @0 '+%a %b %e %H:%M:%S %Y')")"$'\n' '' -- \
  "$UKSTAP" -e 'probe syscall.execve {
    if (pid() == target()) { printf("%-25s|%s\n", ctime(0), filename); exit() } }' -c /bin/true
t "ctime() is now (date -u, within 2 s)" 0 '' '' -- sh -c "
  a=\$(date -u +%s); got=\$('$UKSTAP' -e 'probe begin { println(ctime()) exit() }'); b=\$(date -u +%s)
  for s in \$(seq \$a \$((b + 1))); do [ \"\$got\" = \"\$(date -u -d @\$s '+%a %b %e %H:%M:%S %Y')\" ] && exit 0; done
  echo \"ctime() = \$got\" >&2; exit 1"
t "tz_gmtoff/tz_name of TZ=XYZ-3 (seconds west of UTC, as tz_ctime subtracts them)" 0 $'-10800 XYZ\n' '' -- \
  env TZ=XYZ-3 "$UKSTAP" -e 'probe begin { println(tz_gmtoff(), " ", tz_name()) exit() }'
t "ctime out of range: SystemTap's errors" 0 $'Time too far in the future to be converted\nTime too far in the past to be converted\n' '' -- \
  "$UKSTAP" -e 'probe begin { try { ctime(2147483648) } catch (e) { println(e) }
                              try { ctime(-2147483649) } catch (e) { println(e) } exit() }'

# ---- argc, argv (SystemTap's argv tapset): the arguments given on the command line -------------
# (SystemTap warns "argv is limited to 32 arguments" when given 33 or more.)
ARGV_STP='probe begin { printf("%d", argc); for (i = 1; i <= argc; i++) printf("|%s", argv[i]); printf("\n") }
probe kernel.trace("sched:sched_process_exec") { if (pid() == target()) { printf("%d %s %s\n", argc, argv[2], argv[33]); exit() } }'
t "argc/argv = the command line's arguments (begin and kernel probes); 33 arguments: argv holds 32" 0 \
  $'33|a|b c|3|4|5|6|7|8|9|10|11|12|13|14|15|16|17|18|19|20|21|22|23|24|25|26|27|28|29|30|31|32|\n33 b c \n' \
  $'WARNING: argv is limited to 32 arguments\n' -- \
  "$UKSTAP" -e "$ARGV_STP" -c /bin/true a 'b c' $(seq 3 33)
t "argc with no arguments: 0; -G argc=1 overrides it" 0 $'0\n1|x\n' '' -- sh -c "
  '$UKSTAP' -e 'probe begin { printf(\"%d\\n\", argc); exit() }' &&
  '$UKSTAP' -G argc=1 -e 'probe begin { printf(\"%d|%s\\n\", argc, argv[1]); exit() }' x y"

# ---- ansi_*: the documented escape sequences, byte for byte ------------------------------------
t "ansi_* write the documented escape sequences" 0 \
  "$(printf '\033[1;1H\033[J|\033[31m|\033[42;31m|\033[42;31;1m|\033[42;31m|\033[0;0m|\n|\033[5;3H|\033[>5I|\033[>5h|\033[s|\033[u|\033[42;31m|\033[42;31;4m')" '' -- \
  "$UKSTAP" -e 'probe begin { ansi_clear_screen(); print("|"); ansi_set_color(31); print("|")
    ansi_set_color(31, 42); print("|"); ansi_set_color(31, 42, 1); print("|"); ansi_set_color(31, 42, 0)
    print("|"); ansi_reset_color(); print("|"); ansi_new_line(); print("|"); ansi_cursor_move(3, 5)
    print("|"); ansi_cursor_hide(); print("|"); ansi_cursor_show(); print("|"); ansi_cursor_save()
    print("|"); ansi_cursor_restore(); print("|"); ansi_set_color2(31, 42); print("|")
    ansi_set_color3(31, 42, 4); exit() }'

# ---- the target program: task_*, cmdline, env_var, kernel_string, proc_mem, *_arg, addr -------
COMM_OFF=$(bpftool btf dump file /sys/kernel/btf/vmlinux format raw |
  awk '/STRUCT .task_struct. size/ { f = 1; next } f && /^\[/ { exit } f && /.comm. / { sub(/.*bits_offset=/, ""); print $1 / 8 }')
ARGS8_ADDR=$(printf '0x%x' "0x$(nm "$PROG" | awk '$3 == "args8" { print $1 }')")
cat > "$T_TMP/task.stp" <<EOF
probe syscall.openat {
  if (execname() != "libfn_prog" || user_string(\$filename) != "$MARK") next
  t = task_current(); p = task_parent(t)
  printf("status:%d %d %d %s %d %d %d %d %d\n", task_tid(t), task_pid(t), task_pid(p),
         task_execname(t), task_uid(t), task_euid(t), task_gid(t), task_egid(t), task_nice(t))
  printf("prio:%d\n", task_prio(t))
  printf("pstate:%d\n", task_state(p))
  printf("same:%d %d %d %d %d\n", task_cpu(t) == cpu(), task_ns_pid(t) == pid(), task_ns_tid(t) == tid(),
         ns_ppid() == ppid(), t == task_current())
  printf("cmdline:%s\n", cmdline_str())
  printf("args:[%s][%s][%s][%s]\n", cmdline_arg(2), cmdline_arg(9), cmdline_args(1, 3, "|"), cmdline_args(3, -1, ","))
  printf("env:[%s][%s][%s]\n", env_var("LIBFN_X"), env_var("LIBFN_NOPE"), env_var(""))
  printf("comm:%s\n", kernel_string(t + $COMM_OFF))
  printf("quoted:%s\n", kernel_string_quoted(t + $COMM_OFF))
  printf("ip6:%s\n", format_ipaddr(t + $COMM_OFF, 10))
  printf("statm:%d %d %d\n", proc_mem_size(), proc_mem_txt(), proc_mem_data())
  printf("nofile:%d %d\n", task_rlimit_nofile(t), task_rlimit(t, "RLIMIT_NOFILE"))
  printf("ancestry:%s\n", pstrace(t))
  printf("modname:%s\n", modname(addr()))
  printf("sysargs:%d %d %d %d\n", int_arg(1) == __int32(\$dfd), pointer_arg(2) == \$filename, uint_arg(3) == \$flags, int_arg(1))
  try { task_pid(1) } catch (e) { printf("fault:%s\n", e) }
  try { int_arg(7) } catch (e) { printf("sysarg7:%s\n", e) }
  exit()
}
probe process("$PROG").function("args8") {
  printf("args8:%d %d %d %d 0x%x %d %d %d %d\n", int_arg(1), uint_arg(2), long_arg(3), ulong_arg(3),
         pointer_arg(4), s64_arg(5), int_arg(6), long_arg(7), int_arg(8))
  printf("args8-widths:%d %d %d %d %d %d\n", uint_arg(1), u32_arg(8), s32_arg(6), u64_arg(3), longlong_arg(3), ulonglong_arg(7))
  printf("addr:0x%x %d\n", addr(), addr() == uaddr())
  printf("ustack:0x%x 0x%x %d\n", ustack(0), ustack(1), ustack(99))
  printf("regs:%d %d %d %d %d %d\n", register("edi"), u_register("edi"), register("rdi"), register("esi"),
         u_register("rip") == addr(), registers_valid())
  try { register("xyz") } catch (e) { printf("reg-err:%s\n", e) }
  try { int_arg(0) } catch (e) { printf("arg0:%s\n", e) }
}
probe begin {
  try { int_arg(1) } catch (e) { printf("begin-arg:%s\n", e) }
  try { task_pid(task_current()) } catch (e) { printf("begin-task:%s\n", e) }
}
EOF
rc=0
"$UKSTAP" -o "$T_TMP/task.out" "$T_TMP/task.stp" \
  -c "env LIBFN_X=v=1 sh -c \"ulimit -S -n 77; nice -n 7 $PROG $MARK 'a b' x y; :\"" > "$T_TMP/task.prog" 2> "$T_TMP/task.err" || rc=$?
# (a loaded machine may lose VMA side-band records: that warning is about other processes' mappings)
quiet_err() { grep -v 'WARNING: Number of lost VMA side-band records' "$1"; return 0; }
t "task/cmdline/args probes: load and run" 0 '' '' -- sh -c "$(declare -f quiet_err); quiet_err '$T_TMP/task.err'; exit $rc"
line() { grep "^$1:" "$2"; }
t "task_tid task_pid task_pid(parent) task_execname uid euid gid egid nice = /proc/self/status" 0 \
  "$(line status "$T_TMP/task.prog")"$'\n' '' -- grep '^status:' "$T_TMP/task.out"
t "task_prio = nice + 20 (MAX_RT_PRIO subtracted)" 0 "prio:27"$'\n' '' -- grep '^prio:' "$T_TMP/task.out"
t "task_state of the waiting parent shell: 1 (TASK_INTERRUPTIBLE; /proc says S)" 0 "pstate:1"$'\n' '' -- \
  sh -c "grep -q '^pstate:S' '$T_TMP/task.prog' && grep '^pstate:' '$T_TMP/task.out'"
t "task_cpu = cpu(), task_ns_pid/tid = pid/tid, ns_ppid = ppid" 0 "same:1 1 1 1 1"$'\n' '' -- grep '^same:' "$T_TMP/task.out"
t "cmdline_str = /proc/self/cmdline" 0 "$(line cmdline "$T_TMP/task.prog")"$'\n' '' -- grep '^cmdline:' "$T_TMP/task.out"
t "cmdline_arg, cmdline_args (n..m joined by delim)" 0 "args:[a b][][$MARK|a b|x][x,y]"$'\n' '' -- grep '^args:' "$T_TMP/task.out"
t "env_var: the value after the first '=', '' when unset" 0 "env:[v=1][][]"$'\n' '' -- grep '^env:' "$T_TMP/task.out"
t "kernel_string(task + offsetof(comm)) = /proc/self/comm" 0 "$(line comm "$T_TMP/task.prog")"$'\n' '' -- grep '^comm:' "$T_TMP/task.out"
t "kernel_string_quoted of it" 0 "quoted:\"libfn_prog\""$'\n' '' -- grep '^quoted:' "$T_TMP/task.out"
# comm is 16 bytes, NUL-padded (set_task_comm): read as an in6_addr, its bytes in %pI6 groups
WANT_IP6=$( (printf 'libfn_prog'; head -c 6 /dev/zero) | od -An -tx1 | tr -d ' \n' | sed 's/\(....\)/\1:/g; s/:$//')
t "format_ipaddr(AF_INET6) of 16 known kernel bytes = od(1) of them in 4-digit groups" 0 "ip6:$WANT_IP6"$'\n' '' -- \
  grep '^ip6:' "$T_TMP/task.out"
t "proc_mem_size/txt/data = /proc/self/statm size/text/data" 0 "$(line statm "$T_TMP/task.prog")"$'\n' '' -- grep '^statm:' "$T_TMP/task.out"

# the pid forms, of a sleeping sleep (its memory no longer changes) from another process's
# tracepoint probe and from a begin probe (natively), against its /proc/PID/statm; a pid that
# does not exist gives 0
sleep 60 & SLEEPER=$!
until [ "$(cat /proc/$SLEEPER/comm 2> /dev/null)" = sleep ] &&
      grep -q '^State:.*S (sleeping)' /proc/$SLEEPER/status; do :; done
read -r SZ _ _ TXT _ DATA _ < /proc/$SLEEPER/statm
# (rss is the kernel's per-CPU-batched counter, which statm sums exactly since 6.16: 0 < rss <= size)
PM_FN="function pm(p) { printf(\"%d %d %d %d %d %d %d\\n\", proc_mem_size(p), proc_mem_rss(p) > 0 && proc_mem_rss(p) <= proc_mem_size(p),
  proc_mem_txt(p), proc_mem_data(p), proc_mem_size_pid(p), proc_mem_data_pid(p), proc_mem_size(99999999)) }"
t "proc_mem_*(pid) in a tracepoint probe = /proc/PID/statm" 0 "$SZ 1 $TXT $DATA $SZ $DATA 0"$'\n' '' -- \
  "$UKSTAP" -e "$PM_FN probe kernel.trace(\"sched:sched_process_exec\") { if (pid() == target()) { pm($SLEEPER); exit() } }" \
  -c /bin/true
t "proc_mem_*(pid) in a begin probe = /proc/PID/statm" 0 "$SZ 1 $TXT $DATA $SZ $DATA 0"$'\n' '' -- \
  "$UKSTAP" -e "$PM_FN probe begin { pm($SLEEPER); exit() }"
kill $SLEEPER; wait $SLEEPER 2> /dev/null
t "task_rlimit_nofile, task_rlimit(t, \"RLIMIT_NOFILE\") = getrlimit (ulimit -S -n 77)" 0 "nofile:77 77"$'\n' '' -- \
  sh -c "grep -q '^nofile:77\$' '$T_TMP/task.prog' && grep '^nofile:' '$T_TMP/task.out'"
t "pstrace = ' Name(pid)' up the /proc/PID/status PPid chain" 0 "$(line ancestry "$T_TMP/task.prog")"$'\n' '' -- grep '^ancestry:' "$T_TMP/task.out"
t "modname(addr()) at a tracepoint: kernel" 0 "modname:kernel"$'\n' '' -- grep '^modname:' "$T_TMP/task.out"
t "int_arg/pointer_arg/uint_arg at a syscall = the tracepoint's fields (dfd = AT_FDCWD)" 0 "sysargs:1 1 1 -100"$'\n' '' -- grep '^sysargs:' "$T_TMP/task.out"
t "args8(-5, 4000000000u, -1234567890123L, 0x7fff1234, 5, -6, 77, -8): *_arg at the uprobe" 0 \
  "args8:-5 4000000000 -1234567890123 -1234567890123 0x7fff1234 5 -6 77 -8"$'\n' '' -- grep '^args8:' "$T_TMP/task.out"
t "argument widths: uint_arg(-5), u32_arg(-8), s32_arg, u64_arg, longlong_arg, ulonglong_arg" 0 \
  "args8-widths:$(( (1 << 32) - 5 )) $(( (1 << 32) - 8 )) -6 -1234567890123 -1234567890123 77"$'\n' '' -- \
  grep '^args8-widths:' "$T_TMP/task.out"
t "addr() at the uprobe = nm's address of args8, = uaddr()" 0 "addr:$ARGS8_ADDR 1"$'\n' '' -- grep '^addr:' "$T_TMP/task.out"
read -r main_at main_size <<< "$(nm -S "$PROG" | awk '$4 == "main" { print $1, $2 }')"
MAIN_LO=$((16#$main_at))
MAIN_HI=$((16#$main_at + 16#$main_size))
t "ustack(0) = args8 (nm), ustack(1) inside main (nm -S), ustack(99) = 0" 0 '' '' -- sh -c "
  set -- \$(sed -n 's/^ustack://p' '$T_TMP/task.out')
  [ \"\$1\" = '$ARGS8_ADDR' ] && [ \$((\$2)) -gt $MAIN_LO ] && [ \$((\$2)) -lt $MAIN_HI ] && [ \"\$3\" = 0 ] ||
  { echo \"ustack: \$*; main [$MAIN_LO, $MAIN_HI)\" >&2; exit 1; }"
t "register/u_register: edi of -5 sign-extended or not, rdi as passed (zero-extended), esi of 4000000000" 0 \
  "regs:-5 $(( (1 << 32) - 5 )) $(( (1 << 32) - 5 )) $(( 4000000000 - (1 << 32) )) 1 1"$'\n' '' -- grep '^regs:' "$T_TMP/task.out"
t "errors: SystemTap's texts" 0 "reg-err:Unknown register: xyz
arg0:cannot access arg(0)
fault:read fault [man error::fault] at 0x1
sysarg7:cannot access arg(7)
" '' -- grep -E '^(arg0|fault|sysarg7|reg-err):' "$T_TMP/task.out"
t "begin probe: no registers, no kernel task" 0 "begin-arg:cannot access function args in this context
begin-task:cannot read task 0x0 in a user-space probe (begin, end, timer)
" '' -- grep -E '^begin-' "$T_TMP/task.out"
LONG_ARGS=$(seq -s ' ' 1 300)
"$UKSTAP" -D MAXSTRINGLEN=128 -o "$T_TMP/long.out" -e 'probe kernel.trace("sched:sched_process_exec") {
  if (pid() == target()) { println(cmdline_str()); exit() } }' -c "/bin/echo $LONG_ARGS" > /dev/null 2> "$T_TMP/long.err"
t "cmdline_str of 300 arguments: the first MAXSTRINGLEN-1 bytes of the command line, within MAXACTION" 0 \
  "$(printf '%s' "/bin/echo $LONG_ARGS" | cut -c 1-127)"$'\n' '' -- sh -c "cat '$T_TMP/long.err' >&2; cat '$T_TMP/long.out'"

# ---- target_set_pid: the target and its descendants = strace -f's pids ---------------------------
rc=0
"$UKSTAP" -o "$T_TMP/ts.out" -e 'probe kernel.trace("sched:sched_process_exec") { if (target_set_pid(pid())) println(pid()) }' \
  -c "strace -f -qq -e trace=execve -o $T_TMP/strace.out sh -c '/bin/true; sh -c /bin/true & wait; /bin/true'" \
  > /dev/null 2> "$T_TMP/ts.err" || rc=$?
t "target_set: runs" 0 '' '' -- sh -c "$(declare -f quiet_err); quiet_err '$T_TMP/ts.err'; exit $rc"
# strace itself exec'd first (the target); every pid strace saw exec is in the set.
want_ts=$( (head -n 1 "$T_TMP/ts.out"; awk '/execve\(/ && !/ = -1/ { print $1 }' "$T_TMP/strace.out") | sort -n | uniq)
t "target_set_pid holds the target and every descendant that exec'd (strace -f)" 0 "$want_ts"$'\n' '' -- \
  sh -c "sort -n '$T_TMP/ts.out' | uniq"
t "target_set_pid: at least 4 distinct pids (strace, sh, true, sh and true: an exec'ing sh -c may keep its pid)" 0 '' '' -- \
  sh -c "n=\$(sort -u '$T_TMP/ts.out' | wc -l); [ \$n -ge 4 ] || { echo \"\$n pids\" >&2; exit 1; }"

# ---- pure functions: SystemTap's documented results --------------------------------------------
# One run of one begin probe per function group, each printing a line of its own (its tag first):
# a compile and a run for eleven checks, each check reading its line.
DEV=$(stat -c %d /)
# Python's socket module takes AF_* from the C library's headers.
FAMS="UNSPEC INET INET6 NETLINK PACKET X25 AX25 APPLETALK IPX ROSE KEY SECURITY ATMPVC ATMSVC PPPOX LLC TIPC ASH ECONET IRDA NETBEUI NETROM SNA WANPIPE BRIDGE"
rc=0
"$UKSTAP" -o "$T_TMP/pure.out" -e "
probe begin { d = usrdev2kerndev($DEV); printf(\"majmin:%d %d\n\", MAJOR(d), MINOR(d)) }
probe begin { d = MKDEV(8, 17); printf(\"mkdev:%d %d 0x%x\n\", MAJOR(d), MINOR(d), d)
  printf(\"order:0x%x 0x%x 0x%x 0x%x %s %s %s\n\", htonl(0x01020304), htons(0x1234), htonll(0x0102030405060708),
         ntohl(0x04030201), ip_ntop(htonl(0x7f000001)), format_ipaddr(htonl(0xc0a80001), 2), format_ipaddr(0, 1)) }
probe begin { s = \"\"
  $(for n in $FAMS; do printf 's .= sprintf(\"%%s=%%d \", sock_fam_num2str(sock_fam_str2num(\"%s\")), sock_fam_str2num(\"%s\"))\n' $n $n; done)
  println(\"fams:\", substr(s, 0, strlen(s) - 1)) }
probe begin { printf(\"sock:%s %d %s %s %s %d %d\n\", sock_fam_num2str(21), sock_fam_str2num(\"AF_INET\"),
  sock_fam_num2str(1), sock_state_num2str(0), sock_state_num2str(4), sock_state_str2num(\"CONNECTED\"),
  sock_state_str2num(\"X\")) }
probe begin { printf(\"times:%s %s %s %s %d %d\n\", msecs_to_string(61234), usecs_to_string(3000001),
  nsecs_to_string(59999999999), cputime_to_string(125500000000), cputime_to_msecs(1999999), cputime_to_usecs(2999)) }
probe begin { printf(\"bytes:[%s][%s][%s][%s][%s][%s]\n\", bytes_to_string(1000), bytes_to_string(1536),
  bytes_to_string(12 * 1048576 + 102400), bytes_to_string(500 * 1073741824), bytes_to_string(123 * 1024 + 5), pages_to_string(1)) }
probe begin { printf(\"indent:%sa|%sb|%sc|%sd|%se\n\", thread_indent(1), thread_indent(1), thread_indent(-1),
  thread_indent(-1), indent(1)) }
probe begin { start_stopwatch(\"w\"); a = read_stopwatch_ns(\"w\"); b = read_stopwatch_ns(\"w\")
  stop_stopwatch(\"w\"); c = read_stopwatch_ns(\"w\"); d = read_stopwatch_ns(\"w\"); delete_stopwatch(\"w\")
  printf(\"stopwatch:%d %d %d %d\n\", b > a, c >= b, c == d, read_stopwatch_ns(\"w\")) }
probe begin { printf(\"errno:%d %d %d %d %d [%s] %d\n\", errno_p(2), errno_p(-2), errno_p(0), errno_p(5000),
  remote_id(), remote_uri(), cpuid() == cpu()) }
probe begin { printf(\"vmfault:%d %d %d %d %d %d %d %d\n\", vm_fault_contains(1, 0), vm_fault_contains(2, 1),
  vm_fault_contains(0x200, 2), vm_fault_contains(1, 2), vm_fault_contains(0x100, 4), vm_fault_contains(0x204, 5),
  vm_fault_contains(0x40, 6), vm_fault_contains(0x4, 6)) }
probe begin { printf(\"rlimit:%d %d %d %d\n\", rlimit_from_str(\"RLIMIT_CPU\"), rlimit_from_str(\"RLIMIT_NOFILE\"),
  rlimit_from_str(\"RLIMIT_RTTIME\"), rlimit_from_str(\"NOFILE\")); exit() }" > /dev/null 2> "$T_TMP/pure.err" || rc=$?
t "pure functions: one begin probe each, run" 0 '' '' -- sh -c "cat '$T_TMP/pure.err' >&2; exit $rc"
pure() { grep "^$1:" "$T_TMP/pure.out"; }
t "MAJOR/MINOR of usrdev2kerndev(st_dev) = stat's major/minor" 0 "majmin:$(stat -c '%Hd %Ld' /)"$'\n' '' -- pure majmin
t "MKDEV(8, 17): its MAJOR, MINOR and number" 0 $'mkdev:8 17 0x800011\n' '' -- pure mkdev
t "... byte order, ip_ntop, format_ipaddr(AF_INET), an unknown family" 0 \
  $'order:0x4030201 0x3412 0x807060504030201 0x1020304 127.0.0.1 192.168.0.1 *unknown address family*\n' '' -- pure order
t "sock_fam_str2num / sock_fam_num2str = the C library's AF_* numbers (python3 socket)" 0 \
  "fams:$(python3 -c "import socket,sys; print(' '.join('%s=%d' % (n, getattr(socket, 'AF_' + n)) for n in sys.argv[1:]))" $FAMS)"$'\n' '' -- \
  pure fams
t "sock_fam UNDEF/-1, sock_state_* (SS_FREE .. SS_DISCONNECTING)" 0 $'sock:UNDEF -1 LOCAL FREE DISCONNECTING 3 -1\n' '' -- pure sock
t "time texts: msecs/usecs/nsecs_to_string, cputime_to_string (ns)" 0 $'times:1m1.234s 0m3.000001s 0m59.999999999s 2m5.500s 1 2\n' '' -- pure times
t "bytes_to_string: 5 characters, K/M/G with the remainder below 100" 0 $'bytes:[ 1000][1.50K][12.0M][ 500G][ 123K][4.00K]\n' '' -- pure bytes
# indent()'s description is "" (SystemTap's indent.stp: "%6d %s:" of ts and ""), so ':' follows
# the time's blank directly.
t "thread_indent: '%6d execname(tid):' + depth blanks, time from the thread's first call" 0 \
  '~^indent:     0 ukstap\([0-9]+\):a\| +[0-9]+ ukstap\([0-9]+\): b\| +[0-9]+ ukstap\([0-9]+\): c\| +[0-9]+ ukstap\([0-9]+\):d\|     0 :e$' '' -- \
  pure indent
t "stopwatch: runs while started, frozen when stopped, gone when deleted" 0 $'stopwatch:1 1 1 0\n' '' -- pure stopwatch
t "errno_p, remote_id, remote_uri, cpuid" 0 $'errno:2 2 0 0 -1 [] 1\n' '' -- pure errno
t "vm_fault_contains: OOM SIGBUS MINOR MAJOR NOPAGE LOCKED ERROR bits (enum vm_fault_reason)" 0 $'vmfault:1 1 1 0 1 1 1 0\n' '' -- pure vmfault
t "rlimit_from_str: asm-generic/resource.h numbers, -1 unknown" 0 $'rlimit:0 7 15 -1\n' '' -- pure rlimit
t "speculation: commit prints in order, discard drops" 0 $'a\nb\nc\n' '' -- \
  "$UKSTAP" -e 'probe kernel.trace("sched:sched_process_exec") { if (pid() != target()) next
    x = speculation(); y = speculation(); speculate(x, "a\n"); speculate(y, "no\n"); speculate(x, "b\n")
    discard(y); commit(x); commit(y); speculate(x, "c\n"); commit(x); exit() }' -c /bin/true
t "user_string_warn: \"\" or warn_msg, SystemTap's warning" 0 $'[][W]\n' \
  $'WARNING: user string copy fault -14 at 0x0 [man error::fault]\n' -- \
  "$UKSTAP" -e 'probe kernel.trace("sched:sched_process_exec") { if (pid() != target()) next
    printf("[%s][%s]\n", user_string_warn(0), user_string_warn(0, "W")); exit() }' -c /bin/true

# ---- system(), ftrace(): the command's effect, tracefs --------------------------------------------
TOKEN=ukstap-fnlib-$$-$RANDOM
rc=0
"$UKSTAP" -e "probe begin { system(\"echo $TOKEN > $T_TMP/sys.out\") } probe timer.ms(100) { exit() }" > /dev/null 2> "$T_TMP/sys.err" || rc=$?
t "system() in a begin probe runs the command through /bin/sh" 0 "$TOKEN"$'\n' '' -- sh -c "
  cat '$T_TMP/sys.err' >&2; [ $rc = 0 ] || exit 1
  for i in \$(seq 100); do [ -s '$T_TMP/sys.out' ] && break; sleep 0.1; done; cat '$T_TMP/sys.out'"
t "system() in a kernel probe: a clear runtime error" 1 '' \
  "~^ERROR: system\(\) is not supported in kernel probes yet near identifier 'system' at " -- \
  "$UKSTAP" -e 'probe kernel.trace("sched:sched_process_exec") { if (pid() == target()) system("true") }' -c /bin/true
TRACEFS=/sys/kernel/tracing
[ -d $TRACEFS/events ] || mount -t tracefs nodev $TRACEFS 2>/dev/null
t "ftrace() writes the ftrace buffer: from BPF (bpf_trace_printk) and natively (trace_marker)" 0 \
  "bpf_trace_printk: $TOKEN-k"$'\n'"tracing_mark_write: $TOKEN-n"$'\n' '' -- sh -c "
  '$UKSTAP' -e 'probe begin { ftrace(\"$TOKEN-n\") } probe kernel.trace(\"sched:sched_process_exec\") {
    if (pid() == target()) { ftrace(\"$TOKEN-k\"); exit() } }' -c /bin/true || exit 1
  grep -o '[a-z_]*: $TOKEN-[kn]' $TRACEFS/trace | sort"

t_done
