#!/usr/bin/env python3
"""Checks of `ukstap --ctf=DIR` traces (testsuite/e2e/run_ctf.sh), read with babeltrace2's
Python bindings (python3-bt2), never with ukstap.

  ctf_check.py same TRACE TEXT FACTS BINARY STRACE T0 T1
      The trace of run_ctf.sh's script against the text the same run wrote to -o TEXT, and
      against truths independent of ukstap: the program's own pid and /proc/self/maps (FACTS,
      written by progs/ctf_prog.c), its symbol table (nm -S BINARY), strace -c's call counts
      (STRACE) and the wall clock around the run (T0, T1: ns since the epoch).
  ctf_check.py count TRACE MIN
      The trace reads and has at least MIN events.
  ctf_check.py profile TRACE COMM FUNC...
      --profile --ctf: every sample of COMM has a user callstack, and some reach each FUNC.
"""
import os
import re
import subprocess
import sys

import bt2


# The symbol events (ctf-writer/statedump.h: LTTng-UST's statedump, one event per user frame) are
# run_ctf_symbols.sh's to check; the script's events are checked here.
SYMBOL_EVENTS = ("lttng_ust_statedump:", "ukstap:callstack_user_frame")


def events(trace):
    out = []
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        if ev.name.startswith(SYMBOL_EVENTS):
            continue
        cc = ev.common_context_field
        out.append({
            "name": ev.name,
            "ns": msg.default_clock_snapshot.ns_from_origin,
            "cpu": int(ev.packet.context_field["cpu_id"]),
            "vpid": int(cc["vpid"]), "vtid": int(cc["vtid"]), "procname": str(cc["procname"]),
            "ip": int(cc["ip"]),
            "ustack": [int(a) for a in cc["callstack_user"]] if "callstack_user" in cc else [],
            "payload": ev.payload_field,
        })
    return out


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


FRAME = re.compile(r"^ 0x([0-9a-f]+) : (\S+?)\+0x[0-9a-f]+/0x[0-9a-f]+ \[(.*)\]")


def text_records(path):
    """The -o text: 'open FILENAME FLAGS' + its backtrace lines, 'close FD'."""
    recs = []
    for line in open(path):
        line = line.rstrip("\n")
        m = FRAME.match(line)
        if m:
            recs[-1]["addrs"].append(int(m.group(1), 16))
            recs[-1]["funcs"].append(m.group(2))
        elif line.startswith("open "):
            name, flags = line[5:].rsplit(" ", 1)
            recs.append({"kind": "open", "vals": (name, int(flags)), "addrs": [], "funcs": []})
        elif line.startswith("close "):
            recs.append({"kind": "close", "vals": (int(line[6:]),), "addrs": [], "funcs": []})
        elif line.strip():
            fail("unexpected text line: " + line)
    return recs


def trace_records(evs):
    recs = []
    for e in evs:
        p = e["payload"]
        if e["name"] == "syscall.openat":
            syms = [str(s) for s in p["callstack_user_symbols"]]
            recs.append({"kind": "open", "vals": (str(p["filename"]), int(p["flags"])),
                         "addrs": e["ustack"], "funcs": [s.split("+", 1)[0] for s in syms]})
        elif e["name"] == "syscall.close":
            recs.append({"kind": "close", "vals": (int(p["fd"]),), "addrs": [], "funcs": []})
        else:
            fail("unexpected event " + e["name"])
    return recs


def same(trace, text, facts, binary, strace, t0, t1):
    evs = events(trace)
    if not evs:
        fail("no events in " + trace)
    # 1. The trace says what the text of the same run says, event by event, frame by frame.
    tr, tx = trace_records(evs), text_records(text)
    if len(tr) != len(tx):
        fail("%d events in the trace, %d records in the text" % (len(tr), len(tx)))
    for i, (a, b) in enumerate(zip(tr, tx)):
        if a != b:
            fail("event %d differs:\n  trace %s\n  text  %s" % (i, a, b))
    # 2. Counts: strace -c of the same program.
    calls = {}
    for line in open(strace):
        f = line.split()
        if len(f) >= 5 and f[-1] in ("openat", "close") and f[3].isdigit():
            calls[f[-1]] = int(f[3])
    got = {"openat": sum(r["kind"] == "open" for r in tr), "close": sum(r["kind"] == "close" for r in tr)}
    if got != calls:
        fail("syscall counts %s, strace -c says %s" % (got, calls))
    # 3. Context: the program's own pid; its only thread; its name; a cpu of this machine; the
    #    realtime clock around the run.
    lines = open(facts).read().splitlines()
    pid = int(lines[0].split()[1])
    for e in evs:
        if (e["vpid"], e["vtid"]) != (pid, pid):
            fail("vpid/vtid %d/%d, the program was %d" % (e["vpid"], e["vtid"], pid))
        if e["procname"] != os.path.basename(binary)[:15]:
            fail("procname " + e["procname"])
        if not 0 <= e["cpu"] < os.cpu_count():
            fail("cpu_id %d" % e["cpu"])
        if not t0 <= e["ns"] <= t1:
            fail("timestamp %d outside the run [%d, %d]" % (e["ns"], t0, t1))
    # 4. Callstacks: every address in an executable mapping of the process (its own maps);
    #    the 25 opens of /dev/null come from leaf_open <- middle <- main, and the leaf_open
    #    frame's address is inside leaf_open (nm -S + the binary's load address).
    maps = []
    base = None
    for l in lines[1:]:
        f = l.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        maps.append((lo, hi, f[1], f[5] if len(f) > 5 else ""))
        if base is None and len(f) > 5 and os.path.realpath(f[5]) == os.path.realpath(binary):
            base = lo - int(f[2], 16)
    syms = {}
    for l in subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True).stdout.splitlines():
        f = l.split()
        if len(f) == 4:
            syms[f[3]] = (int(f[0], 16), int(f[1], 16))
    devnull = 0
    for r in tr:
        for a in r["addrs"]:
            if not any(lo <= a < hi and "x" in perm for lo, hi, perm, _ in maps):
                fail("callstack address %#x is in no executable mapping of %d" % (a, pid))
        if r["kind"] == "open" and r["vals"][0] == '"/dev/null"':
            devnull += 1
            f = r["funcs"]
            try:
                k = f.index("leaf_open")
            except ValueError:
                fail("no leaf_open frame: %s" % f)
            if f[k + 1:k + 3] != ["middle", "main"]:
                fail("leaf_open's callers %s, not middle, main" % f[k + 1:k + 3])
            lo, size = syms["leaf_open"]
            a = r["addrs"][k] - base
            if not lo <= a - 1 < lo + size:  # a return address: the call is just before it
                fail("leaf_open frame %#x not in leaf_open [%#x, %#x)" % (a, lo, lo + size))
            if r["addrs"][0] != evs[tr.index(r)]["ip"]:
                fail("ip is not the first frame")
    if devnull != 25:
        fail("%d opens of /dev/null, the program made 25" % devnull)
    print("ok: %d events" % len(evs))


def count(trace, least):
    n = len(events(trace))
    if n < least:
        fail("%d events, expected >= %d" % (n, least))
    print("ok: %d events" % n)


def profile(trace, comm, funcs):
    evs = [e for e in events(trace) if e["procname"] == comm]
    if len(evs) < 10:
        fail("%d samples of %s" % (len(evs), comm))
    seen = set()
    for e in evs:
        if not e["ustack"]:
            fail("a sample of %s without a user callstack" % comm)
        for s in e["payload"]["callstack_user_symbols"]:
            seen.add(str(s).split("+", 1)[0])
    missing = [f for f in funcs if f not in seen]
    if missing:
        fail("no sample reaches %s" % missing)
    print("ok: %d samples" % len(evs))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "same":
        same(args[0], args[1], args[2], args[3], args[4], int(args[5]), int(args[6]))
    elif cmd == "count":
        count(args[0], int(args[1]))
    elif cmd == "profile":
        profile(args[0], args[1], args[2:])
    else:
        fail("unknown check " + cmd)
