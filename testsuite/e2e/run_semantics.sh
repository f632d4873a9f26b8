#!/bin/bash
# Language and runtime semantics as SystemTap documents them (issue 14): the oneshot probe
# (stapprobes; SystemTap's NEWS: runs once, then exits), foreach's limit, MAXACTION_INTERRUPTIBLE
# (man stap's -D list), globals seen from a tapset alias's body (langref "Variables": one
# namespace for all globals), MAXSTRINGLEN's default, @entry in .return probes and regular
# expressions in kernel-side probes. Truths: the documents, and the kernel or strace for the
# values a probe reads.
. "$(dirname "$0")/../e2e-lib.sh"
if [ "$(id -u)" != 0 ]; then
  if [ -n "${CI:-}" ]; then echo "FAIL: run_semantics needs root in CI"; T_FAILED=1; fi
  t_done; exit
fi
export XDG_CACHE_HOME="$T_TMP/cache"

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
# asks for bs=77 bytes (strace: read(0, ..., 77)), so the handler sees 78.
mkdir -p "$T_TMP/tapset"
printf 'probe sem_alias = begin { count = 41 }\n' > "$T_TMP/tapset/sem_alias.stp"
t "tapset alias body writes the user's global" 0 $'42\n' '' -- timeout 60 "$UKSTAP" -I "$T_TMP/tapset" \
  -e 'global count; probe sem_alias { count++ } probe begin(1) { exit() } probe end { println(count) }'
t "alias variable named like a user global is the global" 0 $'78\n' '' -- timeout 60 "$UKSTAP" \
  -c 'dd if=/dev/zero of=/dev/null bs=77 count=1 status=none' \
  -e 'global count; probe syscall.read { if (pid() == target() && fd == 0) printf("%d\n", ++count) }'

t_done
