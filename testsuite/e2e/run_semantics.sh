#!/bin/bash
# Language and runtime semantics as SystemTap documents them (issue 14): the oneshot probe
# (stapprobes; SystemTap's NEWS: runs once, then exits), foreach's limit, MAXACTION_INTERRUPTIBLE
# (man stap's -D list), globals seen from a tapset alias's body (langref "Variables": one
# namespace for all globals), MAXSTRINGLEN's default, @entry in .return probes and regular
# expressions in kernel-side probes. Truths: the documents, and the kernel or strace for the
# values a probe reads.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

# oneshot: the handler runs once, then the script ends as after exit() (end probes run, status
# 0) without any other event.
t "oneshot runs once then exits" 0 $'once\nend\n' '' -- timeout 60 "$UKSTAP" \
  -e 'probe oneshot { println("once") } probe end { println("end") }'

# foreach (... limit N): N <= 0 runs no iteration (SystemTap: the loop stops after N).
t "foreach limit <= 0" 0 $'2\n0\n0\n' '' -- timeout 60 "$UKSTAP" -e '
  global a
  probe oneshot {
    for (i = 0; i < 5; i++) a[i] = i
    n = 0; foreach (k in a limit 2) n++; println(n)
    n = 0; foreach (k in a limit 0) n++; println(n)
    n = 0; foreach (k in a- limit -10) n++; println(n)
  }'

# MAXACTION_INTERRUPTIBLE (man stap: begin/end probes, default MAXACTION * 10): 600 loop
# iterations in begin, 600 printed keys in end. A timer or kernel probe keeps MAXACTION.
t "begin: 600 iterations under MAXACTION_INTERRUPTIBLE" 0 $'600\n' '' -- timeout 60 "$UKSTAP" \
  -e 'probe begin { for (i = 0; i < 600; i++) n++; println(n); exit() }'
t "end: 600 keys printed" 0 '$599' '' -- timeout 60 "$UKSTAP" \
  -e 'global a; probe begin { for (i = 0; i < 600; i++) a[i] = i; exit() } probe end { foreach (k in a+) printf("%d\n", k) }'
t "begin: MAXACTION * 10 is the limit" 1 '' '~^ERROR: MAXACTION exceeded' -- timeout 60 "$UKSTAP" \
  -e 'probe begin { for (i = 0; i < 6000; i++) n++; println(n); exit() }'
t "-D MAXACTION_INTERRUPTIBLE=N" 0 $'6000\n' '' -- timeout 60 "$UKSTAP" -DMAXACTION_INTERRUPTIBLE=20000 \
  -e 'probe begin { for (i = 0; i < 6000; i++) n++; println(n); exit() }'
t "timer probe keeps MAXACTION" 1 '' '~^ERROR: MAXACTION exceeded' -- timeout 60 "$UKSTAP" \
  -e 'probe timer.ms(1) { for (i = 0; i < 600; i++) n++; println(n); exit() }'

# A tapset alias's variable with the name of a user global is that global (one namespace):
# syscall.read's body sets count = $count, the handler increments it. dd's one read of fd 0
# asks for bs=77 bytes (strace: read(0, ..., 77)), so the handler sees 78. SystemTap binds
# so too, and warns (elaborate.cxx find_var): "cross-file global variable reference to <the
# global> from: <the alias's identifier>" (sem_alias.stp's count is at 1:27).
mkdir -p "$T_TMP/tapset"
printf 'probe sem_alias = begin { count = 41 }\n' > "$T_TMP/tapset/sem_alias.stp"
XFILE="~^WARNING: cross-file global variable reference to identifier 'count' at <input>:1:8 from: identifier 'count' at "
t "tapset alias body writes the user's global" 0 $'42\n' "$XFILE$T_TMP/tapset/sem_alias.stp:1:27\$" -- timeout 60 "$UKSTAP" -I "$T_TMP/tapset" \
  -e 'global count; probe sem_alias { count++ } probe begin(1) { exit() } probe end { println(count) }'
t "alias variable named like a user global is the global" 0 $'78\n' "$XFILE.*/syscalls/files\\.stp:" -- timeout 60 "$UKSTAP" \
  -c 'dd if=/dev/zero of=/dev/null bs=77 count=1 status=none' \
  -e 'global count; probe syscall.read { if (pid() == target() && fd == 0) printf("%d\n", ++count) }'

# @entry(expr) in a system call's return probe (syscall.X.return = sys_exit_X): saved at
# sys_enter_X by the same thread. dd's one read of fd 0 (strace: read(0, ..., 77) = 77).
t "@entry(\$fd) at syscall.read.return" 0 '~^fd=0 count=77 ret=77$' '' -- timeout 60 "$UKSTAP" \
  -c 'dd if=/dev/zero of=/dev/null bs=77 count=1 status=none' \
  -e 'probe syscall.read.return { if (pid() == target()) printf("fd=%d count=%d ret=%d\n", @entry($fd), @entry($count), $ret) }'

# @entry in a function's return probe (uretprobe), calls nested five deep: the program prints
# each call's argument and result as it returns (its own view), the probe the same from @entry
# and $return. -o keeps the two apart.
EP=$T_TMP/entry_prog
if gcc -O2 -g -o "$EP" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/entry_prog.c" 2> "$T_TMP/gcc.err"; then
  "$EP" > "$T_TMP/entry.truth"
  t "@entry at process.function.return: run" 0 '*' '' -- timeout 60 "$UKSTAP" -o "$T_TMP/entry.out" -c "$EP" -e '
    probe process("'"$EP"'").function("rec").return { printf("rec n=%d ret=%d\n", @entry($n), $return) }
    probe process("'"$EP"'").function("scale").return {
      printf("scale x=%d k=%d ret=%d\n", @entry($x), @entry($k), $return) }'
  t "@entry(\$param) at .return = the arguments the program saw, nested calls included" 0 '' '' -- \
    diff "$T_TMP/entry.truth" "$T_TMP/entry.out"
  # Time: each frame's @entry(gettimeofday_ns()) is <= the time at its return, and the outer
  # frames (entered first) have the earlier entry times.
  t "@entry(gettimeofday_ns()): entry <= return, outer frames entered first" 0 '*' '' -- \
    timeout 60 "$UKSTAP" -c "$EP" -o "$T_TMP/time.out" -e '
    global last, ok, n
    probe process("'"$EP"'").function("rec").return {
      t0 = @entry(gettimeofday_ns()); t1 = gettimeofday_ns()
      n++
      if (t0 <= t1 && (last == 0 || t0 < last)) ok++
      last = t0
    }
    probe end { printf("ok %d\n", ok == n ? ok : -n) }'
  t "@entry(gettimeofday_ns()): output" 0 $'ok 5\n' '' -- cat "$T_TMP/time.out"
else
  t "entry_prog builds" 0 '' '' -- cat "$T_TMP/gcc.err"
fi
t "@entry outside a return probe is refused" 1 '' '~@entry is only valid in a \.return probe' -- \
  "$UKSTAP" -p2 -e 'probe syscall.read { println(@entry($fd)) }'
t "@entry in a function is refused" 1 '' '~@entry is only valid in a \.return probe' -- \
  "$UKSTAP" -p2 -e 'function f() { return @entry(1) } probe syscall.read.return { println(f()) }'

# MAXSTRINGLEN: 512 by default as SystemTap on 64-bit hosts (its runtime_defines.h); a string
# keeps MAXSTRINGLEN - 1 characters. -D MAXSTRINGLEN=N still sets it.
t "MAXSTRINGLEN default 512 (native)" 0 $'300 511\n' '' -- timeout 60 "$UKSTAP" \
  -e 'probe oneshot { printf("%d %d\n", strlen(sprintf("%300s", "x")), strlen(sprintf("%600s", "x"))) }'
t "MAXSTRINGLEN default 512 (kernel probe, array key)" 0 $'400\n' '' -- timeout 60 "$UKSTAP" -c 'sh -c "sleep 0.2; true"' \
  -e 'global a; probe syscall.wait4 { if (pid() == target()) a[sprintf("%400s", "k")] <<< 1 } probe end { foreach (k in a) println(strlen(k)) }'
t "-D MAXSTRINGLEN=128" 0 $'127\n' '' -- timeout 60 "$UKSTAP" -DMAXSTRINGLEN=128 \
  -e 'probe oneshot { println(strlen(sprintf("%300s", "x"))) }'

# =~ / !~ in a kernel-side probe (a DFA compiled at translate time) agree with the native side's
# glibc regexec on the same strings: the files cat opens (its libraries, /etc/hostname, ...;
# syscall.openat's filename is quoted, as SystemTap's).
t "=~ in a kernel probe = regexec in end, on the paths cat opens: run" 0 '*' '' -- \
  timeout 60 "$UKSTAP" -c 'cat /etc/hostname /etc/passwd' -o "$T_TMP/re.out" -e '
  global k
  probe syscall.openat {
    if (pid() == target()) {
      f = filename
      k[f] = (f =~ "^\"?/etc/[a-z]+\"?$") + 2 * (f =~ "lib(c|m)\\.so(\\.[0-9]+)*\"?$") + 4 * (f !~ "[0-9]") +
             8 * (f =~ "^\"?(/[^/\"]+){3,}\"?$") + 16 * (f =~ "[[:upper:]]|passwd")
    }
  }
  probe end {
    foreach (f in k) {
      v = (f =~ "^\"?/etc/[a-z]+\"?$") + 2 * (f =~ "lib(c|m)\\.so(\\.[0-9]+)*\"?$") + 4 * (f !~ "[0-9]") +
          8 * (f =~ "^\"?(/[^/\"]+){3,}\"?$") + 16 * (f =~ "[[:upper:]]|passwd")
      n++; if (v != k[f]) bad++
    }
    printf("%d paths, %d disagree\n", n, bad)
  }'
t "=~ in a kernel probe: output" 0 '~^[3-9][0-9]* paths, 0 disagree$' '' -- cat "$T_TMP/re.out"
t "a regex the DFA cannot do is refused in a kernel probe" 1 '' '~cannot be matched in a kernel-context probe: back-references' -- \
  "$UKSTAP" -p3 -e 'probe syscall.read { if (execname() =~ "(a)\\1") println(1) }'

t_done
