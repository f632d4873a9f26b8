#!/bin/bash
# Probe runs the kernel skipped are in SystemTap's exit line "WARNING: Number of errors: 0,
# skipped probes: N" (loader/exit_report.h KernelSkips). Truth: the kernel's own counter of the
# probe's program, bpf_prog_info.recursion_misses as `bpftool prog show` prints it, read by the
# -c command from ukstap's own descriptors (/proc/PPID/fdinfo) while the probe is attached.
#
# How a skip is made to happen: a tp_btf program is not run again on a CPU where it is running
# (bpf_trace_run: prog->active). kfree is called everywhere, in task context with interrupts on
# and in the softirqs an interrupt runs on its way out (RCU callbacks free memory); a handler
# made slow (a loop) is often interrupted by one of those, whose kfree is then skipped. How
# often is up to the machine, so the command waits for the condition (the counter above 0,
# bounded), not for a time. The skips can only grow after the read: N >= that count > 0.
# Root only; under CI=true not being root is a failure, never a skip.
# e2e-schedule: alone (run-e2e.sh): for a second or more every kfree of the machine is slowed.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

CMD=$T_TMP/misses.sh
cat > "$CMD" <<'EOF'
# the probe's program among ukstap's descriptors (ukstap is this command's parent)
id=
for f in /proc/$PPID/fdinfo/*; do
  p=$(sed -n 's/^prog_id:[[:space:]]*//p' "$f" 2> /dev/null)
  [ -n "$p" ] && bpftool prog show id "$p" | grep -q ' name stp_probe_0 ' && id=$p && break
done
[ -n "$id" ] || { echo "no stp_probe_0 among ukstap's descriptors"; exit 1; }
m=0
end=$((SECONDS + 60))
while [ "$m" = 0 ] && [ $SECONDS -lt $end ]; do
  for i in 1 2 3 4 5 6 7 8; do /bin/true; done  # exits: memory freed in RCU softirqs
  m=$(bpftool prog show id "$id" | sed -n 's/.* recursion_misses \([0-9]*\).*/\1/p')
  m=${m:-0}
done
echo "kernel $m"
EOF
KFREE_STP='global n probe kernel.trace("kmem:kfree") { if ($ptr) for (i = 0; i < 2000; i++) n++ }'
t "kfree, a slow tp_btf handler: run" 0 '~^kernel [1-9]' "~^$T_SKIP_LINE\$" -- \
  "$UKSTAP" -D MAXACTION=100000 -e "$KFREE_STP" -c "bash $CMD"
# t's own files of the run, kept before the next check writes them
cp "$T_TMP/out" "$T_TMP/run.out"
cp "$T_TMP/err" "$T_TMP/run.err"
check_skips() {
  local kernel n
  kernel=$(sed -n 's/^kernel //p' "$T_TMP/run.out")
  n=$(sed -n 's/^WARNING: Number of errors: 0, skipped probes: \([0-9]*\)$/\1/p' "$T_TMP/run.err")
  t_skip_line "$T_TMP/run.err" && [ -n "$kernel" ] && [ -n "$n" ] && [ "$n" -ge "$kernel" ] && [ "$kernel" -gt 0 ] ||
    { echo "kernel's recursion_misses ${kernel:-?}, ukstap's skipped probes ${n:-?}" >&2; return 1; }
}
t "skipped probes >= the kernel's recursion_misses of the probe's program (> 0)" 0 '' '' -- check_skips
t_done
