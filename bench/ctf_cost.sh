#!/bin/bash
# --ctf's cost (issue 18): per event and bytes per event, CTF against text, the same workload.
#
# 1. ukstap end to end: bench/ctf_proto/load.c makes N getppid(2) calls under
#    `probe syscall.getppid { if (pid() == target()) { printf("%d %s\n", pid(), execname())
#    [; print_ubacktrace()] } }`, the text to -o FILE, then the same with --ctf=DIR. Per event:
#    the probe's cost in the traced process (its system time over the untraced run's), ukstap's
#    CPU with the writer process (both reaped: in our children's rusage; the load's own time,
#    which it reports, and a run of 0 calls, the start-up, subtracted), and the bytes written.
#    ukstap's CPU and the bytes are divided by the events written (the text's lines of the
#    printf, babeltrace2's count of the script's events), not by N: when the reader falls
#    behind, the ring drops records ("lost" = ukstap's "Number of dropped records"; an event
#    with a backtrace is two records), and a dropped event costs the reader nothing. The probe's
#    cost is per call (every call runs it).
# 2. The libraries alone (issue 18's choice): the same event (filename, flags, an 8-frame
#    callstack) N times through ctf-writer/ (socket -> writer process -> libbabeltrace2's
#    sink.ctf.fs) and through an LTTng-UST tracepoint recorded by an LTTng session (skipped
#    without lttng-sessiond).
# usage: [UKSTAP=BINARY] [CTF_COST_LIBS=0] bench/ctf_cost.sh [N]   (root, a built tree; results on stdout)
set -eu
N=${1:-200000}
top=$(cd "$(dirname "$0")/.." && pwd)
export UKSTAP=${UKSTAP:-$top/ukstap} N top
tmp=$(mktemp -d /tmp/ctf-cost.XXXXXX)
export tmp
trap 'rm -rf "$tmp"' EXIT
p=$top/bench/ctf_proto
gcc -O2 -o "$tmp/ctf_load" "$p/load.c"

/usr/bin/python3 - <<'PY'
import os, resource, subprocess
U, N, tmp = os.environ["UKSTAP"], int(os.environ["N"]), os.environ["tmp"]
load = tmp + "/ctf_load"

def children_ns():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1e9

def run(args, n):
    """ukstap ARGS -c 'load n': (cpu of ukstap + writer ns, load's sys ns, bytes written)."""
    subprocess.run(["rm", "-rf", tmp + "/out", tmp + "/dir"])
    c0 = children_ns()
    p = subprocess.run([U] + args + ["-c", "%s %d" % (load, n)], capture_output=True, text=True)
    c1 = children_ns()
    if p.returncode:
        raise SystemExit("ukstap failed: " + p.stderr)
    lu, ls = [float(x) for x in next(l for l in p.stderr.splitlines() if l.startswith("load-cpu-ns")).split()[1:]]
    lost = sum(int(l.split()[-1]) for l in p.stderr.splitlines() if l.startswith("WARNING: Number of dropped records"))
    if os.path.isfile(tmp + "/out"):
        written = sum(1 for l in open(tmp + "/out") if l.endswith(" ctf_load\n"))
    else:
        bt = subprocess.run(["babeltrace2", tmp + "/dir"], capture_output=True, text=True).stdout
        written = sum(1 for l in bt.splitlines() if " syscall.getppid: " in l)
    size = 0
    for root in (tmp + "/out", tmp + "/dir"):
        if os.path.isfile(root):
            size += os.path.getsize(root)
        for d, _, fs in os.walk(root):
            size += sum(os.path.getsize(os.path.join(d, f)) for f in fs)
    return c1 - c0 - lu - ls, ls, size, written, lost

def base_sys(n):
    p = subprocess.run([load, str(n)], capture_output=True, text=True)
    return float(p.stderr.split()[2])

body = 'printf("%d %s\\n", pid(), execname())'
print("# ukstap end to end, N = %d getppid(2) events (ns per event; bytes per event)" % N)
print("%-28s %10s %14s %10s %9s %9s" % ("output", "probe ns", "ukstap+writer", "bytes", "written", "lost"))
for stack in (False, True):
    script = "probe syscall.getppid { if (pid() == target()) { %s%s } }" % (body, "; print_ubacktrace()" if stack else "")
    for mode in ("text", "ctf"):
        args = ["-e", script] + (["-o", tmp + "/out"] if mode == "text" else ["--ctf=" + tmp + "/dir"])
        run(args, 0)  # compile (cached) once
        c0, _, s0, _, _ = run(args, 0)
        c, ls, s, w, lost = run(args, N)
        b = base_sys(N)
        w = max(w, 1)
        print("%-28s %10.0f %14.0f %10.1f %9d %9d" % (mode + (" + print_ubacktrace" if stack else ""),
                                                       (ls - b) / N, (c - c0) / w, (s - s0) / w, w, lost))
PY

[ "${CTF_COST_LIBS:-1}" = 1 ] || exit 0  # CTF_COST_LIBS=0: ukstap end to end only (before/after runs)
echo
echo "# the libraries alone, N = $N events of filename, flags, 8-frame callstack"
g++ -std=c++20 -O2 -I"$top" -o "$tmp/bt_proto" "$p/bt_proto.cpp" "$top/libukstap_ctf.a" -lbabeltrace2
read -r send wall cpu < <("$tmp/bt_proto" "$tmp/bt" "$N")
bytes=$(du -sb "$tmp/bt" | cut -f1)
echo "ctf-writer (libbabeltrace2): sender $send ns/event (blocked by the writer when it lags), until written $wall ns/event, writer CPU $cpu ns/event, $((bytes / N)) bytes/event (with vpid/vtid/procname/ip)"
if pgrep -x lttng-sessiond > /dev/null && command -v lttng > /dev/null; then
  gcc -O2 -I"$p" -o "$tmp/ust_proto" "$p/ust_proto.c" -llttng-ust -ldl
  s=ukstap-ctf-cost-$$
  lttng create "$s" --output="$tmp/ust" > /dev/null
  lttng enable-event -s "$s" -u 'ukstap_proto:*' > /dev/null
  lttng start "$s" > /dev/null
  ns=$("$tmp/ust_proto" "$N")
  lttng stop "$s" > /dev/null
  lttng destroy "$s" > /dev/null
  got=$(babeltrace2 "$tmp/ust" 2> /dev/null | wc -l)
  bytes=$(du -sb "$tmp/ust" | cut -f1)
  echo "LTTng-UST tracepoint: $ns ns/event in the emitting process, $got of $N events recorded (discard mode), $((bytes / (got > 0 ? got : 1))) bytes/event (no contexts)"
else
  echo "LTTng-UST: skipped (no lttng-sessiond running)"
fi
