#!/bin/bash
# Kernel types from BTF: tracepoint C arguments ($prev, $next of sched_switch), -> on kernel
# pointers, @cast, char arrays, @defined, and the one-line errors.
#
# Truths from outside the code under test: the event's own record (format-file fields, read by
# the perf-event tracepoint path, not BTF), the kernel's current task (pid(), execname():
# bpf_get_current_*), /proc/PID/stat, the comm of the program the test runs, and SystemTap's
# documented -L format. Events are filtered by the test's own processes. Root only; under
# CI=true not being root is a failure, never a skip.
# e2e-schedule: first (run-e2e.sh): one of the longest scripts.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

# A shell that forks and waits in a loop: every wait switches it out (sched_switch with
# prev = the shell = current).
LOOP='i=0; while [ $i -lt 400 ]; do /bin/true; i=$((i+1)); done'

# 1. $next->pid (BTF argument: a tp_btf probe) against $next_pid (the record: a perf-event
# tracepoint probe) on the same event. Both programs run back to back within one trace call,
# with interrupts off, on the CPU of the switch; whichever runs second on that CPU finds the
# other's value waiting and compares. Events are those where the test's shell is switching out,
# so they all happen after both probes are attached (-c starts the shell after).
t "\$next->pid (BTF) = \$next_pid (record) on 20 switches of the target" 0 $'pairs=20 mismatches=0\n' '' -- \
  "$UKSTAP" -T 60 -e '
global btf_v, rec_v, pairs, bad
function pair(cpu, v, mine) {
  if (mine == 0) { if (cpu in rec_v) { bad += rec_v[cpu] != v; delete rec_v[cpu]; pairs++ } else btf_v[cpu] = v }
  else { if (cpu in btf_v) { bad += btf_v[cpu] != v; delete btf_v[cpu]; pairs++ } else rec_v[cpu] = v }
  if (pairs == 20) { printf("pairs=%d mismatches=%d\n", pairs, bad); exit() }
}
probe kernel.trace("sched_switch") { if (pid() == target() && pairs < 20) pair(cpu(), $next->pid, 0) }
probe kernel.trace("sched_switch") { if (pid() == target() && pairs < 20) pair(cpu(), $next_pid, 1) }
' -c "sh -c '$LOOP'"

# 2. $prev->comm when prev is the current task, against execname() (bpf_get_current_comm).
# 3. @cast(task_current(), "task_struct")->tgid against pid() (bpf_get_current_pid_tgid).
# Once the shell runs as "sh" (execname()): before its exec the child is a copy of ukstap.
t "\$prev->comm = execname(); @cast(task_current(), \"task_struct\")->tgid = pid()" 0 $'sh sh 1\n' '' -- \
  "$UKSTAP" -T 60 -e 'probe kernel.trace("sched_switch") {
    if (pid() == target() && execname() == "sh") {
      printf("%s %s %d\n", $prev->comm, execname(), @cast(task_current(), "task_struct")->tgid == pid()); exit() } }' \
  -c "sh -c '$LOOP'"

# 4. A member through a nested pointer: $prev->mm->start_code (mm_struct's start_code sits in
# an anonymous struct) against /proc/PID/stat field 26 (startcode) of the same process.
sh -c 'while :; do /bin/true; done' &
LOOPER=$!
# Its startcode once its exec is over: until then the child is a copy of this bash, and comm is
# "sh" before the exec has mapped sh (startcode is still 0 then: a tight poll saw it 1 of 300
# times). A child of its own (a /bin/true of the loop) says the loop runs.
for _ in $(seq 600); do
  [ "$(cat "/proc/$LOOPER/comm" 2>/dev/null)" = sh ] && pgrep -P "$LOOPER" > /dev/null && break; sleep 0.05
done
START_CODE=$(awk '{ print $26 }' "/proc/$LOOPER/stat")
t "\$prev->mm->start_code = /proc/PID/stat startcode" 0 "$START_CODE"$'\n' '' -- \
  "$UKSTAP" -T 60 -x "$LOOPER" -e 'probe kernel.trace("sched_switch") {
    if (pid() == target()) { printf("%d\n", $prev->mm->start_code); exit() } }'
kill "$LOOPER"; wait "$LOOPER" 2>/dev/null

# 5. A char array field of the record indexed: $next_comm[0], [1] when next is the test's
# shell ("sh": 115 104), and a run-time index ($1) on a BTF char array member. Only once the
# shell has run as "sh" (execname(), in a probe of its own): before its exec it is a copy of
# ukstap.
READY='global ready
probe kernel.trace("sched_switch") { if (pid() == target() && execname() == "sh") ready = 1 }'
t "\$next_comm[0], \$next_comm[1] of sh" 0 $'115 104\n' '' -- \
  "$UKSTAP" -T 60 -e "$READY"'
probe kernel.trace("sched_switch") { if (ready && $next_pid == target()) { printf("%d %d\n", $next_comm[0], $next_comm[1]); exit() } }' \
  -c "sh -c '$LOOP'"
t "\$next->comm[\$1] (run-time index) of sh" 0 $'104\n' '' -- \
  "$UKSTAP" -T 60 -e "$READY"'
probe kernel.trace("sched_switch") { if (ready && $next->pid == target()) { printf("%d\n", $next->comm[$1]); exit() } }' \
  -c "sh -c '$LOOP'" 1

# 6. @defined on BTF members and @cast (folded in pass 2).
t "@defined(\$next->pid)=1 @defined(\$next->nope)=0, @cast likewise" 0 $'1 0 1 0\n' '' -- \
  "$UKSTAP" -T 60 -e 'probe kernel.trace("sched_switch") { if (pid() == target()) {
    printf("%d %d %d %d\n", @defined($next->pid), @defined($next->nope),
           @defined(@cast(0, "task_struct")->tgid), @defined(@cast(0, "task_struct")->nope)); exit() } }' \
  -c "sh -c '$LOOP'"

# 6b. &@cast(0, "T")->member (offsetof), &@cast(0, "T")[1] (sizeof), @defined(&@cast(0, "T")):
# against bpftool's own reading of the kernel's BTF (bits_offset / 8, size=).
BTF_DUMP=$T_TMP/btf.txt
bpftool btf dump file /sys/kernel/btf/vmlinux > "$BTF_DUMP"
TASK_SIZE=$(sed -n "s/.*STRUCT 'task_struct' size=\([0-9]*\) .*/\1/p" "$BTF_DUMP")
PID_OFF=$(awk "/STRUCT 'task_struct' size=/ { f = 1 } f && /^\t'pid' / { sub(/.*bits_offset=/, \"\"); print \$0 / 8; exit }" "$BTF_DUMP")
t "offsetof(task_struct, pid), sizeof(struct task_struct) = bpftool's; type_defined" 0 "$PID_OFF $TASK_SIZE 1 0"$'\n' '' -- \
  "$UKSTAP" -T 60 -e 'probe kernel.trace("sched_switch") { if (pid() == target()) {
    printf("%d %d %d %d\n", &@cast(0, "task_struct")->pid, &@cast(0, "struct task_struct", "kernel<linux/sched.h>")[1],
           @defined(&@cast(0, "task_struct")), @defined(&@cast(0, "no_such_type_t"))); exit() } }' \
  -c "sh -c '$LOOP'"

# 6c. A char array is its address, as in SystemTap (kernel_string($next->comm)), and its
# characters where a string is wanted (printf %s, ==).
t "kernel_string(\$prev->comm), \$prev->comm as %s and == \"sh\"" 0 $'sh sh 1\n' '' -- \
  "$UKSTAP" -T 60 -e 'probe kernel.trace("sched_switch") { if (pid() == target() && execname() == "sh") {
    printf("%s %s %d\n", kernel_string($prev->comm), $prev->comm, $prev->comm == "sh"); exit() } }' \
  -c "sh -c '$LOOP'"

# 7. -L lists the BTF arguments with the format fields (SystemTap's "$name:type" list).
t "-L kernel.trace(\"sched_switch\") lists \$prev and \$next" 0 '~ \$next_comm:char\[16\] .*\$prev:struct task_struct\* \$next:struct task_struct\*' '' -- \
  "$UKSTAP" -L 'kernel.trace("sched_switch")'

# 8. Errors: one line each, naming the type and member; nothing runs.
t "unknown member: names the struct and similar members" 1 '' \
  "~^semantic error: struct task_struct has no member 'pidd' \(similar: [a-z, ]*pid[a-z, ]*\)" -- \
  "$UKSTAP" -p4 -e 'probe kernel.trace("sched_switch") { println($next->pidd) }'
t "-> on a non-pointer" 1 '' "~^semantic error: '->x' on '\\\$next->pid', which is pid_t, not a struct, union or pointer" -- \
  "$UKSTAP" -p4 -e 'probe kernel.trace("sched_switch") { println($next->pid->x) }'
t "@cast to an unknown type" 1 '' "~^semantic error: @cast: unknown type 'no_such_struct'" -- \
  "$UKSTAP" -p4 -e 'probe kernel.trace("sched_switch") { println(@cast(0, "no_such_struct")->x) }'
t "a record field with a BTF argument in one probe" 1 '' \
  "~^semantic error: tracepoint field '\\\$next_pid' cannot be read with BTF argument '\\\$next' in one probe" -- \
  "$UKSTAP" -p4 -e 'probe kernel.trace("sched_switch") { println($next->pid + $next_pid) }'
t "index out of range of a char array field" 1 '' "~^semantic error: index 16 is out of range for '\\\$next_comm' \(char\[16\]\)" -- \
  "$UKSTAP" -p4 -e 'probe kernel.trace("sched_switch") { println($next_comm[16]) }'
t_done
