#!/bin/bash
# Where a user-stack walk's BPF time goes (issue 15 "Cost"; docs/DESIGN.md "What a walk costs").
# bench item 1's workload (bench/progs/deep_syscalls.c, 15-frame stacks at depth 10), the BPF
# program's own run time per event (kernel.bpf_stats_enabled: ukstap -vv's "ns per run") and the
# workload's ns per syscall, for variants of one script:
#   count            a probe that counts (context, filter)
#   id_depthK        ustack_id() with -D MAXBACKTRACE=K: the walk's set-up (K=1), the leaf frame
#                    (K=2, always searched), then cached frames: the per-frame cost is the slope
#   id               ustack_id(): the whole walk, the stack stored once in a hash map
#   id+row/step/uread  as id, with one part done twice per frame (-D STP_PROF_REPEAT_*): the
#                    difference to id is that part's cost (row: mapping + row cache/search +
#                    row read; step: the CFI rule; uread: the user-stack window refills)
#   stream           print_ubacktrace(): walk + a record in the ring
#   stream-emit      the walk without its record (-D STP_PROF_NO_EMIT)
#   stream-staged    the record built in rec[] and copied into the ring (-D STP_NO_USTACK_INPLACE),
#                    as before stacks of up to 16 frames were written in place
#   stream-clock     the record's time read from the clock at every event (-D STP_NO_REC_TIME_REUSE;
#                    runtime/bpf/stp_bpf_rec_time.h)
#   ubt_key          `s[ubacktrace()] <<< 1` (a stack-id token when only used as a key)
#   ubt_text         `s[ubacktrace() . ""] <<< 1` (the text path the idiom used to take)
#   id_uregs_helper  id with the user registers from bpf_task_pt_regs every event (-D
#                    STP_NO_UREGS_CAST; runtime/bpf/stp_bpf_task_uregs.h)
#   *_nochain        id, stream, ubt_key without the caller-chain cache (-D STP_NO_CHAIN_CACHE:
#                    every event walks every frame; runtime/bpf/stp_bpf_uwalk_chain.h)
#   base_*           the same with $UKSTAP_BASE (the tree before), perf_dwarf: perf record
#                    --call-graph dwarf (default sizes); "/perf added" = added ns / perf's added ns
#   count_disp, id_disp  through the syscall dispatcher (a raw tracepoint) instead of the perf event
#   other_tp, other_disp  a probe on getpid, which the workload never calls: what every other
#                    syscall pays while a probe on one syscall is attached, either way
#   *_nostats        count, id, ubt_key (and base_*) run without -vv: no BPF column, but the
#                    workload is then not slowed by kernel.bpf_stats_enabled, which -vv turns on
#                    (two sched_clock() reads around every BPF program run, paid by the traced
#                    process and not by perf; in a VM ~50 ns an event)
# Variants interleaved, ROUNDS rounds, medians and (min-max); a round in which other processes
# made more than 1 % of the getppid() calls is left out of the BPF column. Root only.
# "/perf added" is the ratio of the medians; "/perf per round" the median (min-max) of each
# round's own ratio (with WALK_PAIRED=1, of each variant's own none/variant/perf triple).
# Usage: [UKSTAP_BASE=OLD/ukstap] [WALK_PAIRED=1] bench/walk_cost.sh [ROUNDS] [N] [VARIANT...]
set -eu
: "${UKSTAP:=$(cd "$(dirname "$0")/.." && pwd)/ukstap}"
ROUNDS=${1:-3}
N=${2:-100000}
shift 2 2>/dev/null || shift $#
D=10
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /dev/shm/ukstap-walk-cost.XXXXXX); trap 'rm -rf "$tmp"' EXIT
gcc -O2 -fomit-frame-pointer -o "$tmp/deep" "$here/progs/deep_syscalls.c"
export XDG_CACHE_HOME="$tmp/cache"
F='pid() == target()'
AGG="probe end { foreach (k in s) { print_ustack(k); println(@count(s[k])) } }"
declare -A SCRIPT EXTRA
add() { SCRIPT[$1]=$2; EXTRA[$1]=${3:-}; ORDER+=("$1"); }
ORDER=()
add none ''
add count "global n; probe syscall.getppid { if ($F) n++ }"
for k in 1 2 3 5 9 16; do
  add id_depth$k "global s; probe syscall.getppid { if ($F) s[ustack_id()] <<< 1 } probe end { }" "-D MAXBACKTRACE=$k"
done
add id_depth2_win128 "global s; probe syscall.getppid { if ($F) s[ustack_id()] <<< 1 } probe end { }" "-D MAXBACKTRACE=2 -D STP_UWIN=128"
add id_depth2_uread2 "global s; probe syscall.getppid { if ($F) s[ustack_id()] <<< 1 } probe end { }" "-D MAXBACKTRACE=2 -D STP_PROF_REPEAT_UREAD=1"
add id_depth2_noleaf "global s; probe syscall.getppid { if ($F) s[ustack_id()] <<< 1 } probe end { }" "-D MAXBACKTRACE=2 -D STP_NO_LEAF_ROW=1"
ID="global s; probe syscall.getppid { if ($F) s[ustack_id()] <<< 1 } probe end { foreach (k in s) { print_ustack_id(k); println(@count(s[k])) } }"
add id "$ID"
add id_noleaf "$ID" "-D STP_NO_LEAF_ROW=1"
add id_nochain "$ID" "-D STP_NO_CHAIN_CACHE=1"
add id_uregs_helper "$ID" "-D STP_NO_UREGS_CAST=1"
add id_win512 "$ID" "-D STP_UWIN=512"
add id_win2k "$ID" "-D STP_UWIN=2048"
add id+row "$ID" "-D STP_PROF_REPEAT_ROW=1"
add id+step "$ID" "-D STP_PROF_REPEAT_STEP=1"
add id+uread "$ID" "-D STP_PROF_REPEAT_UREAD=1"
add stream "probe syscall.getppid { if ($F) print_ubacktrace() }"
add stream-emit "probe syscall.getppid { if ($F) print_ubacktrace() }" "-D STP_PROF_NO_EMIT=1"
add stream-staged "probe syscall.getppid { if ($F) print_ubacktrace() }" "-D STP_NO_USTACK_INPLACE=1"
add stream-noquery "probe syscall.getppid { if ($F) print_ubacktrace() }" "-D STP_PROF_NO_QUERY=1"
add stream-noout "probe syscall.getppid { if ($F) print_ubacktrace() }" "-D STP_PROF_NO_OUTPUT=1"
add stream-clock "probe syscall.getppid { if ($F) print_ubacktrace() }" "-D STP_NO_REC_TIME_REUSE=1"
add ubt_key "global s; probe syscall.getppid { if ($F) s[ubacktrace()] <<< 1 } $AGG"
add ubt_text "global s; probe syscall.getppid { if ($F) s[ubacktrace() . \"\"] <<< 1 } $AGG"
# The syscall dispatcher for one probe (-D STP_SYSCALL_DISPATCH=1: a raw tracepoint, no perf
# event) against the default perf-event tracepoint; other_*: a probe on a syscall the workload
# never makes (getpid), so its getppid() calls pay only what every other syscall pays.
add count_disp "global n; probe syscall.getppid { if ($F) n++ }" "-D STP_SYSCALL_DISPATCH=1"
add id_disp "$ID" "-D STP_SYSCALL_DISPATCH=1"
add other_tp "global n; probe syscall.getpid { n++ }"
add other_disp "global n; probe syscall.getpid { n++ }" "-D STP_SYSCALL_DISPATCH=1"
add stream_nochain "probe syscall.getppid { if ($F) print_ubacktrace() }" "-D STP_NO_CHAIN_CACHE=1"
add ubt_key_nochain "global s; probe syscall.getppid { if ($F) s[ubacktrace()] <<< 1 } $AGG" "-D STP_NO_CHAIN_CACHE=1"
# Without -vv (no BPF run-time statistics): what a user's run costs the traced process.
declare -A NOSTATS
for v in count id ubt_key; do
  add ${v}_nostats "${SCRIPT[$v]}" "${EXTRA[$v]}"
  NOSTATS[${v}_nostats]=1
done
# The tree before (UKSTAP_BASE: a ukstap binary next to its runtime/ and tapsets/) and perf, for
# before/after figures and the ratios of issue 15 in one run.
if [ -n "${UKSTAP_BASE:-}" ]; then
  add base_count "global n; probe syscall.getppid { if ($F) n++ }"
  add base_id "$ID"
  add base_stream "probe syscall.getppid { if ($F) print_ubacktrace() }"
  add base_ubt_key "global s; probe syscall.getppid { if ($F) s[ubacktrace()] <<< 1 } $AGG"
  for v in count id ubt_key; do
    add base_${v}_nostats "${SCRIPT[base_$v]}" ""
    NOSTATS[base_${v}_nostats]=1
  done
fi
ORDER+=(perf_dwarf)
[ $# -gt 0 ] && ORDER=("$@")

# The workload's own CPU time per call (user + system, getrusage): unlike its wall time, not
# stretched by other processes' turns on a loaded machine.
cpu() { awk -v n=$((N + 1000)) '/^cpu_ns_self/ {printf "%.1f", $2 / n; exit}' "$@"; }
# One run of variant $1 in round $2: a line "variant ns bpf cpu drops round" in $tmp/res.
run_one() {
  local v=$1 r=$2 bin vv ns bpf drops
  if [ "$v" = none ]; then
    "$tmp/deep" "$N" "$D" > "$tmp/o" 2>&1
    echo "$v $(awk '/^ns_per_call/ {print $2}' "$tmp/o") - $(cpu "$tmp/o") - $r" >> "$tmp/res"
    return
  fi
  if [ "$v" = perf_dwarf ]; then
    perf record -q -e syscalls:sys_enter_getppid --call-graph dwarf --no-bpf-event -o "$tmp/perf.data" \
      -- "$tmp/deep" "$N" "$D" > "$tmp/o" 2> "$tmp/e" || true
    echo "$v $(awk '/^ns_per_call/ {print $2}' "$tmp/o") - $(cpu "$tmp/o") - $r" >> "$tmp/res"
    rm -f "$tmp/perf.data"
    return
  fi
  bin=$UKSTAP
  [ "${v#base_}" != "$v" ] && bin=$UKSTAP_BASE
  vv=-vv
  [ -n "${NOSTATS[$v]:-}" ] && vv=
  # shellcheck disable=SC2086
  "$bin" $vv ${EXTRA[$v]} -o "$tmp/out" -d "$tmp/deep" --ldd -e "${SCRIPT[$v]}" \
    -c "$tmp/deep $N $D" > "$tmp/o" 2> "$tmp/e" || { echo "$v failed:"; tail -3 "$tmp/e"; return; }
  ns=$(awk '/^ns_per_call/ {print $2}' "$tmp/o" "$tmp/out" | head -1)
  # Runs by other processes (the filter fails: a shell starting calls getppid) dilute the mean:
  # a round with more than 1 % of them is left out.
  bpf=$(awk -v want=$((N + 1000)) '/BPF program stp_probe_0:/ {print ($4 >= want && $4 <= want * 1.01 ? $(NF-3) : "-")}' "$tmp/e" | head -1)
  # records the ring had no room for (the reader fell behind): a probe that drops is not cheaper
  drops=$(awk '/Number of dropped records:/ {print $NF}' "$tmp/e" | head -1)
  echo "$v ${ns:--} ${bpf:--} $(cpu "$tmp/o" "$tmp/out") ${drops:-0} $r" >> "$tmp/res"
}
# WALK_PAIRED=1: every variant runs between an untraced run and a perf dwarf run of its own
# (none, variant, perf_dwarf), so each ratio's three figures come from the same few seconds; the
# per-round ratio column then uses that triple (a loaded machine moves perf's figure by tens of
# percent from one minute to the next). Otherwise each round runs ORDER once.
for r in $(seq "$ROUNDS"); do
  for v in "${ORDER[@]}"; do
    if [ -n "${WALK_PAIRED:-}" ] && [ "$v" != none ] && [ "$v" != perf_dwarf ]; then
      run_one none "$r.$v"
      run_one "$v" "$r.$v"
      run_one perf_dwarf "$r.$v"
    elif [ -z "${WALK_PAIRED:-}" ]; then
      run_one "$v" "$r"
    fi
  done
done
stat() {  # stat COLUMN VARIANT -> "median (min-max)"
  awk -v c="$1" -v v="$2" '$1 == v && $c != "-" && $c != "" {print $c}' "$tmp/res" | sort -n |
    awk '{a[NR]=$1} END {if (NR) printf "%s (%s-%s)", a[int((NR+1)/2)], a[1], a[NR]; else printf "-"}'
}
med() { awk -v v="$1" '$1 == v && $2 != "" {print $2}' "$tmp/res" | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }
none=$(med none)
perf=$(med perf_dwarf)
# The ratio per round: (variant - none) / (perf - none) with that round's (or, paired, that
# triple's) own none and perf runs; median (min-max) over the rounds. Robust where the ratio of
# the medians is not: one slow perf round moves the median perf figure for every variant.
rratio() {
  awk -v v="$1" '$1 == "none" {n[$6] = $2} $1 == "perf_dwarf" {p[$6] = $2} $1 == v {a[$6] = $2}
    END {for (r in a) if ((r in n) && (r in p) && a[r] != "" && p[r] > n[r]) printf "%.3f\n", (a[r] - n[r]) / (p[r] - n[r])}' "$tmp/res" |
    sort -n | awk '{a[NR]=$1} END {if (NR) printf "%.3f (%.3f-%.3f)", a[int((NR+1)/2)], a[1], a[NR]; else printf "-"}'
}
printf '%-16s %-26s %-10s %-12s %-24s %-24s %-24s %s\n' variant "workload ns/syscall" "added ns" "/perf added" "/perf per round" "BPF ns/event" "cpu ns/call" "dropped records"
for v in "${ORDER[@]}"; do
  m=$(med "$v")
  add=$(awk -v a="$m" -v b="$none" 'BEGIN {if (a != "" && b != "") printf "%.0f", a - b; else printf "-"}')
  rat=$(awk -v a="$m" -v b="$none" -v p="$perf" 'BEGIN {if (a != "" && b != "" && p != "" && p > b) printf "%.2f", (a - b) / (p - b); else printf "-"}')
  rr=-
  [ "$v" != none ] && [ "$v" != perf_dwarf ] && rr=$(rratio "$v")
  printf '%-16s %-26s %-10s %-12s %-24s %-24s %-24s %s\n' "$v" "$(stat 2 "$v")" "$add" "$rat" "$rr" "$(stat 3 "$v")" "$(stat 4 "$v")" "$(stat 5 "$v")"
done
