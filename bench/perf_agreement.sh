#!/bin/bash
# Agreement of ukstap's in-kernel DWARF user stacks with `perf record --call-graph dwarf` on
# real programs (results: docs/BENCHMARKS.md "User stacks vs perf --call-graph dwarf
# (agreement)"). For each program and one syscall it runs
#   (a) ukstap -d BINARY --ldd, a probe on the syscall filtered to the command (pid() ==
#       target() || ppid() == target()) printing pn() and print_ubacktrace(), and
#   (b) perf record -e syscalls:sys_enter_NAME --call-graph dwarf,65528 -m 16M --no-bpf-event
#       -o /dev/shm/... -- CMD, then perf script --no-inline -F ...,ip,sym,symoff,dso,
# and compares the *distributions* of stacks (both tools see different event instances):
# every stack becomes a sequence of (module basename, function), names normalized (versions
# "@@..." stripped, aliases at one address -- __GI___read / read -- folded to one name from the
# module's symbol tables, ukstap's sub_XXXX and perf's [unknown] both "?", module kept).
# It also checks, independently of perf, that every caller frame ukstap reports sits right
# after a call instruction in the file, and that both tools name the same return address the
# same way. Wall clock (median of 3) bare / under ukstap / under perf record, perf.data bytes
# per sample. Root only (BPF + perf tracepoints). Usage: bench/perf_agreement.sh [KEEPDIR]
# ~1 minute on the 2-CPU development VM.
set -eu
: "${UKSTAP:=$(cd "$(dirname "$0")/.." && pwd)/ukstap}"
[ "$(id -u)" = 0 ] || { echo "bench/perf_agreement.sh: needs root" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench/perf_agreement.sh: perf not installed" >&2; exit 1; }
for i in 1 2 3 4 5 6 7 8 9 10; do [ -x "$UKSTAP" ] && break; sleep 3; done  # being rebuilt?
work=${1:-}
if [ -z "$work" ]; then work=$(mktemp -d /dev/shm/perf_agreement.XXXXXX); trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work"
export XDG_CACHE_HOME="$work/cache"
# 20 MB of random lines for sort (76 random base64 characters a line).
base64 -w 76 /dev/urandom 2>/dev/null | head -c 20000000 > "$work/sort_input.txt" || true

UKSTAP="$UKSTAP" WORK="$work" exec /usr/bin/python3 "$(dirname "$0")/perf_agreement.py"
