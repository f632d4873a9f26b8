#!/bin/bash
# What one bpf_probe_read_user and the task helpers cost a BPF program on this kernel, by the
# read's destination (docs/DESIGN.md "What a walk costs": the caller-chain cache's one read of
# the stack span). bench/progs/uread_cost.bpf.c's programs, each attached alone to the getppid()
# tracepoint, filtered to the loader's pid; BPF ns per run (kernel.bpf_stats_enabled), ROUNDS
# interleaved rounds, median (min-max). A read variant's cost is its figure minus regs_helper's
# (the same program without the read). Root, clang, bpftool, libbpf.
# Usage: bench/uread_cost.sh [ROUNDS] [CALLS]
set -eu
ROUNDS=${1:-5}
CALLS=${2:-100000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /dev/shm/ukstap-uread-cost.XXXXXX); trap 'rm -rf "$tmp"' EXIT
bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$tmp/vmlinux.h"
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$tmp" -c "$here/progs/uread_cost.bpf.c" -o "$tmp/u.bpf.o"
bpftool gen skeleton "$tmp/u.bpf.o" name uread_cost_bpf > "$tmp/uread_cost.skel.h"
gcc -O2 -I"$tmp" -o "$tmp/uread_cost" "$here/progs/uread_cost.c" -lbpf
runs=(empty:8 pid_filter:8 task_btf:8 regs_helper:8 regs_cast:8)
for d in mmap vmalloc slab pages percpu; do runs+=("read_$d:8" "read_$d:632"); done
runs+=(read_stack:8 read_stack:448)
for r in $(seq "$ROUNDS"); do
  for x in "${runs[@]}"; do
    "$tmp/uread_cost" "${x%:*}" "${x#*:}" "$CALLS" || echo "${x%:*} ${x#*:} - -"
  done
done > "$tmp/res"
printf '%-14s %-6s %s\n' program bytes "BPF ns/run"
for x in "${runs[@]}"; do
  awk -v p="${x%:*}" -v n="${x#*:}" '$1 == p && $2 == n && $3 != "-" {print $3}' "$tmp/res" | sort -n |
    awk -v p="${x%:*}" -v n="${x#*:}" '{a[NR]=$1} END {if (NR) printf "%-14s %-6s %s (%s-%s)\n", p, (p ~ /^read_/ ? n : "-"), a[int((NR+1)/2)], a[1], a[NR]}'
done
