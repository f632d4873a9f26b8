#!/bin/bash
# Start-up of the first one-liners a user tries, ukstap against bpftrace in the same run.
#
#   bench/startup.sh [-n RUNS] [-o FILE] [UKSTAP...]     (root; `make bench` runs it via bench/run)
#     -n  runs of each command (default 5; the figures are medians)
#     -o  also write the table into FILE (bench/results/startup.txt)
#     UKSTAP  one or more ukstap binaries compared in the same run (default: this tree's)
#
# For each one-liner: "ready" is the time from launching the tool to the line its begin probe
# prints (ukstap runs begin once every kernel probe is attached, bpftrace runs BEGIN once every
# probe is attached: the same moment), "run" the time to its exit (begin calls exit(), or the -c
# command ends), which includes detaching. ukstap cold: an empty cache (XDG_CACHE_HOME a fresh
# directory: vmlinux.h, clang and cc every run); warm: the module cached by an earlier run.
# bpftrace compiles in-process every run. The commands run interleaved (ukstap cold, warm,
# bpftrace, ...) so that a change of load hits all alike. Not a test: figures for the notes.
#
# The one-liners (the ukstap one, then bpftrace's):
#   syscall.*        probe syscall.* { n++ }            tracepoint:syscalls:sys_enter_* { @n++ }
#                    (and bpftrace's one-program way:    tracepoint:raw_syscalls:sys_enter { @n++ })
#   openat printf    probe syscall.openat { printf("%s %s\n", execname(), filename) }
#                                                        tracepoint:syscalls:sys_enter_openat {...}
#   uprobe (ls)      libc's opendir called by `ls /` (-c): /bin/ls has no symbols of its own
#   profile ustack   timer.profile { print_ubacktrace() } / profile:hz:250 { ustack() }, -c a
#                    shell loop
set -u
runs=5 outfile=
while getopts n:o:k o; do
  case $o in
    n) runs=$OPTARG ;;
    o) outfile=$OPTARG ;;
    k) ;;  # bench/run's keep flag: nothing to keep here
    *) sed -n '2,8p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$top/ukstap"
for u in "$@"; do [ -x "$u" ] || { echo "startup.sh: $u is not built" >&2; exit 1; }; done
[ "$(id -u)" = 0 ] || { echo "startup.sh: needs root (both tools load BPF programs)" >&2; exit 1; }
BPFTRACE=${BPFTRACE:-$(command -v bpftrace)}
export LC_ALL=C

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ukstap-startup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
libc=$(ldd /bin/ls | sed -nE 's/.*libc\.so\.6 => ([^ ]+).*/\1/p')
libc=$(readlink -f "${libc:-/lib/x86_64-linux-gnu/libc.so.6}")
busy=$tmp/busy.sh
printf '#!/bin/sh\ni=0\nwhile [ $i -lt 100000 ]; do i=$((i+1)); done\n' > "$busy"
chmod +x "$busy"

# timer READY CMD...: "READY_MS RUN_MS" (READY_MS -1 when the line never came)
cat > "$tmp/timer.py" <<'EOF'
import subprocess, sys, time
ready = sys.argv[1].encode()
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
t_ready = None
for line in p.stdout:
    if t_ready is None and line.rstrip(b"\n") == ready:
        t_ready = time.monotonic()
p.wait()
t1 = time.monotonic()
print("%.1f %.1f" % ((t_ready - t0) * 1e3 if t_ready else -1, (t1 - t0) * 1e3))
EOF
timer() { python3 "$tmp/timer.py" ready "$@"; }

names=(syscall.* "openat printf" "uprobe (ls)" "profile ustack")
uk_args() {  # uk_args CASE -> ukstap's arguments, one per line
  case $1 in
    0) printf '%s\n' -e 'global n; probe syscall.* { n++ } probe begin { println("ready"); exit() }' ;;
    1) printf '%s\n' -e 'probe syscall.openat { printf("%s %s\n", execname(), filename) } probe begin { println("ready"); exit() }' ;;
    2) printf '%s\n' -e "probe process(\"$libc\").function(\"opendir\") { if (pid() == target()) println(\"opendir\") } probe begin { println(\"ready\") }" -c "/bin/ls /" ;;
    3) printf '%s\n' -e 'probe timer.profile { if (pid() == target()) print_ubacktrace() } probe begin { println("ready") }' -c "/bin/sh $busy" ;;
  esac
}
bt_args() {  # bt_args CASE [raw] -> bpftrace's arguments
  case $1${2:-} in
    0) printf '%s\n' -e 'tracepoint:syscalls:sys_enter_* { @n++ } BEGIN { printf("ready\n"); exit() }' ;;
    0raw) printf '%s\n' -e 'tracepoint:raw_syscalls:sys_enter { @n++ } BEGIN { printf("ready\n"); exit() }' ;;
    1) printf '%s\n' -e 'tracepoint:syscalls:sys_enter_openat { printf("%s %s\n", comm, str(args->filename)) } BEGIN { printf("ready\n"); exit() }' ;;
    2) printf '%s\n' -e "uprobe:$libc:opendir /pid == cpid/ { printf(\"opendir\\n\") } BEGIN { printf(\"ready\\n\") }" -c "/bin/ls /" ;;
    3) printf '%s\n' -e 'profile:hz:250 /pid == cpid/ { printf("%s\n", ustack()) } BEGIN { printf("ready\n") }' -c "/bin/sh $busy" ;;
  esac
}

# Results: $tmp/r.CASE.TOOL holds "READY RUN" lines; TOOL is u<k>cold, u<k>warm, bt, btraw.
record() { local f=$tmp/r.$1.$2; shift 2; "$@" >> "$f"; }
for c in 0 1 2 3; do
  mapfile -t ua < <(uk_args $c)
  for k in $(seq $#); do  # prime each binary's warm cache
    XDG_CACHE_HOME=$tmp/warm-$k "${@:k:1}" -w "${ua[@]}" > /dev/null 2>&1
  done
done
for i in $(seq "$runs"); do
  for c in 0 1 2 3; do
    mapfile -t ua < <(uk_args $c)
    for k in $(seq $#); do
      u=${@:k:1}
      record $c u${k}cold env XDG_CACHE_HOME="$tmp/cold-$k-$c-$i" python3 "$tmp/timer.py" ready "$u" -w "${ua[@]}"
      rm -rf "$tmp/cold-$k-$c-$i"
      record $c u${k}warm env XDG_CACHE_HOME="$tmp/warm-$k" python3 "$tmp/timer.py" ready "$u" -w "${ua[@]}"
    done
    if [ -n "$BPFTRACE" ]; then
      mapfile -t ba < <(bt_args $c)
      record $c bt timer "$BPFTRACE" -B line "${ba[@]}"
      if [ $c = 0 ]; then
        mapfile -t ba < <(bt_args $c raw)
        record $c btraw timer "$BPFTRACE" -B line "${ba[@]}"
      fi
    fi
  done
done

median() {  # median FILE COLUMN (-1 entries, a missing ready line, are left out)
  [ -f "$1" ] || { echo -; return; }
  awk -v c="$2" '$c >= 0 { print $c }' "$1" | sort -n |
    awk '{ v[NR] = $1 } END { if (!NR) { print "-"; exit } m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.0f\n", m }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f\n", a / b }'; }

{
  echo "# bench/startup.sh -n $runs, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  for k in $(seq $#); do echo "# ukstap $k: ${@:k:1}"; done
  echo "# bpftrace: ${BPFTRACE:-none} $([ -n "$BPFTRACE" ] && "$BPFTRACE" --version 2>/dev/null)"
  echo "# medians of $runs runs, ms. ready: launch to the begin probe's line (every probe attached); run: launch to exit."
  echo "# ratio: ukstap's ready / bpftrace's ready (bpftrace: its tracepoint:syscalls:sys_enter_* form)"
  printf '%-16s %-12s %8s %8s %8s\n' one-liner tool ready run ratio
  for c in 0 1 2 3; do
    btr=$(median "$tmp/r.$c.bt" 1)
    for k in $(seq $#); do
      for mode in cold warm; do
        r=$(median "$tmp/r.$c.u$k$mode" 1)
        printf '%-16s %-12s %8s %8s %8s\n' "${names[c]}" "ukstap$k $mode" "$r" "$(median "$tmp/r.$c.u$k$mode" 2)" "$(ratio "$r" "$btr")"
      done
    done
    printf '%-16s %-12s %8s %8s\n' "${names[c]}" bpftrace "$btr" "$(median "$tmp/r.$c.bt" 2)"
    [ $c = 0 ] && printf '%-16s %-12s %8s %8s\n' "${names[c]}" "bpftrace raw" "$(median "$tmp/r.$c.btraw" 1)" "$(median "$tmp/r.$c.btraw" 2)"
  done
} > "$tmp/table"
cat "$tmp/table"
[ -n "$outfile" ] && cp "$tmp/table" "$outfile"
exit 0
