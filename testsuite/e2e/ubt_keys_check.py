#!/usr/bin/env python3
"""Checks run_ubacktrace_keys.sh's run: `s[ubacktrace()] <<< 1` (kept as stack ids, passes/
backtrace_tokens.h) against the traced program's own truth, and against the string path
(`t[ubacktrace() . ""]`, which the analysis leaves as text) of the same run.

usage: ubt_keys_check.py UKSTAP_OUTPUT PROGRAM_OUTPUT MAXSTRINGLEN

The program (progs/ubt_keys_prog.c) printed "calls PATH N" (how many events each path made) and
"truth PATH: pcs" (libunwind: frame 0 print_truth, frame 1 event, frames 2.. = the event's 1..).
ukstap printed "T COUNT KEY" then print_ustack(KEY)'s frames for each s key, "S COUNT KEY" for
each t key."""
import re
import sys

out, prog, maxlen = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read(), int(sys.argv[3])
fails = []
calls = {int(p): int(n) for p, n in re.findall(r"^calls (\d) (\d+)$", prog, re.M)}
truth = {int(p): [int(x, 16) for x in pcs.split()] for p, pcs in re.findall(r"^truth (\d):(.*)$", prog, re.M)}
if sorted(calls) != [0, 1, 2] or sorted(truth) != [0, 1, 2]:
    sys.exit("FAIL: the program's truth is incomplete: %r %r" % (calls, sorted(truth)))

T, S, frames, cur = {}, {}, {}, None
for line in out:
    m = re.match(r"^([TS]) (\d+) (.*)$", line)
    if m:
        (T if m.group(1) == "T" else S)[m.group(3)] = int(m.group(2))
        cur = m.group(3) if m.group(1) == "T" else None
        if cur is not None:
            frames[cur] = []
        continue
    m = re.match(r"^ 0x([0-9a-f]+) : (\S+)", line)
    if m and cur is not None:
        frames[cur].append((int(m.group(1), 16), m.group(2)))

pcs = lambda key: [int(x, 16) for x in key.split()]
# 1. one key per path, each with the path's number of events
if sorted(T.values()) != sorted(calls.values()) or len(T) != 3:
    fails.append("ubacktrace() keys and counts %r, the program made %r" % (sorted(T.values()), calls))
by_path = {}
for key, n in T.items():
    p = [q for q, c in calls.items() if c == n]
    if len(p) == 1:
        by_path[p[0]] = key
for path in range(3):
    key = by_path.get(path)
    if key is None:
        fails.append("no key for path %d (%d events)" % (path, calls[path]))
        continue
    k = pcs(key)
    # 2. the key is the stack libunwind saw (frames 1.. of the event)
    if k[1:] != truth[path][2:]:
        fails.append("path %d: key frames 1.. %s, libunwind %s" % (path, [hex(x) for x in k[1:6]],
                                                                  [hex(x) for x in truth[path][2:7]]))
    # 3. print_ustack(key) symbolizes exactly those pcs, the first one in event()
    fr = frames.get(key, [])
    if [a for a, _ in fr] != k:
        fails.append("path %d: print_ustack(key) printed %d frames for %d pcs" % (path, len(fr), len(k)))
    elif not fr[0][1].startswith("event+"):
        fails.append("path %d: frame 0 is %s, not event" % (path, fr[0][1]))
    # 4. the string path of the same run: the same key when it fits MAXSTRINGLEN, else a cut one
    if len(key) < maxlen:
        if S.get(key) != calls[path]:
            fails.append("path %d: the string path has not the key with %d events" % (path, calls[path]))
    else:
        cut = [s for s in S if key.startswith(s) and s != key]
        if len(cut) != 1 or S[cut[0]] != calls[path] or len(cut[0]) >= maxlen:
            fails.append("path %d: the string path's key is not the token's cut to MAXSTRINGLEN" % path)
deep = by_path.get(2)
if deep is not None and len(deep) < maxlen:
    fails.append("the deep stack's text (%d bytes) fits MAXSTRINGLEN %d: not a test" % (len(deep), maxlen))
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
