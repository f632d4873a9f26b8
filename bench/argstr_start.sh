#!/bin/bash
# Start-up of `probe syscall.* { ... argstr }` (SystemTap's strace.stp shape): 308 programs, one
# per syscall alias, each verified by the kernel on every load, cached or not.
#
#   bench/argstr_start.sh [-n RUNS] UKSTAP...     (root)
#
# For each run and each binary, interleaved (so a change of load hits all alike): one cached
# start (the module compiled by an earlier run) and one cold start (--disable-cache: pass 4
# every time). Prints per start: wall, user and system CPU seconds (/usr/bin/time) and the
# "BPF load" milliseconds of -v's pass 5 line. Not a test: figures for docs/BENCHMARKS.md.
set -u
runs=3
while getopts n: o; do
  case $o in
    n) runs=$OPTARG ;;
    *) sed -n '2,9p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "argstr_start.sh: needs root" >&2; exit 1; }
script='probe syscall.* { if (pid()==target()) printf("%s(%s)\n", name, argstr) }'
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
one() {  # label binary [options...]
  local label=$1 bin=$2
  shift 2
  /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$bin" -v "$@" -e "$script" -c true \
    > /dev/null 2> "$tmp/err"
  local load
  load=$(sed -n 's/.*BPF load \([0-9]*\) (\([0-9]*\) programs).*/\1 ms, \2 programs/p' "$tmp/err")
  printf '%-8s %-40s wall/user/sys %s s  BPF load %s\n' "$label" "$bin" "$(cat "$tmp/time")" "$load"
}
for u in "$@"; do one warmup "$u" > /dev/null; done
for ((i = 1; i <= runs; i++)); do
  for u in "$@"; do one cached "$u"; one cold "$u" --disable-cache; done
done
