#!/bin/bash
# Loops in kernel-context probes: the bpf_iter_num iterator (6.4+) against bpf_loop() callbacks
# (5.17+, what Debian 12's 6.1 gets), both forced on this kernel with $UKSTAP_LOOP_IMPL. For
# each loop shape: the probe program's verified instructions and its translated size
# (verified_insns and xlated_prog_len from bpf_obj_get_info_by_fd, read by the target while
# ukstap runs), and the
# cost per event (the target's getppid() calls timed with and without the probe's loop).
#
#   bench/loop_impl.sh [-n EVENTS] [UKSTAP]
# Not a test: figures for notes/docs. Root.
set -u
events=20000
while getopts n: o; do
  case $o in n) events=$OPTARG ;; *) sed -n '2,9p' "$0" >&2; exit 2 ;; esac
done
shift $((OPTIND - 1))
uk=${1:-$(cd "$(dirname "$0")/.." && pwd)/ukstap}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache

declare -a names=(none for100 for900 nested30x30)
declare -a bodies=('r++'
                   'for (i = 0; i < 100; i++) r += i'
                   'for (i = 0; i < 900; i++) r += i'
                   'for (i = 0; i < 30; i++) for (j = 0; j < 30; j++) r += j')
# verified_insns of a program id (Debian 12's bpftool 7.1 does not print it).
cat > "$tmp/vinsns.c" <<'C'
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    int fd = bpf_prog_get_fd_by_id(atoi(argv[i]));
    struct bpf_prog_info info = {0};
    __u32 len = sizeof(info);
    if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) continue;
    printf("%s %u %u\n", argv[i], info.verified_insns, info.xlated_prog_len);
  }
  return 0;
}
C
cc -O -o "$tmp/vinsns" "$tmp/vinsns.c" -lbpf || exit 1
cat > "$tmp/ids.sh" <<SH
for id in \$(bpftool prog show --json | python3 -c 'import json, sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin) if p.get("name") == "stp_probe_0"))'); do
  $tmp/vinsns \$id; done > $tmp/progs.txt
SH
# The target: reads the programs' figures, then times its getppid() calls (Time::HiRes).
cat > "$tmp/target.pl" <<PL
use Time::HiRes qw(time);
system("sh", "$tmp/ids.sh");
my \$t = time; getppid() for 1..$events;
open(my \$f, ">", "$tmp/ns"); printf \$f "%d\\n", (time - \$t) * 1e9;
PL

printf '%-12s %-9s %14s %12s %10s\n' shape impl verified_insns xlated_bytes ns/event
for k in "${!names[@]}"; do
  for impl in iter bpf_loop; do
    [ "${names[$k]}" = none ] && [ $impl = bpf_loop ] && continue
    best=
    for run in 1 2 3 4 5; do
      UKSTAP_LOOP_IMPL=$impl timeout 120 "$uk" -DMAXACTION=10000 -c "perl $tmp/target.pl" -e "
        global r
        probe kernel.trace(\"syscalls:sys_enter_getppid\") { if (pid() == target()) { ${bodies[$k]} } }
      " > /dev/null || { echo "${names[$k]} $impl: ukstap failed" >&2; continue 2; }
      ns=$(cat "$tmp/ns")
      [ -z "$best" ] || [ "$ns" -lt "$best" ] && best=$ns
    done
    # Other ukstap sessions may have a stp_probe_0 too: the newest id is this run's.
    read -r _ insns bytes < <(sort -n "$tmp/progs.txt" | tail -n 1)
    printf '%-12s %-9s %14s %12s %10s\n' "${names[$k]}" $impl "$insns" "$bytes" $((best / events))
  done
done
