#!/bin/bash
# Per-event cost of the in-kernel user-stack unwind (issue 5), measured inside the workload:
# bench/progs/deep_syscalls.c makes N getppid() syscalls at call depth D (-O2
# -fomit-frame-pointer: CFI only). Compared per syscall:
#   none      no tracer
#   count     ukstap, a probe that counts (probe + context cost)
#   ubt       ukstap, print_ubacktrace() (walk + record; ukstap symbolizes on the other core)
# Root only. Usage: bench/unwind.sh [N] ; prints a table (median of 5 runs per cell).
set -eu
: "${UKSTAP:=$(cd "$(dirname "$0")/.." && pwd)/ukstap}"
N=${1:-200000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
gcc -O2 -fomit-frame-pointer -o "$tmp/deep" "$here/progs/deep_syscalls.c"
export XDG_CACHE_HOME="$tmp/cache"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() {  # run LABEL DEPTH CMD...  -> median ns per syscall of 5 runs
  local label=$1 depth=$2; shift 2
  for i in 1 2 3 4 5; do
    "$@" 2>/dev/null | awk '/^ns_per_call/ {print $2}'
  done | median
}

printf '%-8s %6s %10s %10s %10s %12s\n' depth none count ubt per-stack ns/frame
for D in 1 12 48; do
  none=$(run none $D "$tmp/deep" "$N" "$D")
  count=$(run count $D "$UKSTAP" -o /dev/null -e 'global n; probe syscall.getppid { if (pid() == target()) n++ } probe end { }' -c "$tmp/deep $N $D")
  ubt=$(run ubt $D "$UKSTAP" -o /dev/null -d "$tmp/deep" --ldd -e 'probe syscall.getppid { if (pid() == target()) print_ubacktrace() }' -c "$tmp/deep $N $D")
  per=$(awk -v a="$ubt" -v b="$count" 'BEGIN {printf "%.0f", a - b}')
  frames=$((D + 6))   # syscall, leaf, D levels, main, __libc_start_call_main, __libc_start_main, _start
  printf '%-8s %6s %10s %10s %10s %12s\n' "$D" "$none" "$count" "$ubt" "$per" \
    "$(awk -v p="$per" -v f="$frames" 'BEGIN {printf "%.0f", p / f}')"
done
echo "(ns per syscall, median of 5 runs of $N syscalls; per-stack = ubt - count; frames = depth + 6)"
