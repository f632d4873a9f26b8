#!/bin/bash
# Pass 4 (clang -> BPF object + native .so) of scripts with hundreds of probes: wall and CPU
# seconds (ukstap and its compilers, /usr/bin/time's %e and %U+%S of the whole -p4 run), each
# with an empty cache (XDG_CACHE_HOME a fresh directory, so vmlinux.h is made again too) and
# then warm (the same cache: nothing compiled). Also the size of the generated C and of the
# object's program text.
#
#   bench/pass4_time.sh [-n RUNS] [-q] [UKSTAP...]
#     -n  cold runs per script (default 1; the figure is the median)
#     -q  the two syscall scripts only (errsnoop.stp took 2 CPU minutes before the change)
#     UKSTAP  one or more ukstap binaries to compare in the same run (default ./ukstap)
# Scripts: the syscall.* one-liner, syscall.* + syscall.*.return (721 probes), and SystemTap's
# process/errsnoop.stp when the examples are installed. Not a test: figures for notes/docs.
set -u
runs=1 quick=
while getopts n:q o; do
  case $o in
    n) runs=$OPTARG ;;
    q) quick=1 ;;
    *) sed -n '2,12p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- "$(cd "$(dirname "$0")/.." && pwd)/ukstap"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

examples=/usr/share/systemtap/examples/process
declare -a names=(syscall.star syscall.star+return)
declare -a scripts=('probe syscall.* { printf("%s\n", name) }'
                    'probe syscall.*, syscall.*.return { printf("%s %s\n", name, argstr) }')
[ -z "$quick" ] && [ -f "$examples/errsnoop.stp" ] && { names+=(errsnoop); scripts+=(FILE:$examples/errsnoop.stp); }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# run UKSTAP SCRIPT CACHE -> "wall cpu" of one -p4 run
run() {
  local uk=$1 script=$2 cache=$3 out
  local -a args
  if [[ $script == FILE:* ]]; then args=("${script#FILE:}" 1 10); else args=(-e "$script"); fi
  out=$(XDG_CACHE_HOME=$cache /usr/bin/time -f '%e %U %S' "$uk" -p4 "${args[@]}" 2>&1 > /dev/null) || {
    echo "pass4_time: $uk -p4 failed:" >&2; echo "$out" >&2; return 1; }
  echo "$out" | tail -1 | awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }'
}

printf '%-22s %-10s %9s %9s %9s %9s %9s\n' script ukstap 'C KiB' 'text KiB' 'cold wall' 'cold CPU' 'warm wall'
for i in "${!names[@]}"; do
  for uk in "$@"; do
    script=${scripts[$i]}
    if [[ $script == FILE:* ]]; then p3=("${script#FILE:}" 1 10); else p3=(-e "$script"); fi
    csize=$("$uk" -p3 "${p3[@]}" 2> /dev/null | wc -c)
    walls=() cpus=()
    for r in $(seq "$runs"); do
      cache=$tmp/cold-$i-$r-$RANDOM
      read -r w c < <(run "$uk" "$script" "$cache") || exit 1
      walls+=("$w") cpus+=("$c")
    done
    read -r ww _ < <(run "$uk" "$script" "$cache") || exit 1
    obj=$(find "$cache" -name '*.bpf.o' | head -1)
    text=0
    [ -n "$obj" ] && text=$(size -A "$obj" | awk '$1 ~ /^(raw_tp|tracepoint|uprobe|uretprobe|perf_event|tp_btf|\.text)/ { s += $2 } END { print s + 0 }')
    printf '%-22s %-10s %9d %9d %9s %9s %9s\n' "${names[$i]}" "$(basename "$(dirname "$uk")")" \
      $((csize / 1024)) $((text / 1024)) \
      "$(printf '%s\n' "${walls[@]}" | median)" "$(printf '%s\n' "${cpus[@]}" | median)" "$ww"
    rm -rf "$tmp"/cold-$i-*
  done
done
