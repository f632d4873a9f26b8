"""A program's first events (issue 15): stacks of the first N syscalls of a program started
through shell syntax (`-c 'perl x.pl > /dev/null'`), and of the calls right after a dlopen
(python3 loading _ctypes and libffi), counted complete against perf --call-graph dwarf on the
same program. perf runs the program without the shell: through dash's fork perf unwinds one
frame per stack (bench/perf_agreement.py), so that is perf's best case.

A stack is complete when it ends at the program's entry (_start, ld.so's _dl_start_user) and
has no inexact frame. Usage: UKSTAP=... python3 bench/first_events.py [WORKDIR]
Stack lines are parsed by bench/lib/stap_stack.py."""
import os, re, subprocess, sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from stap_stack import parse_frame, parse_perf_frame

UKSTAP = os.environ.get("UKSTAP", "ukstap")
BEFORE = os.environ.get("UKSTAP_BEFORE")   # another build for a before/after row in one run
PYBIN = "/usr/bin/python3"  # Debian's, not a pyenv shim: perf unwinds pyenv's build poorly here
WORK = sys.argv[1] if len(sys.argv) > 1 else "/tmp/first_events"
os.makedirs(WORK, exist_ok=True)
START = {"_start", "_dl_start_user", "start_thread", "clone3", "__clone3"}

PL = os.path.join(WORK, "x.pl")
with open(PL, "w") as f:
    f.write("sub f3 { for (1..$_[0]) { my $p = getppid(); } }\nsub f2 { f3(@_) }\n"
            "sub f1 { f2(@_) }\nf1(300);\n")
PY = os.path.join(WORK, "x.py")
with open(PY, "w") as f:
    f.write("import os\ndef f3():\n    for _ in range(200): os.getppid()\n"
            "def f2(): f3()\ndef f1(): f2()\nf1()\n")
CT = os.path.join(WORK, "ct.py")
with open(CT, "w") as f:
    f.write("import ctypes\nuuid = ctypes.CDLL('libuuid.so.1')\nbuf = ctypes.create_string_buffer(16)\n"
            "for _ in range(50): uuid.uuid_generate_random(buf)\n")

# name, execname, argv, syscall filter (None: every syscall), events
CASES = [
    ("perl x.pl (first 300 syscalls)", "perl", ["perl", PL], None, 300),
    ("python3 x.py (first 200 syscalls)", "python3", [PYBIN, PY], None, 200),
    ("python3 ctypes: dlopen libuuid, then 50 calls (getrandom)", "python3", [PYBIN, CT], 318, 52),
]


def ukstap_stacks(comm, argv, nr, n, shell, ukstap=UKSTAP):
    cond = "(pid() == target() || ppid() == target()) && execname() == \"%s\"%s" % (
        comm, " && $id == %d" % nr if nr else "")
    script = ('global n; probe kernel.trace("raw_syscalls:sys_enter") { if (%s && n++ < %d) '
              '{ printf("==\\n"); print_ubacktrace() } }' % (cond, n))
    cmd = " ".join(argv) + " > /dev/null" if shell else " ".join(argv)
    out = os.path.join(WORK, "uk.out")
    p = subprocess.run([ukstap, "-v", "-e", script, "-c", cmd, "-o", out],
                       capture_output=True, text=True)
    stacks, cur = [], None
    for l in open(out, errors="replace"):
        if l.startswith("=="):
            cur = []; stacks.append(cur); continue
        fr = parse_frame(l)
        if fr is not None and cur is not None:
            cur.append((fr.name or "?", fr.inexact))
    waited = re.search(r"(\d+) walks waited for an unwind table: (\d+) finished.*?\((\d+) copies, "
                       r"(\d+) stack bytes", p.stderr)
    return stacks, waited.groups() if waited else ("0", "0", "0", "0")


def perf_stacks(comm, argv, nr, n):
    data = os.path.join(WORK, "perf.data")
    subprocess.run(["perf", "record", "-q", "-m", "16M", "-e", "raw_syscalls:sys_enter", "--call-graph", "dwarf",
                    "-o", data, "--"] + argv, capture_output=True, stdout=None)
    txt = subprocess.run(["perf", "script", "-i", data, "--comms", comm, "-F",
                          "comm,event,trace,ip,sym,dso"], capture_output=True, text=True).stdout
    stacks, cur = [], None
    for l in txt.splitlines():
        if not l.strip():
            continue
        if not l.startswith(("\t", " " * 8)):
            m = re.search(r"NR (\d+)", l)
            cur = [] if (nr is None or (m and int(m.group(1)) == nr)) else None
            if cur is not None: stacks.append(cur)
            continue
        fr = parse_perf_frame(l)
        if fr is None or cur is None or int(fr.ip) >= 0xFFFF800000000000:
            continue
        cur.append((fr.sym, False))
    return stacks[:n]


def complete(s):
    return bool(s) and s[-1][0] in START and not any(inex for _, inex in s)


def summary(stacks):
    return "%d/%d" % (sum(complete(s) for s in stacks), len(stacks))


print("| program | before: via `sh -c` / direct | after: via `sh -c` / direct | perf dwarf direct "
      "| after, via `sh -c`: walks finished in user space / stack copies / stack bytes each |")
print("|---|---|---|---|---|")
for name, comm, argv, nr, n in CASES:
    before = "-"
    if BEFORE:
        b1, _ = ukstap_stacks(comm, argv, nr, n, True, BEFORE)
        b2, _ = ukstap_stacks(comm, argv, nr, n, False, BEFORE)
        before = "%s / %s" % (summary(b1), summary(b2))
    sh, w = ukstap_stacks(comm, argv, nr, n, True)
    di, _ = ukstap_stacks(comm, argv, nr, n, False)
    pf = perf_stacks(comm, argv, nr, n)
    print("| %s | %s | %s / %s | %s | %s / %s / %s |" % (name, before, summary(sh), summary(di),
                                                        summary(pf), w[1], w[2], w[3]))
    sys.stdout.flush()
