#!/bin/bash
# ukstap's memory while short processes come and go: a system-wide user-stack script runs while
# a shell loop runs /bin/true as fast as it can; ukstap's VmRSS (/proc/PID/status) is sampled
# against the number of processes created meanwhile (/proc/stat "processes": the kernel's count
# of forks). Every exited process used to keep its mappings for good (~3.2 KB each); they are
# now bounded (vma-tracker/tracker.h Retention), so RSS levels off.
#
#   bench/churn.sh [-t SECONDS] [-i INTERVAL] [-e SCRIPT]
#     -t  how long to churn (default 600)      -i  seconds between samples (default 30)
#     -e  the ukstap script (default: a stack at every process's exit_group, printed to
#         /dev/null, so each exiting process's mappings are looked up after its exit)
# Prints one line per sample and a summary: RSS at the start, the end, the largest, and the
# growth per 1,000 processes over the second half (0 when RSS has levelled off). Root.
set -u
secs=600 every=30
script='probe syscall.exit_group { print_ubacktrace() }'
while getopts t:i:e: o; do
  case $o in
    t) secs=$OPTARG ;; i) every=$OPTARG ;; e) script=$OPTARG ;;
    *) sed -n '2,15p' "$0" >&2; exit 2 ;;
  esac
done
: "${UKSTAP:=$(cd "$(dirname "$0")/.." && pwd)/ukstap}"
tmp=$(mktemp -d); churn= uk=
trap 'kill $churn $uk 2> /dev/null; rm -rf "$tmp"' EXIT

forks() { awk '/^processes/ { print $2 }' /proc/stat; }
rss_kb() { awk '/^VmRSS/ { print $2 }' /proc/"$1"/status 2> /dev/null; }

"$UKSTAP" -e "$script probe begin { warn(\"ready\") }" > /dev/null 2> "$tmp/err" &
uk=$!
for _ in $(seq 1200); do grep -q ready "$tmp/err" && break; kill -0 $uk 2> /dev/null || break; sleep 0.1; done
grep -q ready "$tmp/err" || { echo "churn: ukstap did not start:" >&2; cat "$tmp/err" >&2; exit 1; }

bash -c 'while :; do /bin/true; done' &
churn=$!
f0=$(forks) start=$(rss_kb $uk) t0=$SECONDS
printf '%8s %12s %10s\n' seconds processes 'RSS MiB'
printf '%8d %12d %10.1f\n' 0 0 "$(echo "$start / 1024" | bc -l)"
samples=()
while [ $((SECONDS - t0)) -lt "$secs" ]; do
  sleep "$every"
  kill -0 $uk 2> /dev/null || { echo "churn: ukstap exited:" >&2; cat "$tmp/err" >&2; exit 1; }
  n=$(( $(forks) - f0 )) r=$(rss_kb $uk)
  samples+=("$((SECONDS - t0)) $n $r")
  printf '%8d %12d %10.1f\n' $((SECONDS - t0)) "$n" "$(echo "$r / 1024" | bc -l)"
done
kill $churn; wait $churn 2> /dev/null
kill -INT $uk; wait $uk
printf '%s\n' "${samples[@]}" | awk -v start="$start" '
  { t[NR] = $1; n[NR] = $2; r[NR] = $3; if ($3 > max) max = $3 }
  END {
    h = int(NR / 2) + 1
    per = (n[NR] > n[h]) ? (r[NR] - r[h]) / ((n[NR] - n[h]) / 1000) : 0
    printf "RSS: %.1f MiB at the start, %.1f MiB after %d processes in %d s, largest %.1f MiB;\n",
      start / 1024, r[NR] / 1024, n[NR], t[NR], max / 1024
    printf "second half: %+.1f KiB per 1,000 processes\n", per
  }'
