"""Checks of testsuite/e2e/run_first_events.sh: ukstap's stacks of a program's first events
against perf --call-graph dwarf's on the same program. Stack lines are parsed by
bench/lib/stap_stack.py.

  first_events_check.py UKSTAP_OUT PERF_SCRIPT_OUT MODULE_SUBSTRING [NR]

UKSTAP_OUT holds "== NR" lines, each followed by a print_ubacktrace(); PERF_SCRIPT_OUT is
`perf script -F comm,event,trace,ip,sym,dso` of the same events. Passes (exit 0) when
  - ukstap has as many complete stacks as perf or more (complete: ends at the program's entry,
    _start or ld.so's _dl_start_user, and no frame is inexact), and ukstap's are all complete;
  - for the events of syscall NR (110, getppid: the perl loop; 318, getrandom: libuuid) of
    both, the frames in MODULE are the same sequences: the
    set of ukstap's equals the set of perf's. A frame is its function's name, or where the
    module has none, its return address in the file: ukstap names it sub_START+OFF (from the
    FDE), perf "[unknown]" at the file address of the return address - 1.
Prints the counts either way."""
import os, re, sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "lib"))
from stap_stack import parse_frame, parse_perf_frame

START = {"_start", "_dl_start_user"}
uk_out, perf_out, module = sys.argv[1:4]
NR = int(sys.argv[4]) if len(sys.argv) > 4 else 110


def ukstap_stacks():
    out = []
    for l in open(uk_out, errors="replace"):
        m = re.match(r"^== (\d+)$", l)
        if m:
            out.append((int(m.group(1)), []))
            continue
        fr = parse_frame(l)
        if fr is not None and out:
            name = fr.name or "?"
            if name.startswith("sub_"):
                name = int(name[4:], 16) + (fr.offset or 0)
            out[-1][1].append((name, fr.module or "", fr.inexact))
    return out


def perf_stacks():
    out = []
    for l in open(perf_out, errors="replace"):
        if not l.strip():
            continue
        if not l.startswith(("\t", " " * 8)):
            m = re.search(r"NR (\d+)", l)
            out.append((int(m.group(1)) if m else -1, []))
            continue
        fr = parse_perf_frame(l)
        if fr is None or not out or fr.ip >= 0xFFFF800000000000:
            continue
        name = fr.sym
        if name == "[unknown]" and out[-1][1]:
            name = fr.ip + 1  # a caller: perf prints return address - 1
        out[-1][1].append((name, fr.dso or "", False))
    return out


def complete(s):
    return bool(s) and s[-1][0] in START and not any(f[2] for f in s)


def in_module(s):
    return tuple(f[0] for f in s if module in f[1])


uk, pf = ukstap_stacks(), perf_stacks()
n = min(len(uk), len(pf))
uk, pf = uk[:n], pf[:n]
uc = sum(complete(s) for _, s in uk)
pc = sum(complete(s) for _, s in pf)
us = {in_module(s) for nr, s in uk if nr == NR}
ps = {in_module(s) for nr, s in pf if nr == NR}
print("events %d: complete ukstap %d, perf %d; syscall %d's stacks in %s: ukstap %d kinds, perf %d"
      % (n, uc, pc, NR, module, len(us), len(ps)))
ok = n > 0 and uc == n and uc >= pc and us == ps and any(us)  # some frames in MODULE
if not ok:
    for nr, s in uk:
        if not complete(s):
            print("incomplete ukstap stack (NR %d): %s" % (nr, s))
            break
    print("ukstap only:", list(us - ps)[:3])
    print("perf only:", list(ps - us)[:3])
sys.exit(0 if ok else 1)
