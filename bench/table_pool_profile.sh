#!/bin/bash
# The row search under timer sampling (issue 15, the row pool's format): cc1plus compiling a
# C++ file that includes much of the standard library, sampled by timer.profile with
# s[ustack_id()] <<< 1. Samples land on many distinct pcs, so most frames miss the row cache
# and are searched (bench/table_pool_cost.sh's stacks mostly hit it). Two ukstap builds,
# interleaved; per build the median over rounds of the probe's BPF ns per run (-vv: the kernel's
# run_time_ns/run_cnt) and the samples. Root only.
# Usage: bench/table_pool_profile.sh UKSTAP_A UKSTAP_B [ROUNDS]
set -eu
A=$1 B=$2 R=${3:-5}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
cd "$tmp"
printf '#include <%s>\n' iostream map regex vector string algorithm unordered_map functional memory sstream > big.cpp
echo 'int main() { std::regex r("a+b"); std::map<int, std::string> m; return std::regex_match("aab", r) + (int)m.size(); }' >> big.cpp
args=$(g++ -### -c big.cpp -o big.o 2>&1 | grep '/cc1plus ' | sed 's/ -o [^ ]*\.s/ -o \/dev\/null/; s/"//g')
S='global s; probe timer.profile { if (pid() == target()) s[ustack_id()] <<< 1 } probe end { foreach (k in s) n++ } global n'
for r in $(seq 0 "$R"); do
  for b in A B; do
    "${!b}" -vv -o /dev/null -e "$S" -c "$args" > out 2> err || true
    [ "$r" = 0 ] && continue
    bpf=$(sed -n 's/^BPF program stp_probe_0: \([0-9]*\) runs, \([0-9]*\) ns per run/\2 \1/p' err | head -1)
    echo "$b ${bpf:-? ?}" >> all
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for b in A B; do
  printf '%s BPF ns/sample %s (samples %s)\n' "$b" "$(awk -v b=$b '$1==b {print $2}' all | median)" \
    "$(awk -v b=$b '$1==b {print $3}' all | median)"
done
echo "(A = $A, B = $B; median of $R rounds, interleaved)"
