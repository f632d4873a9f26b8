#!/usr/bin/env python3
"""Checks ukstap's user stacks against gdb's (run_unwind_coverage.sh).

usage: unwind_coverage_check.py UKSTAP_OUT UKSTAP_ERR GDB_OUT [--all-complete MIN]

UKSTAP_OUT: "--- PID" lines, each followed by one print_ubacktrace(); UKSTAP_ERR: ukstap -v's
stderr ("User stacks: ... walks ended by: N REASON, ..."); GDB_OUT: gdb_syscall_stacks.py's
"STACK pc pc ..." lines for the same program at the same syscall, ASLR off on both sides.

A stack is complete when its pcs are one of gdb's stacks, frame for frame. Always checked: the
walks counted by reason are the stacks printed, and "end of stack" counts exactly the complete
ones (a walk that stopped early must say why, never "end of stack"), and -v's count of frames
found by frame pointers is the count of frames printed "(inexact)". With --all-complete MIN:
at least MIN stacks, every one complete.
"""
import re
import sys


def main():
    out_path, err_path, gdb_path = sys.argv[1:4]
    want_all = len(sys.argv) > 5 and sys.argv[4] == "--all-complete"
    minimum = int(sys.argv[5]) if want_all else 0

    stacks = []
    for line in open(out_path):
        if line.startswith("--- "):
            stacks.append([])
        elif stacks:
            m = re.match(r"\s*0x([0-9a-f]+)\b", line)
            if m:
                stacks[-1].append(int(m.group(1), 16))
    truth = set()
    for line in open(gdb_path):
        if line.startswith("STACK "):
            truth.add(tuple(int(x, 16) for x in line.split()[1:]))
    inexact = sum(1 for line in open(out_path) if line.rstrip().endswith(" (inexact)"))
    fp_frames = 0
    reasons = {}
    for line in open(err_path):
        m = re.search(r"User stacks: (\d+) frames found by frame pointers", line)
        if m:
            fp_frames = int(m.group(1))
        m = re.search(r"walks ended by: (.*)$", line)
        if m:
            for part in m.group(1).split(", "):
                n, _, name = part.partition(" ")
                reasons[name] = int(n)

    problems = []
    if not truth:
        problems.append("gdb gave no stack")
    complete = sum(1 for s in stacks if tuple(s) in truth)
    if sum(reasons.values()) != len(stacks):
        problems.append("%d stacks printed but walks counted by reason: %s" % (len(stacks), reasons))
    if reasons.get("end of stack", 0) != complete:
        problems.append('"end of stack" %d, complete stacks %d' % (reasons.get("end of stack", 0), complete))
    if fp_frames != inexact:
        problems.append("-v: %d frames found by frame pointers, %d frames printed (inexact)" % (fp_frames, inexact))
    if want_all and (len(stacks) < minimum or complete != len(stacks)):
        problems.append("%d of %d stacks complete (want all, at least %d)" % (complete, len(stacks), minimum))
    if problems:
        for p in problems:
            print("unwind_coverage_check: " + p)
        print("gdb:    " + "\n        ".join(" ".join(hex(pc) for pc in t) for t in sorted(truth)))
        for s in stacks:
            print("ukstap: " + " ".join(hex(pc) for pc in s) + ("" if tuple(s) in truth else "   <- differs"))
        sys.exit(1)


if __name__ == "__main__":
    main()
