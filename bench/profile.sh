#!/bin/bash
# Overhead of 999 Hz stack sampling (issue 7; issue 6 item 4): `sort` of 2M random words, run
#   bare            no tracer
#   ukstap          ukstap --profile=999 -o FILE.folded -c 'sort ...' (full DWARF user stacks +
#                   kernel stacks, symbolized, folded)
#   perf dwarf      perf record -F 999 --call-graph dwarf -- sort ...   (then perf script, timed
#                   apart: the unwinding perf does offline)
#   bpftrace        bpftrace -e 'profile:hz:999 /pid == cpid/ { @[ustack] = count(); }' -c ...
# Wall time and CPU time (user+sys of the tracer and the workload: /usr/bin/time on the whole
# command), median of RUNS runs; ratios to bare. Root only. Usage: bench/profile.sh [RUNS]
set -eu
: "${UKSTAP:=$(cd "$(dirname "$0")/.." && pwd)/ukstap}"
RUNS=${1:-3}
[ "$(id -u)" = 0 ] || { echo "bench/profile.sh: needs root" >&2; exit 1; }
tmp=$(mktemp -d /dev/shm/ukstap-profile-bench.XXXXXX); trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
# 2M words, deterministic: the same input every run and every machine.
seq 2000000 | awk 'BEGIN {srand(42)} {printf "%08x%d\n", int(rand() * 4294967295), $1}' > "$tmp/words"
SORT="/usr/bin/sort $tmp/words -o /dev/null"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # measure LABEL CMD... -> "wall cpu" medians
  local label=$1; shift
  : > "$tmp/w"; : > "$tmp/c"
  for i in $(seq "$RUNS"); do
    /usr/bin/time -f '%e %U %S' -o "$tmp/t" "$@" > /dev/null 2> "$tmp/err" || { echo "$label failed:" >&2; tail -3 "$tmp/err" >&2; }
    awk '{print $1 >> "'"$tmp/w"'"; print $2 + $3 >> "'"$tmp/c"'"}' "$tmp/t"
  done
  echo "$(median < "$tmp/w") $(median < "$tmp/c")"
}

"$UKSTAP" --profile=99 -o "$tmp/warm.folded" -c "/bin/true" > /dev/null 2>&1 || true  # compile cache
read -r bw bc < <(measure bare $SORT)
read -r uw uc < <(measure ukstap "$UKSTAP" --profile=999 -o "$tmp/p.folded" -c "$SORT")
usamples=$(awk '{n += $NF} END {print n + 0}' "$tmp/p.folded")
ustart=$(awk '$1 ~ /;_start;|;clone3;|;start_thread;/ {n += $NF} END {print n + 0}' "$tmp/p.folded")
read -r pw pc < <(measure perf perf record -q -F 999 --call-graph dwarf -o "$tmp/perf.data" -- $SORT)
t0=$(date +%s.%N); perf script -i "$tmp/perf.data" > "$tmp/perf.txt" 2>/dev/null; t1=$(date +%s.%N)
psamples=$(grep -c '^sort ' "$tmp/perf.txt" || true)
pbytes=$(stat -c %s "$tmp/perf.data")
if command -v bpftrace > /dev/null; then
  read -r tw tc < <(measure bpftrace bpftrace -e 'profile:hz:999 /pid == cpid/ { @[ustack] = count(); }' -c "$SORT")
else
  tw=nan; tc=nan
fi

r() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "| tool | wall | wall ratio | CPU (user+sys) | CPU ratio | notes |"
echo "|---|---:|---:|---:|---:|---|"
echo "| untraced sort | ${bw} s | 1.00 | ${bc} s | 1.00 | 2M words |"
echo "| ukstap --profile=999 | ${uw} s | $(r "$uw" "$bw") | ${uc} s | $(r "$uc" "$bc") | $usamples samples, $ustart reach _start/thread start; folded file written |"
echo "| perf record -F 999 --call-graph dwarf | ${pw} s | $(r "$pw" "$bw") | ${pc} s | $(r "$pc" "$bc") | $psamples samples, $((pbytes / 1024)) KiB perf.data; perf script: $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') s more |"
echo "| bpftrace profile:hz:999 @[ustack] | ${tw} s | $(r "$tw" "$bw") | ${tc} s | $(r "$tc" "$bc") | frame-pointer stacks |"
echo "(median of $RUNS runs; CPU = user+sys of the tracer and sort together)"
