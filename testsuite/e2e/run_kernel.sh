#!/bin/bash
# Pass 3-5 with kernel-context probes (BPF): syscall tracepoints, timer.profile, uprobes, and the
# native begin/end/timer probes reading what they filled.
#
# Every expectation comes from outside ukstap: docs/STAP-FORMATS.md text (§1 histograms, §2 global
# display, §3 printf table, §5 errors, §7 argstr/retstr), strace's own counts, the test program's
# own record of what it did (testsuite/e2e/progs/ktarget.c), CONFIG_HZ, and bpftool's view of the
# kernel. Root only; under CI=true not being root is a failure, never a skip.
# e2e-schedule: first (run-e2e.sh): one of the longest scripts.
. "$(dirname "$0")/../e2e-lib.sh"
NL=$'\n'
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
PASS5_FAILED='Pass 5: run failed.  [man error::pass5]'

# sprintf's %s without a width, of an empty string, is empty (C's printf, bash's printf below;
# it printed one space: a missing width reached the runtime as -1, read as "%-1s"), on the BPF
# side and natively.
SFMT='printf("[%s|%s|%s|%s|%s|%s]\n", sprintf("%s", c ? "x" : ""), sprintf("%s%s", "", "y"), sprintf("%s", "ab"), sprintf("%-5s", "ab"), sprintf("%*s", 4, ""), sprintf("%-*s", -3, "x"))'
SFMT_WANT=$(printf '[%s|%s|%s|%-5s|%*s|%-*s]' "" y ab ab 4 "" -3 x)
t "sprintf of an empty %s, natively (begin)" 0 "$SFMT_WANT$NL" '' -- \
  "$UKSTAP" -e "global c; probe begin { $SFMT; exit() }"
t "sprintf of an empty %s, in BPF (syscall probe)" 0 "$SFMT_WANT$NL" '' -- \
  "$UKSTAP" -e "global c; probe syscall.getpid { if (pid() == target()) { $SFMT; exit() } }" \
  -c 'python3 -c "import os; os.getpid()"'

KT=$T_TMP/ktarget
t_build "the target program" gcc -O2 -g -Wall -o "$KT" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/ktarget.c" || { t_done; exit; }

# check DESCRIPTION CONDITION... : a test whose command is a shell condition; on failure the
# condition's own stderr explains.
# uk_o ARGS...: ukstap -o FILE ARGS, then the script's output (FILE) on stdout; the -c target's
# own stdout goes to $T_TMP/uko.prog. Exit status is ukstap's.
uk_o() {
  local rc=0
  rm -f "$T_TMP/uko"
  "$UKSTAP" -o "$T_TMP/uko" "$@" > "$T_TMP/uko.prog" || rc=$?
  cat "$T_TMP/uko" 2>/dev/null
  return $rc
}
# uk_to OUT PROG ARGS...: the same, keeping the script's output in OUT and the target's in PROG
uk_to() {
  local out=$1 prog=$2 rc=0
  shift 2
  rm -f "$out"
  "$UKSTAP" -o "$out" "$@" > "$prog" || rc=$?
  return $rc
}
# keep NAME CMD...: run CMD, keeping copies of its stdout/stderr in $T_TMP/NAME.out/.err
keep() {
  local n=$1 rc=0
  shift
  "$@" > "$T_TMP/$n.out" 2> "$T_TMP/$n.err" || rc=$?
  cat "$T_TMP/$n.out"; cat "$T_TMP/$n.err" >&2
  return $rc
}
fail_msg() { echo "$*" >&2; return 1; }
in_range() {  # in_range WHAT VALUE LO HI
  [[ $2 =~ ^-?[0-9]+$ ]] || fail_msg "$1: not a number: '$2'" || return 1
  [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] || fail_msg "$1: $2 not in [$3, $4]"
}

# ================================================================= syscall counts vs strace
# `ls /` under ukstap -c and under strace -f -c; both with stdout on /dev/null (same ioctls).
# Differences that are justified and tolerated:
#  - execve: ukstap runs -c with execvp (§8), which tries each PATH directory in turn until one
#    has `ls` (one failed execve per directory before it); strace resolves the path itself and
#    execs once. Expected: the position of the first PATH directory holding an executable ls;
#  - exit_group: strace -c does not list it (it never returns), the tracepoint sees it;
#  - the child's own last calls between the probes going live and execve (close/read/write of
#    its start-up pipe, at most a few), before `ls` exists.
# Everything else must match exactly, openat and getdents64 included.
SC_SCRIPT='global c; probe syscall_any { if (pid() == target()) c[name]++ }
probe end { foreach (n in c) printf("%s %d\n", n, c[n]) }'
t "syscall_any counts: run" 0 '' '' -- uk_to "$T_TMP/sc.uk" /dev/null -c 'ls /' -e "$SC_SCRIPT"
strace -f -c -U calls,name -o "$T_TMP/sc.strace" ls / > /dev/null
awk 'NF == 2 && $1 ~ /^[0-9]+$/ && $2 != "total" { print $2, $1 }' "$T_TMP/sc.strace" | sort > "$T_TMP/sc.want"
EXECVP_TRIES=0
IFS=: read -ra path_dirs <<< "$PATH"
for dir in "${path_dirs[@]}"; do EXECVP_TRIES=$((EXECVP_TRIES + 1)); [ -x "${dir:-.}/ls" ] && break; done
cmp_counts() {  # cmp_counts WANT GOT
  local bad=0 name w g
  sort "$2" > "$2.sorted"
  [ -s "$1" ] || fail_msg "strace counted nothing" || return 1
  for name in $(cat "$1" "$2.sorted" | awk '{print $1}' | sort -u); do
    w=$(awk -v n="$name" '$1 == n { print $2 }' "$1"); w=${w:-0}
    g=$(awk -v n="$name" '$1 == n { print $2 }' "$2.sorted"); g=${g:-0}
    case $name in
      execve) [ "$g" = "$EXECVP_TRIES" ] || { echo "execve: strace $w, ukstap $g, want $EXECVP_TRIES (PATH search)" >&2; bad=1; } ;;
      exit_group) [ "$g" = 1 ] || { echo "exit_group: ukstap $g (want 1)" >&2; bad=1; } ;;
      close|read|write|dup2|rt_sigprocmask|rt_sigaction|fcntl)
        [ "$g" -ge "$w" ] && [ "$g" -le $((w + 3)) ] || { echo "$name: strace $w, ukstap $g (pre-exec slack 3)" >&2; bad=1; } ;;
      *) [ "$g" = "$w" ] || { echo "$name: strace $w, ukstap $g" >&2; bad=1; } ;;
    esac
  done
  return $bad
}
t "syscall_any counts match strace -c (ls /)" 0 '' '' -- cmp_counts "$T_TMP/sc.want" "$T_TMP/sc.uk"
t "getdents64 and openat counted exactly" 0 '' '' -- sh -c "
  for n in getdents64 openat; do
    w=\$(awk -v n=\$n '\$1 == n { print \$2 }' '$T_TMP/sc.want'); g=\$(awk -v n=\$n '\$1 == n { print \$2 }' '$T_TMP/sc.uk')
    [ -n \"\$w\" ] && [ \"\$w\" = \"\$g\" ] || { echo \"\$n: strace \$w, ukstap \$g\" >&2; exit 1; }
  done"
# syscall.* (the per-syscall aliases) for the two exact ones
t "syscall.openat/getdents count: run" 0 '' '' -- uk_to "$T_TMP/sc2.uk" /dev/null -c 'ls /' -e \
  'global o, d; probe syscall.openat { if (pid() == target()) o++ } probe syscall.getdents { if (pid() == target()) d++ }
   probe end { printf("openat %d\ngetdents64 %d\n", o, d) }'
t "syscall.openat/getdents counts match strace" 0 \
  "$(awk '$1 == "openat" || $1 == "getdents64"' "$T_TMP/sc.want" | sort)$NL" '' -- sort "$T_TMP/sc2.uk"

# ================================================================= openat argstr / retstr (§7)
mkdir -p "$T_TMP/od"
OPEN_SCRIPT='probe syscall.openat { if (pid() == target()) printf("%s\n", argstr) }
probe syscall.openat.return { if (pid() == target()) printf("= %s\n", retstr) }'
t "openat argstr: run" 0 '' '' -- uk_to "$T_TMP/open.uk" "$T_TMP/open.prog" -c "$KT open $T_TMP/od" -e "$OPEN_SCRIPT"
# the program's own record: creat 3, enoent -2, dir 4, rel 5, excl 6, eexist -17
rec() { awk -v k="$1" '$1 == k { print $2 }' "${REC:-$T_TMP/open.prog}"; }
open_want() {  # open_want DIR: what the program in DIR did, as argstr/retstr lines (its record: $REC)
  local D=$1
  echo "AT_FDCWD, \"$D/out.txt\", O_WRONLY|O_CREAT|O_TRUNC, 0666
= $(rec creat)
AT_FDCWD, \"/nonexistent/ukstap-e2e\", O_RDONLY
= -2 (ENOENT)
AT_FDCWD, \"$D\", O_RDONLY|O_DIRECTORY
= $(rec dir)
$(rec dir), \"out.txt\", O_RDWR|O_APPEND|O_CLOEXEC
= $(rec rel)
AT_FDCWD, \"$D/excl.txt\", O_WRONLY|O_CREAT|O_EXCL, 0640
= $(rec excl)
AT_FDCWD, \"$D/excl.txt\", O_WRONLY|O_CREAT|O_EXCL, 0640
= -17 (EEXIST)"
}
OPEN_WANT="$(open_want "$T_TMP/od")
"
t "program recorded its opens" 0 '' '' -- sh -c "[ '$(rec enoent)' = -2 ] && [ '$(rec eexist)' = -17 ] && [ -n '$(rec creat)' ]"
# the target's own openat calls come after the dynamic loader's: compare the last 12 lines
t "openat argstr and retstr (§7)" 0 "$OPEN_WANT" '' -- tail -n 12 "$T_TMP/open.uk"
# Two syscall tracepoints: by default behind the syscall dispatcher (raw sys_enter/sys_exit,
# the record rebuilt from the registers); the same through one perf-event tracepoint each.
mkdir -p "$T_TMP/od0"
t "openat argstr/retstr, per-event tracepoints (-D STP_SYSCALL_DISPATCH=0): run" 0 '' '' -- \
  uk_to "$T_TMP/open0.uk" "$T_TMP/open0.prog" -D STP_SYSCALL_DISPATCH=0 -c "$KT open $T_TMP/od0" -e "$OPEN_SCRIPT"
t "openat argstr and retstr, per-event tracepoints (§7)" 0 "$(REC=$T_TMP/open0.prog open_want "$T_TMP/od0")$NL" '' -- \
  tail -n 12 "$T_TMP/open0.uk"

# A field read in a foreach body of a dispatched syscall probe (the body is a BPF callback
# emitted apart from the probe) reads the same record as the probe: cat's openat of its file
# passes AT_FDCWD (-100, fcntl.h) as dfd.
t "dispatched syscall probe: \$dfd inside a foreach body = outside = AT_FDCWD" 0 $'-100 -100\n' '' -- \
  "$UKSTAP" -e 'global a, inside, outside
    probe syscall.openat { if (pid() == target() && user_string($filename) == "/etc/hostname") {
      a[1] = 1; foreach (k in a) inside = __int32($dfd); outside = __int32($dfd) } }
    probe syscall.openat.return { }
    probe end { printf("%d %d\n", inside, outside) }' -c 'cat /etc/hostname' -o /dev/stdout

# The -c target gets the terminal's fds, not ukstap's: not the -o file, no BPF or perf fds
t "-c target inherits no ukstap fd: run" 0 '' '' -- uk_to "$T_TMP/fd.uk" "$T_TMP/fd.prog" -c 'ls -l /proc/self/fd/' -e \
  'probe syscall.getpid { println("never") }'
t "-c target inherits no ukstap fd (-o file, bpf, perf)" 0 '' '' -- sh -c "
  ! grep -E 'fd\.uk|anon_inode:(bpf|\[perf)' '$T_TMP/fd.prog' >&2"

# ================================================================= timers
# The period, not a count in a fixed window: at load 20+ a 2 s run saw 14 firings (timers are
# late when the CPU is taken). Truth: the kernel's clock at each firing (gettimeofday_us): the
# closest two firings at the period (at most 150 ms apart: a loaded machine still gives one
# on-time pair in 2 s; a late firing can be followed by a close one, so no lower bound but
# "not at once"), never more firings than 2 s hold (a shorter period) and at least half of them
# (14 of 20 seen at load 24).
t "timer.ms(100) over -T 2: run" 0 '' '' -- "$UKSTAP" -o "$T_TMP/tms.uk" -T 2 -e \
  'global n, last, gap = -1
   probe timer.ms(100) { t = gettimeofday_us(); if (n++ && (gap < 0 || t - last < gap)) gap = t - last; last = t }
   probe end { printf("%d %d\n", n, gap) }'
t "timer.ms(100): 10..24 firings in 2 s, the closest two 1-150 ms apart (gettimeofday_us)" 0 '' '' -- bash -c '
  read -r n gap < "$1" || exit 1
  [ "$n" -ge 10 ] && [ "$n" -le 24 ] && [ "$gap" -ge 1000 ] && [ "$gap" -le 150000 ] || { echo "n=$n closest=$gap us"; exit 1; }' \
  _ "$T_TMP/tms.uk"
t "timer.s(1) over -T 3.5: run" 0 '' '' -- "$UKSTAP" -o "$T_TMP/ts.uk" -T 3.5 -e \
  'global n; probe timer.s(1) { n++ } probe end { printf("%d\n", n) }'
t "timer.s(1) fires 3 +-1 times in 3.5 s" 0 '' '' -- in_range "timer.s(1) count" "$(cat "$T_TMP/ts.uk" 2>/dev/null)" 2 4
HZ=$( { zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null; } | sed -n 's/^CONFIG_HZ=//p')
# (busy spins for 1 s of its own CPU time: on a loaded machine, where it gets a fraction of a
# core, a second of wall time was sampled fewer than HZ/2 times)
# The span between its first and last sample, by the kernel's clock (gettimeofday_us), bounds
# the samples from above: one thread is sampled at most once a tick. (Its CPU time does not: in
# a VM the scheduler leaves stolen time out of it while the ticks go on, and CI saw 384 samples
# for 1 s of CPU time at HZ=250.)
t "timer.profile on a 1 s busy loop: run" 0 '' '' -- "$UKSTAP" -o "$T_TMP/tp.uk" -c "$KT busy 1000" -e \
  'global n, u, first, last
   probe timer.profile { if (pid() == target()) { n++; u += user_mode(); last = gettimeofday_us(); if (!first) first = last } }
   probe end { printf("%d %d %d\n", n, u, last - first) }'
read -r TP_N TP_U TP_SPAN < "$T_TMP/tp.uk" 2>/dev/null
if [ -n "$HZ" ]; then
  # one busy thread for 1 s of CPU time is sampled at least about CONFIG_HZ/2 times, and at most
  # once a tick over the span it was sampled in (+10 % and 2: ticks of two CPUs are not aligned)
  t "timer.profile samples >= CONFIG_HZ/2=$((HZ / 2)) per busy second, <= one a tick over ${TP_SPAN:-?} us" 0 '' '' -- \
    in_range "timer.profile samples" "${TP_N:-}" $((HZ / 2)) $(( ${TP_SPAN:-0} * HZ * 11 / 10000000 + 2 ))
else
  t "timer.profile samples > 0 (CONFIG_HZ unknown)" 0 '' '' -- in_range "timer.profile samples" "${TP_N:-}" 1 100000
fi
t "timer.profile: a user-space spin is sampled mostly in user mode" 0 '' '' -- \
  sh -c "[ -n '${TP_U:-}' ] && [ '${TP_U:-0}' -ge $(( ${TP_N:-0} * 8 / 10 )) ] && [ '${TP_U:-0}' -gt 0 ] || { echo 'user_mode samples ${TP_U:-?} of ${TP_N:-?}' >&2; exit 1; }"

# ================================================================= histograms (§1)
# row LABEL COUNT VALSPACE CNTSPACE: one histogram row per §1 layout (scale 1)
row() { local bars; bars=$(printf '%*s' "$2" '' | tr ' ' '@'); printf "%${3}s |%s%$((50 - $2 + 1 + $4))s\n" "$1" "$bars" "$2"; }
HDR="value |-------------------------------------------------- count"
# §1 example, copied verbatim, plus the closing empty line
LINEAR_WANT='value |-------------------------------------------------- count
   <0 |@                                                  1
    0 |@                                                  1
   10 |@@@                                                3
   20 |                                                   0
   30 |                                                   0
      ~
   90 |                                                   0
  100 |                                                   0
 >100 |@                                                  1

'
# sanity: the row() generator reproduces the §1 example
t "row() helper reproduces the §1 linear example" 0 "$LINEAR_WANT" '' -- sh -c "
  echo '$HDR'; $(declare -f row); row '<0' 1 5 1; row 0 1 5 1; row 10 3 5 1; row 20 0 5 1; row 30 0 5 1; echo '      ~';
  row 90 0 5 1; row 100 0 5 1; row '>100' 1 5 1; echo"
LOG_WANT="$HDR
$(row 0 1 5 1)
$(row 1 1 5 1)
$(row 2 3 5 1)
$(row 4 3 5 1)
$(row 8 0 5 1)
$(row 16 0 5 1)
      ~
$(row 128 0 5 1)
$(row 256 0 5 1)
$(row 512 1 5 1)
$(row 1024 0 5 1)
$(row 2048 0 5 1)

"
t "@hist_linear §1 example (begin)" 0 "$LINEAR_WANT" '' -- "$UKSTAP" -e \
  'global h; probe begin { h <<< -5; h <<< 3; h <<< 15; h <<< 15; h <<< 15; h <<< 250; print(@hist_linear(h, 0, 100, 10)); exit() }'
t "@hist_log §1 example (begin)" 0 "$LOG_WANT" '' -- "$UKSTAP" -e \
  'global h; probe begin { h <<< 0; h <<< 1; h <<< 2; h <<< 3; h <<< 3; h <<< 5; h <<< 6; h <<< 7; h <<< 1000; print(@hist_log(h)); exit() }'
# the same values arriving from a kernel probe: read(987, NULL, V) makes count == V
READS="0 1 2 3 3 5 6 7 1000"
t "@hist_log and aggregates filled in syscall.read, printed in end" 0 \
  "${LOG_WANT}count=9 sum=1027 min=0 max=1000 avg=114${NL}" '' -- uk_o -c "$KT reads $READS" -e \
  'global h; probe syscall.read { if (pid() == target() && fd == 987) h <<< count }
   probe end { print(@hist_log(h)); printf("count=%d sum=%d min=%d max=%d avg=%d\n", @count(h), @sum(h), @min(h), @max(h), @avg(h)) }'
t "@hist_linear filled in syscall.read" 0 "$LINEAR_WANT" '' -- uk_o -c "$KT reads 2 10 22 22 22 257" -e \
  'global h; probe syscall.read { if (pid() == target() && fd == 987) h <<< count - 7 }
   probe end { print(@hist_linear(h, 0, 100, 10)) }'

# ================================================================= foreach sorting (§2)
# a: insertion order (b,2)=5 (a,1)=3 (c,1)=5 (a,3)=1 (b,1)=3; stable sorts keep it for ties.
FE_FILL='a["b",2] = 5; a["a",1] = 3; a["c",1] = 5; a["a",3] = 1; a["b",1] = 3
  s["x"] <<< 1; s["y"] <<< 5; s["y"] <<< 5; s["y"] <<< 5; s["z"] <<< 10; s["z"] <<< 10; s["w"] <<< 1; s["w"] <<< 1; s["w"] <<< 1'
FE_PRINT='foreach ([x,y] in a+) printf("%s,%d=%d ", x, y, a[x,y]); println("")
  foreach ([x,y] in a-) printf("%s,%d=%d ", x, y, a[x,y]); println("")
  foreach ([x+,y] in a) printf("%s,%d=%d ", x, y, a[x,y]); println("")
  foreach ([x-,y] in a) printf("%s,%d=%d ", x, y, a[x,y]); println("")
  foreach ([x,y+] in a) printf("%s,%d=%d ", x, y, a[x,y]); println("")
  foreach ([x,y-] in a) printf("%s,%d=%d ", x, y, a[x,y]); println("")
  foreach ([x,y] in a- limit 2) printf("%s,%d=%d ", x, y, a[x,y]); println("")
  foreach ([x+,y] in a limit 3) printf("%s,%d=%d ", x, y, a[x,y]); println("")
  foreach (k in s-) printf("%s:%d ", k, @count(s[k])); println("")
  foreach (k in s+) printf("%s:%d ", k, @count(s[k])); println("")
  foreach (k in s @sum-) printf("%s:%d ", k, @sum(s[k])); println("")
  foreach (k in s- limit 1) printf("%s:%d ", k, @count(s[k])); println("")'
FE_WANT='a,3=1 a,1=3 b,1=3 b,2=5 c,1=5 
b,2=5 c,1=5 a,1=3 b,1=3 a,3=1 
a,1=3 a,3=1 b,2=5 b,1=3 c,1=5 
c,1=5 b,2=5 b,1=3 a,1=3 a,3=1 
a,1=3 c,1=5 b,1=3 b,2=5 a,3=1 
a,3=1 b,2=5 a,1=3 c,1=5 b,1=3 
b,2=5 c,1=5 
a,1=3 a,3=1 b,2=5 
y:3 w:3 z:2 x:1 
x:1 z:2 y:3 w:3 
z:20 y:15 w:3 x:1 
y:3 
'
t "foreach sorting, filled in begin" 0 "$FE_WANT" '' -- "$UKSTAP" -e "global a, s
probe begin { $FE_FILL
  $FE_PRINT
  exit() }"
# the same arrays filled by a kernel probe (one read per insertion, in order), sorted in end
t "foreach sorting, filled in syscall.read" 0 "$FE_WANT" '' -- uk_o -c "$KT reads 1 2 3 4 5 6 7 8 9 10 11 12 13 14" -e "global a, s
probe syscall.read { if (pid() == target() && fd == 987) {
  if (count == 1) a[\"b\",2] = 5; if (count == 2) a[\"a\",1] = 3; if (count == 3) a[\"c\",1] = 5
  if (count == 4) a[\"a\",3] = 1; if (count == 5) a[\"b\",1] = 3
  if (count == 6) s[\"x\"] <<< 1; if (count >= 7 && count <= 9) s[\"y\"] <<< 5
  if (count == 10) s[\"z\"] <<< 10; if (count == 11) s[\"z\"] <<< 10; if (count >= 12) s[\"w\"] <<< 1 } }
probe end { $FE_PRINT }"

# ================================================================= end-of-run global display (§2)
DUMP_WANT='end
x=42
s="str"
q="a"b"
neg=-7
e @count=0x0
st @count=9 @min=0 @max=1000 @sum=1027 @avg=114
arr["two",2]=4
arr["three",3]=4
arr["one",1]=1
sarr["y",2] @count=9 @min=0 @max=1000 @sum=1027 @avg=114
sarr["x",1] @count=2 @min=3 @max=3 @sum=6 @avg=3
iota[2]="zwei"
iota[1]="eleven"
'
t "global display, every §2 row kind, set in syscall.read" 0 "$DUMP_WANT" '' -- uk_o -c "$KT reads $READS" -e '
global x, s, q, neg, e, st, arr, sarr, iota
probe syscall.read {
  if (pid() == target() && fd == 987) {
    x = 42; s = "str"; q = "a\"b"; neg = -7
    if (count == 123456) e <<< 1
    st <<< count
    arr["one",1] = 1; arr["two",2] = 4; arr["three",3] = 4
    sarr["y",2] <<< count
    if (count == 3) sarr["x",1] <<< count
    iota[1] = "eleven"; iota[2] = "zwei"
  }
}
probe end { println("end") }'
t "global display, set in begin, stats empty and scalar" 0 $'n=7\nagg @count=0x0\nphi @count=4 @min=1 @max=4 @sum=10 @avg=2\n' '' -- "$UKSTAP" -e '
global n, agg, phi
probe begin { k = 7; n = k; if (k == 8) agg <<< 1; phi <<< 1; phi <<< 2; phi <<< 3; phi <<< 4; exit() }'

# ================================================================= uprobes
UP_SCRIPT="probe process(\"$KT\").function(\"work\") { printf(\"%d\\n\", pid()) }
probe process(\"$KT\").function(\"work\").return { printf(\"%d\\n\", \$return) }"
t "uprobe work() entry/return: run" 0 '' '' -- uk_to "$T_TMP/up.uk" "$T_TMP/up.prog" -c "$KT work 6" -e "$UP_SCRIPT"
UP_PID=$(awk '$1 == "pid" { print $2 }' "$T_TMP/up.prog")
t "program ran work() 6 times" 0 '' '' -- sh -c "[ \$(grep -c '^work ' '$T_TMP/up.prog') = 6 ] && [ -n '$UP_PID' ]"
t "uprobe: pid() at entry, \$return, as the program recorded" 0 \
  "$(awk -v p="$UP_PID" '$1 == "work" { printf "%s\n%s\n", p, $2 }' "$T_TMP/up.prog")$NL" '' -- cat "$T_TMP/up.uk"
t "uprobe: \$n at entry" 0 $'0\n1\n2\n3\n4\n5\n' '' -- uk_o -c "$KT work 6" -e \
  "probe process(\"$KT\").function(\"work\") { printf(\"%d\\n\", \$n) }"
t "uprobe entry and return counts" 0 $'6 6\n' '' -- uk_o -c "$KT work 6" -e \
  "global e, r; probe process(\"$KT\").function(\"work\") { e++ } probe process(\"$KT\").function(\"work\").return { r++ }
   probe end { printf(\"%d %d\\n\", e, r) }"

# ================================================================= printf conversions (§3)
# Numbers from a kernel probe are computed from count (= 42, the program's read size), so the
# values are only known at run time; the format is applied in user space from binary arguments.
PF_FMT='"%5d|%05d|%-5d|%+d|% d|%.3d|%u|%x|%#X|%#x|%#o|%#o|%p|%10p|%i|%o|%X|%ld|[%5s][%-5s][%.2s][%s]|%c%#c%#c|%%\n"'
PF_WANT='  -42|-0042|42   |+0| 0|-001|18446744073709551615|ffffffffffffffd6|0X2A|0x0|00|010|0x0|      0x2a|42|10|FF|7|[  abc][abc  ][ab][ktarget]|A\n\326|%
'
t "printf §3 table from begin" 0 "$PF_WANT" '' -- "$UKSTAP" -e "probe begin { printf($PF_FMT,
  -42, -42, 42, 0, 0, -1, -1, -42, 42, 0, 0, 8, 0, 42, 42, 8, 255, 7, \"abc\", \"abc\", \"abc\", \"ktarget\", 65, 10, 214); exit() }"
t "printf §3 table from a kernel probe" 0 "$PF_WANT" '' -- uk_o -c "$KT reads 42" -e "probe syscall.read { if (pid() == target() && fd == 987) { v = count
  printf($PF_FMT, -v, -v, v, v - v, v - v, v - v - 1, v - v - 1, -v, v, v - v, v - v, v - 34, v - v, v, v, v - 34, v + 213, v - 35,
    \"abc\", \"abc\", \"abc\", execname(), v + 23, v - 32, v + 172) } }"
t "print/println/printd/printdln/sprint from a kernel probe" 0 $'42ab\n42,x,41\n42-x\n[42]\n' '' -- uk_o -c "$KT reads 42" -e \
  'probe syscall.read { if (pid() == target() && fd == 987) { v = count; print(v, "a"); println("b"); printdln(",", v, "x", v - 1); printd("-", v, "x"); println(""); println(sprint("[", v, "]")) } }'
# %b: raw little-endian bytes, width 1/2/4/8 (default 8)
B_WANT='2a 2a 00 2a 00 00 00 2a 00 00 00 00 00 00 00 fe ff'
t "printf %b from a kernel probe (bytes via od)" 0 "$B_WANT$NL" '' -- sh -c "
  \"\$0\" -c '$KT reads 42' -o '$T_TMP/b.uk' -e 'probe syscall.read { if (pid() == target() && fd == 987) printf(\"%1b%2b%4b%b%2b\", count, count, count, count, count - 44) }' > /dev/null &&
  od -An -tx1 -v '$T_TMP/b.uk' | tr -s ' \n' ' ' | sed 's/^ //; s/ \$//'; echo" "$UKSTAP"
t "printf %b from begin (bytes via od)" 0 "$B_WANT$NL" '' -- sh -c "
  \"\$0\" -o '$T_TMP/b2.uk' -e 'probe begin { printf(\"%1b%2b%4b%b%2b\", 42, 42, 42, 42, -2); exit() }' &&
  od -An -tx1 -v '$T_TMP/b2.uk' | tr -s ' \n' ' ' | sed 's/^ //; s/ \$//'; echo" "$UKSTAP"
# %m / %M of user memory: write(987, "hello", 5)
t "printf %#.5m and %#.5M of user memory" 0 $'[hello][68656c6c6f]\n' '' -- uk_o -c "$KT write5" -e \
  'probe syscall.write { if (pid() == target() && fd == 987) printf("[%#.5m][%#.5M]\n", buf_uaddr, buf_uaddr) }'

# ================================================================= errors (§3, §5)
t "error() in a kernel probe" 1 '' "ERROR: boom${NL}WARNING: Number of errors: 1, skipped probes: 0${NL}$PASS5_FAILED${NL}" -- \
  "$UKSTAP" -c "$KT getpid 1 1000" -e 'probe syscall.getpid { if (pid() == target()) error("boom") } probe end { println("end") }'
DIV_SCRIPT='probe syscall.getpid { if (pid() == target()) { z = target() - pid(); x = 10 / z; println(x) } } probe end { println("end") }'
DIV_PREFIX=${DIV_SCRIPT%%/*}
t "division by zero in a kernel probe" 1 '' \
  "ERROR: division by 0 near operator '/' at <input>:1:$(( ${#DIV_PREFIX} + 1 ))${NL}WARNING: Number of errors: 1, skipped probes: 0${NL}$PASS5_FAILED${NL}" -- \
  "$UKSTAP" -c "$KT getpid 1 1000" -e "$DIV_SCRIPT"
MAP_SCRIPT='global big_arr
probe syscall.read { if (pid() == target() && fd == 987) big_arr[count] = 1 }
probe end { println("end") }'
t "MAXMAPENTRIES=4 overflow names the array" 1 '' \
  "~^ERROR: Array overflow, check MAXMAPENTRIES near .*'big_arr' at <input>:2:" -- \
  keep map uk_o -D MAXMAPENTRIES=4 -c "$KT reads 1 2 3 4 5 6 7 8 9 10" -e "$MAP_SCRIPT"
t "MAXMAPENTRIES overflow: end skipped, error counted" 0 '' '' -- sh -c "
  grep -q '^end' '$T_TMP/map.out' && { echo 'end probe ran after the error' >&2; exit 1; }
  grep -qx 'WARNING: Number of errors: 1, skipped probes: 0' '$T_TMP/map.err' || { echo 'no error count warning' >&2; exit 1; }"
timed() {  # timed MAX_SECONDS CMD...: CMD's output and status; fails if it took longer
  local s e rc=0; s=$(date +%s%N); "${@:2}" || rc=$?; e=$(date +%s%N)
  [ $(( (e - s) / 1000000 )) -le $(( $1 * 1000 )) ] || { echo "took $(( (e - s) / 1000000 )) ms > $1 s" >&2; return 99; }
  return $rc
}
# the target sleeps 30 s after getpid: the run must end long before, through exit() (20 s: room
# for a loaded machine's start-up; 6 s and 4 s before)
EXIT_SCRIPT='probe syscall.getpid { if (pid() == target()) { println("hit"); exit() } } probe end { println("end ran") }'
t "exit() in a kernel probe runs end probes" 0 $'hit\nend ran\n' '' -- "$UKSTAP" -c "$KT getpid 1 1000" -e "$EXIT_SCRIPT"
t "exit() ends the run without waiting for the -c target (sleeping 30 s)" 0 $'hit\nend ran\n' '' -- timed 20 "$UKSTAP" -c "$KT getpid 1 30000" -e "$EXIT_SCRIPT"

# ================================================================= nothing stays attached
# bpf_objs [PID]: "KIND ID" of every BPF prog, map and link, and "perf PROG_ID PID FD" of every
# perf event fd with a program, that the kernel reports; with PID, only PID's: the programs behind
# PID's perf event fds (bpftool perf list), their maps, every program sharing those maps (perf
# events attached through links), and the links and perf fds of those programs. (This bpftool
# has no pids field; each ukstap loads its own maps, so concurrent runs do not mix.)
# After the run every such ID must be gone: the kernel detaches when the last fd closes.
bpf_objs() {
  python3 - "${1:-}" <<'EOF'
import json, subprocess, sys
want = sys.argv[1]
def j(*a):
    try:
        return json.loads(subprocess.run(["bpftool", "-j", *a], capture_output=True, text=True).stdout or "[]")
    except Exception:
        return []
progs, maps, links, perf = j("prog", "show"), j("map", "show"), j("link", "show"), j("perf", "list")
if want:
    seed = {o.get("prog_id") for o in perf if str(o.get("pid")) == want}
    mids = {m for o in progs if o["id"] in seed for m in o.get("map_ids", [])}
    progs = [o for o in progs if o["id"] in seed or mids & set(o.get("map_ids", []))]
    pids = {o["id"] for o in progs}
    maps = [o for o in maps if o["id"] in mids]
    links = [o for o in links if o.get("prog_id") in pids]
    perf = [o for o in perf if o.get("prog_id") in pids]
for o in progs: print("prog", o["id"])
for o in maps: print("map", o["id"])
for o in links: print("link", o["id"])
for o in perf: print("perf", o.get("prog_id"), o.get("pid"), o.get("fd"))
EOF
}
tracefs_probes() { cat /sys/kernel/tracing/uprobe_events /sys/kernel/tracing/kprobe_events 2>/dev/null; true; }
# still_there IDS_FILE: the objects of IDS_FILE that still exist (after up to 5 s for RCU)
still_there() {
  local i left
  for i in $(seq 50); do
    bpf_objs > "$T_TMP/objs.now"
    left=$(grep -Fxf "$T_TMP/objs.now" "$1" | grep -v '^perf')
    # perf event fds (any process) still running one of our programs
    left="$left$(awk 'NR == FNR { if ($1 == "prog") p[$2] = 1; next } $1 == "perf" && ($2 in p) { printf " perf-fd:%s/%s", $3, $4 }' "$1" "$T_TMP/objs.now")"
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  echo "still attached after exit: $(echo $left)" >&2; return 1
}
# wait_attached PID IDS_FILE: wait (compile included) until PID owns BPF programs; record them
wait_attached() {
  local i
  for i in $(seq 600); do
    kill -0 "$1" 2> /dev/null || return 1
    bpf_objs "$1" > "$2"
    grep -q '^prog' "$2" && grep -q '^link\|^perf' "$2" && { sleep 0.3; bpf_objs "$1" > "$2"; return 0; }
    sleep 0.1
  done
  return 1
}
TRACEFS_BEFORE=$(tracefs_probes)
DETACH_SCRIPT="global n, u
probe syscall.getpid { n++ } probe timer.profile { n++ }
probe process(\"$KT\").function(\"work\") { u++ }
probe end { println(\"end\") }"
for how in end INT TERM KILL; do
  case $how in
    end) "$UKSTAP" -w -T 3 -e "$DETACH_SCRIPT" > "$T_TMP/det.out" 2>&1 & ;;
    *) "$UKSTAP" -w -e "$DETACH_SCRIPT" > "$T_TMP/det.out" 2>&1 & ;;
  esac
  pid=$!
  if wait_attached $pid "$T_TMP/det.ids"; then attached=yes; else attached=no; fi
  t "detach ($how): tracepoint, perf and uprobe programs were attached" 0 '' '' -- sh -c "[ $attached = yes ] || { echo 'ukstap pid $pid never owned BPF programs+links; output:' >&2; cat '$T_TMP/det.out' >&2; exit 1; }"
  [ $how = end ] || kill -$how $pid 2> /dev/null
  wait $pid; rc=$?
  case $how in end|INT|TERM) want_rc=0 ;; KILL) want_rc=137 ;; esac
  t "detach ($how): exit status" 0 '' '' -- sh -c "[ $rc = $want_rc ] || { echo 'exit status $rc, want $want_rc' >&2; cat '$T_TMP/det.out' >&2; exit 1; }"
  [ $how = KILL ] || t "detach ($how): end probes ran" 0 '' '' -- grep -qx end "$T_TMP/det.out"
  t "detach ($how): every program, map, link and perf event is gone" 0 '' '' -- still_there "$T_TMP/det.ids"
  t "detach ($how): no uprobe/kprobe left in tracefs" 0 "${TRACEFS_BEFORE:+$TRACEFS_BEFORE$NL}" '' -- tracefs_probes
done
# a runtime error: the target calls getpid once the probes are known to be attached (it waits
# for the file det.go; it called it after a fixed 2 s before, and in a make check at load ~17
# the run had ended, error and all, before wait_attached saw its programs: "attached=no")
"$UKSTAP" -c "$KT when $T_TMP/det.go" -e 'probe syscall.getpid { if (pid() == target()) error("boom") }
  probe timer.profile { if (0) println("x") }' > "$T_TMP/det.out" 2>&1 &
pid=$!
if wait_attached $pid "$T_TMP/det.ids"; then attached=yes; else attached=no; fi
touch "$T_TMP/det.go"
wait $pid; rc=$?
t "detach (runtime error): attached, then exit status 1" 0 '' '' -- sh -c "[ $attached = yes ] && [ $rc = 1 ] || { echo 'attached=$attached status=$rc' >&2; cat '$T_TMP/det.out' >&2; exit 1; }"
t "detach (runtime error): ERROR line" 0 '' '' -- grep -qx 'ERROR: boom' "$T_TMP/det.out"
t "detach (runtime error): everything gone" 0 '' '' -- still_there "$T_TMP/det.ids"
# a script the verifier rejects (guru-mode embedded C reading address 8): load fails in pass 5,
# and nothing created before the failure may survive. Its globals have a name unique to this run,
# so its maps (stp_map_NAME, stp_stat_NAME) are recognizable among concurrent BPF users.
VL=v$(printf '%05d' $(( (RANDOM * 32768 + RANDOM) % 100000 )))
t "verifier-rejected script fails pass 5" 1 '' "~Pass 5: run failed" -- keep verif "$UKSTAP" -g -e "
global ${VL}a, ${VL}s
function bad:long () %{ STAP_RETURN(*(volatile long *)8); %}
probe syscall.getpid { ${VL}a[pid()] = bad(); ${VL}s <<< 1 } probe timer.profile { if (0) println(\"x\") }"
t "verifier-rejected script: the verifier is named" 0 '' '' -- grep -qi 'verif' "$T_TMP/verif.err"
verifier_leaks() {
  local i
  for i in $(seq 30); do
    bpftool map show 2> /dev/null | grep -q "name stp_[a-z]*_${VL}" || return 0
    sleep 0.1
  done
  echo "maps of the rejected script still exist: $(bpftool map show | grep "name stp_[a-z]*_${VL}")" >&2; return 1
}
t "verifier-rejected script leaves nothing behind" 0 '' '' -- verifier_leaks
t "verifier-rejected: no uprobe/kprobe left in tracefs" 0 "${TRACEFS_BEFORE:+$TRACEFS_BEFORE$NL}" '' -- tracefs_probes
# A char[16] tracepoint field: sched_process_fork's $parent_comm against execname(), which the
# kernel fills from the task itself (bpf_get_current_comm), not from the record. It did not
# compile before (the emitted STP_TP_STR had 4 arguments, the runtime's 3).
t "char[] field: \$parent_comm of sched_process_fork = execname() (sh)" 0 $'sh sh\n' '' -- \
  "$UKSTAP" -T 30 -e 'probe kernel.trace("sched:sched_process_fork") { if ($parent_pid == target()) { printf("%s %s\n", $parent_comm, execname()); exit() } }' \
  -c 'sh -c "/bin/true & wait"'
t_done
