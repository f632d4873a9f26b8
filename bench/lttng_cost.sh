#!/bin/bash
# --lttng's cost (issue 18) against --ctf and text, the same workload as bench/ctf_cost.sh:
# bench/ctf_proto/load.c makes N getppid(2) calls under
# `probe syscall.getppid { if (pid() == target()) { printf("%d %s\n", pid(), execname())
# [; print_ubacktrace()] } }`. Per event: the probe's cost in the traced process (its system time
# over the untraced run's), ukstap's CPU with its writer process (reaped: in our children's
# rusage; the load's own time and a run of 0 calls subtracted), for --lttng also the LTTng
# consumer daemon's CPU (/proc/PID/stat of the private daemons), and the bytes written (for
# --lttng: the session's trace directory).
# The LTTng daemons are private: a session daemon as `nobody` with its own LTTNG_HOME (the
# writer, a root process, registers with it), stopped by their pids at the end. One local
# session, ukstap:* in a channel with --blocking-timeout=inf.
# usage: bench/lttng_cost.sh [N]   (root, a built tree; results on stdout)
set -eu
N=${1:-200000}
top=$(cd "$(dirname "$0")/.." && pwd)
export UKSTAP=${UKSTAP:-$top/ukstap} N top
tmp=$(mktemp -d /tmp/lttng-cost.XXXXXX)
chmod 755 "$tmp"
mkdir "$tmp/home" && chown nobody "$tmp/home"
export tmp LTTNG_HOME=$tmp/home
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$tmp/home" LTTNG_HOME="$tmp/home")
"${NOBODY[@]}" lttng-sessiond --no-kernel > "$tmp/sessiond.log" 2>&1 &
sessiond=$!
trap 'kill $sessiond; wait $sessiond; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do "${NOBODY[@]}" lttng list > /dev/null 2>&1 && break; sleep 0.1; done
gcc -O2 -o "$tmp/ctf_load" "$top/bench/ctf_proto/load.c"
export SESSIOND=$sessiond

/usr/bin/python3 - <<'PY'
import os, resource, subprocess
U, N, tmp = os.environ["UKSTAP"], int(os.environ["N"]), os.environ["tmp"]
load = tmp + "/ctf_load"
home = tmp + "/home"
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "env", "HOME=" + home, "LTTNG_HOME=" + home]

def lttng(*a):
    subprocess.run(NOBODY + ["lttng"] + list(a), check=True, capture_output=True)

def children_ns():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1e9

def daemons_ns():
    """CPU of the private session daemon and its consumer daemons (clock ticks -> ns)."""
    tot = 0
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            cmd = open("/proc/%s/cmdline" % p, "rb").read()
            if home.encode() not in cmd and p != os.environ["SESSIOND"]:
                continue
            f = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
            tot += int(f[11]) + int(f[12])
        except OSError:
            pass
    return tot * 1e9 / os.sysconf("SC_CLK_TCK")

def run(args, n, mode):
    subprocess.run(["rm", "-rf", tmp + "/out", tmp + "/dir", home + "/ust"])
    if mode == "lttng":
        lttng("create", "cost", "--output=" + home + "/ust")
        lttng("enable-channel", "-u", "ch", "--blocking-timeout=inf")
        lttng("enable-event", "-u", "-c", "ch", "ukstap:*")
        lttng("start")
    d0, c0 = daemons_ns(), children_ns()
    p = subprocess.run([U] + args + ["-c", "%s %d" % (load, n)], capture_output=True, text=True)
    c1 = children_ns()
    if mode == "lttng":
        lttng("stop")
        lttng("destroy")
    d1 = daemons_ns()
    if p.returncode:
        raise SystemExit("ukstap failed: " + p.stderr)
    lu, ls = [float(x) for x in next(l for l in p.stderr.splitlines() if l.startswith("load-cpu-ns")).split()[1:]]
    size = 0
    for root in (tmp + "/out", tmp + "/dir", home + "/ust"):
        if os.path.isfile(root):
            size += os.path.getsize(root)
        for d, _, fs in os.walk(root):
            size += sum(os.path.getsize(os.path.join(d, f)) for f in fs)
    return c1 - c0 - lu - ls, ls, size, d1 - d0

def base_sys(n):
    p = subprocess.run([load, str(n)], capture_output=True, text=True)
    return float(p.stderr.split()[2])

body = 'printf("%d %s\\n", pid(), execname())'
print("# N = %d getppid(2) events (ns per event; bytes per event)" % N)
print("%-30s %9s %14s %12s %8s" % ("output", "probe ns", "ukstap+writer", "lttng daemons", "bytes"))
for stack in (False, True):
    script = "probe syscall.getppid { if (pid() == target()) { %s%s } }" % (body, "; print_ubacktrace()" if stack else "")
    for mode in ("text", "ctf", "lttng"):
        args = ["-e", script] + {"text": ["-o", tmp + "/out"], "ctf": ["--ctf=" + tmp + "/dir"], "lttng": ["--lttng"]}[mode]
        run(args, 0, mode)  # compile (cached) once
        c0, _, s0, d0 = run(args, 0, mode)
        c, ls, s, d = run(args, N, mode)
        b = base_sys(N)
        print("%-30s %9.0f %14.0f %12s %8.1f" % (mode + (" + print_ubacktrace" if stack else ""), (ls - b) / N,
                                                (c - c0) / N, "%.0f" % ((d - d0) / N) if mode == "lttng" else "-", (s - s0) / N))
PY
