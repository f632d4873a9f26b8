#!/bin/bash
# Per-event cost of the user-stack walk with two ukstap builds, interleaved in one session
# (issue 15, the row pool's format): bench/progs/deep_syscalls.c, N getppid() calls at depth 10
# (15-frame stacks), -O2 -fomit-frame-pointer. Per build and round: count only, streamed
# print_ubacktrace(), aggregated ustack_id(); the workload's ns per call and the probe's BPF ns
# per run (-vv: the kernel's run_time_ns/run_cnt of the probe program). Root only.
# Usage: bench/table_pool_cost.sh UKSTAP_A UKSTAP_B [N] [ROUNDS]; prints medians per build.
set -eu
A=$1 B=$2 N=${3:-200000} R=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
gcc -O2 -fomit-frame-pointer -o "$tmp/deep" "$here/progs/deep_syscalls.c"
export XDG_CACHE_HOME="$tmp/cache"
declare -A S=(
  [count]='global n; probe syscall.getppid { if (pid() == target()) n++ }'
  [ubt]='probe syscall.getppid { if (pid() == target()) print_ubacktrace() }'
  [agg]='global s; probe syscall.getppid { if (pid() == target()) s[ustack_id()] <<< 1 } probe end { foreach (k in s) n++ } global n')
for r in $(seq 0 "$R"); do   # round 0 warms the caches (modules, tables) and is not counted
  for v in count ubt agg; do
    for b in A B; do
      u=${!b}
      "$u" -vv -o /dev/null -d "$tmp/deep" --ldd -e "${S[$v]}" -c "$tmp/deep $N 10" > "$tmp/out" 2> "$tmp/err" || true
      [ "$r" = 0 ] && continue
      ns=$(awk '/^ns_per_call/ {print $2}' "$tmp/out" "$tmp/err" | head -1)
      bpf=$(sed -n 's/^BPF program stp_probe_0: [0-9]* runs, \([0-9]*\) ns per run/\1/p' "$tmp/err" | head -1)
      echo "$b $v ${ns:-?} ${bpf:-?}" >> "$tmp/all"
    done
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-6s %-6s %12s %14s\n' build mode ns/call BPF-ns/event
for b in A B; do for v in count ubt agg; do
  printf '%-6s %-6s %12s %14s\n' "$b" "$v" \
    "$(awk -v b=$b -v v=$v '$1==b && $2==v {print $3}' "$tmp/all" | median)" \
    "$(awk -v b=$b -v v=$v '$1==b && $2==v {print $4}' "$tmp/all" | median)"
done; done
echo "(A = $A, B = $B; median of $R rounds of $N calls, interleaved)"
