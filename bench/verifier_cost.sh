#!/bin/bash
# What the kernel verifier spends on a script that takes user stacks (docs/DESIGN.md "The
# verifier's share of the walk"), for one or more ukstap binaries in the same run.
#
#   bench/verifier_cost.sh [-n RUNS] [UKSTAP...]     (root, libbpf; default: this tree's ukstap)
#
# Per script and binary: the verifier's own figures for the script's probe programs (pass 4's
# object loaded by bench/progs/verifier_stats.c at BPF_LOG_STATS: instructions processed, states,
# verification time; summed over the stp_probe_* programs), then RUNS warm runs (module cached,
# begin exits at once: the load and verifier, not the probes' work) timed with /usr/bin/time,
# interleaved across the binaries; the median wall, user+sys CPU and sys seconds. Not a test:
# figures for docs/BENCHMARKS.md.
set -u
here=$(cd "$(dirname "$0")" && pwd)
runs=10
while getopts n: o; do
  case $o in
    n) runs=$OPTARG ;;
    *) echo "usage: bench/verifier_cost.sh [-n RUNS] [UKSTAP...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- "$(dirname "$here")/ukstap"
[ "$(id -u)" = 0 ] || { echo "bench/verifier_cost.sh: needs root (it loads BPF programs)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -o "$tmp/verifier_stats" "$here/progs/verifier_stats.c" -lbpf ||
  { echo "bench/verifier_cost.sh: cannot build bench/progs/verifier_stats.c (libbpf-dev)" >&2; exit 1; }

names=("print_ubacktrace" "ubacktrace key" "ustack_id" "sprint+ubacktrace" "--profile")
scripts=('probe syscall.getppid { print_ubacktrace() }'
         'global s; probe syscall.getppid { s[ubacktrace()] <<< 1 }'
         'probe syscall.getppid { println(ustack_id()) }'
         'probe syscall.getppid { print(sprint_ubacktrace()) print(ubacktrace()) }'
         '')
# The arguments that run script i (a -p4 run prints the object; a run exits at begin).
args() {
  if [ -z "${scripts[$1]}" ]; then a=(--profile -c true)
  else a=(-e "${scripts[$1]} probe begin { exit() }"); fi
}
median() { sort -n | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

printf '%-18s %-28s %10s %7s %9s %7s %7s %7s\n' script ukstap processed states verify_ms wall_s cpu_s sys_s
for i in "${!names[@]}"; do
  for u in "$@"; do
    args "$i"
    obj=$("$u" -p4 "${a[@]}" 2> "$tmp/err" | tail -n 1)
    [ -f "$obj" ] || { echo "${names[$i]}: $u -p4 failed: $(tail -n 1 "$tmp/err")" >&2; continue; }
    "$tmp/verifier_stats" "$obj" | awk '$1 ~ /^stp_probe_/ {p += $3; s += $5; t += $9}
      END {print p, s, t}' > "$tmp/v.$i.$(echo "$u" | md5sum | cut -c1-8)"
    "$u" "${a[@]}" > /dev/null 2>&1  # warm the cache for the timed runs
  done
  for r in $(seq "$runs"); do
    for u in "$@"; do
      args "$i"
      /usr/bin/time -f '%e %U %S' -o "$tmp/t" "$u" "${a[@]}" > /dev/null 2>&1
      cat "$tmp/t" >> "$tmp/times.$i.$(echo "$u" | md5sum | cut -c1-8)"
    done
  done
  for u in "$@"; do
    k=$i.$(echo "$u" | md5sum | cut -c1-8)
    [ -f "$tmp/v.$k" ] || continue
    read -r p s t < "$tmp/v.$k"
    w=$(awk '{print $1}' "$tmp/times.$k" | median)
    c=$(awk '{print $2 + $3}' "$tmp/times.$k" | median)
    y=$(awk '{print $3}' "$tmp/times.$k" | median)
    printf '%-18s %-28s %10s %7s %9.1f %7.2f %7.2f %7.2f\n' "${names[$i]}" "$(echo "$u" | rev | cut -c1-28 | rev)" "$p" "$s" "$(echo "$t / 1000" | bc -l)" "$w" "$c" "$y"
  done
done
