#!/usr/bin/env python3
"""Checks run_chain_cache.sh's run against the traced program's own truth (progs/
chain_cache_prog.c): every event's streamed stack (print_ubacktrace) and every ustack_id()
key's stack and count.

usage: chain_cache_check.py UKSTAP_OUTPUT PROGRAM_OUTPUT

With "ids PATH N" lines in the program's output (its lazy run), the streamed events are the
first two of each path and the aggregated ones are counted by those lines.

The program printed "truth PATH: pcs" (libunwind: frame 0 print_truth, frame 1 event, frames
2.. = the event's frames 1..) and "seq DIGITS" (the path of each event, in order). ukstap printed
"E" then the event's frames for each event, and "T COUNT" then print_ustack_id's frames for each
key."""
import re
import sys

out, prog = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read()
truth = {int(p): [int(x, 16) for x in pcs.split()][2:]
         for p, pcs in re.findall(r"^truth (\d):(.*)$", prog, re.M)}
m = re.search(r"^seq (\d+)$", prog, re.M)
lazy = sorted(int(p) for p in re.findall(r"^ids (\d) ", prog, re.M))
if not m or sorted(truth) != (lazy or [0, 1, 2]):
    sys.exit("FAIL: the program's truth is incomplete")
seq = [int(c) for c in m.group(1)]

blocks, cur = [], None
for line in out:
    if line in ("E", "B") or line.startswith("T "):
        cur = [line, []]
        blocks.append(cur)
        continue
    f = re.match(r"^ 0x([0-9a-f]+) : (\S+)", line)
    if f and cur is not None:
        cur[1].append((int(f.group(1), 16), f.group(2)))

def path_of(frames):
    """The path whose libunwind stack the frames are (frame 0 in event, 1.. = the truth)."""
    if not frames or not frames[0][1].startswith("event+"):
        return None
    p = [q for q, t in truth.items() if [a for a, _ in frames[1:]] == t]
    return p[0] if len(p) == 1 else None

fails = []
ids = {int(p): int(n) for p, n in re.findall(r"^ids (\d) (\d+)$", prog, re.M)}
if ids:
    # The lazy run: each path's first two events streamed, the next three aggregated.
    seq = [p for p in sorted(ids) for _ in range(2)]
got = [path_of(fr) for head, fr in blocks if head == "E"]
if got != seq:
    bad = next((i for i, (a, b) in enumerate(zip(got, seq)) if a != b), min(len(got), len(seq)))
    fails.append("streamed stacks: %d events, the program made %d; first difference at event %d "
                 "(path %s, the program's %s)" % (len(got), len(seq), bad,
                                                  got[bad] if bad < len(got) else "-",
                                                  seq[bad] if bad < len(seq) else "-"))
counts = {}
for head, fr in blocks:
    if head.startswith("T "):
        p = path_of(fr)
        if p is None or p in counts:
            fails.append("ustack_id() key %r: not one of the program's paths" % head)
        else:
            counts[p] = int(head.split()[1])
want = ids or {p: seq.count(p) for p in truth}
if counts != want:
    fails.append("ustack_id() counts %r, the program made %r" % (counts, want))
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
