#!/bin/bash
# Start-up benchmark: time from launching ukstap to the first probe firing, for
#   - `probe begin` (a native probe: passes 1-4, load, attach, then begin), and
#   - a `syscall.getpid` probe (BPF tracepoint) hit by a `-c` program that calls getpid at once,
# each with a cold compile (an empty cache: XDG_CACHE_HOME is a fresh directory every run) and
# with the module cached (the same script run once before). The probe prints gettimeofday_ns();
# the shell takes its own wall clock just before exec'ing ukstap; the difference is the start-up.
# Also reports the whole run's wall time (start to ukstap's exit).
#
#   bench/startup.sh [-n RUNS]      (root; from a built tree; `make bench` runs it)
#
# Prints median, min and max over RUNS runs (default 5) in ms.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
UKSTAP=${UKSTAP:-$top/ukstap}
runs=5
while [ $# -gt 0 ]; do
  case $1 in
    -n) runs=$2; shift 2 ;;
    -k) shift ;;   # accepted for bench/run (frontend.sh's keep flag); nothing to keep here
    *) echo "usage: $0 [-n RUNS]" >&2; exit 2 ;;
  esac
done
[ -x "$UKSTAP" ] || { echo "startup.sh: $UKSTAP is not built (make)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "startup.sh: needs root (pass 5 loads BPF programs)" >&2; exit 1; }
export LC_ALL=C

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ukstap-startup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
KT=$tmp/ktarget
gcc -O2 -o "$KT" "$top/testsuite/e2e/progs/ktarget.c"

BEGIN_SCRIPT='probe begin { printf("%d\n", gettimeofday_ns()); exit() }'
GETPID_SCRIPT='probe syscall.getpid { if (pid() == target()) { printf("%d\n", gettimeofday_ns()); exit() } }'

# one_run CACHE_DIR ARGS...: prints "FIRST_PROBE_MS TOTAL_MS" (or "fail ...")
one_run() {
  local cache=$1 t0 t1 fired
  shift
  t0=$(date +%s%N)
  if ! XDG_CACHE_HOME=$cache "$UKSTAP" -w -o "$tmp/out" "$@" > /dev/null 2> "$tmp/err"; then
    echo "fail: $(head -n 3 "$tmp/err" | tr '\n' ' ')"; return
  fi
  t1=$(date +%s%N)
  fired=$(head -n 1 "$tmp/out")
  [[ $fired =~ ^[0-9]+$ ]] || { echo "fail: no timestamp printed ('$fired')"; return; }
  awk -v a="$t0" -v f="$fired" -v b="$t1" 'BEGIN { printf "%.1f %.1f\n", (f - a) / 1e6, (b - a) / 1e6 }'
}

stats() {  # stats FILE COLUMN: median min max
  sort -n -k"$2","$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
    if (NR == 0) { print "- - -"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'
}

printf '%-28s %26s   %26s\n' '' 'to first probe (ms)' 'whole run (ms)'
printf '%-28s %8s %8s %8s   %8s %8s %8s\n' '' median min max median min max
status=0
for probe in begin getpid; do
  if [ $probe = begin ]; then args=(-e "$BEGIN_SCRIPT"); else args=(-c "$KT getpid 1" -e "$GETPID_SCRIPT"); fi
  for mode in cold cached; do
    : > "$tmp/results"
    warm=$tmp/cache-warm-$probe
    [ $mode = cached ] && one_run "$warm" "${args[@]}" > /dev/null   # prime the cache
    for i in $(seq "$runs"); do
      if [ $mode = cold ]; then cache=$tmp/cache-cold-$probe-$i; else cache=$warm; fi
      r=$(one_run "$cache" "${args[@]}")
      case $r in fail*) echo "$probe/$mode run $i: $r" >&2; status=1 ;; *) echo "$r" >> "$tmp/results" ;; esac
    done
    read -r m1 lo1 hi1 <<< "$(stats "$tmp/results" 1)"
    read -r m2 lo2 hi2 <<< "$(stats "$tmp/results" 2)"
    printf '%-28s %8s %8s %8s   %8s %8s %8s\n' "$probe, $mode ($(wc -l < "$tmp/results")/$runs ok)" "$m1" "$lo1" "$hi1" "$m2" "$lo2" "$hi2"
  done
done
exit $status
