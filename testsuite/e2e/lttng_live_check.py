#!/usr/bin/env python3
"""run_lttng_live.sh's check: what `babeltrace2 --input-format=lttng-live` printed of a live
session that recorded ukstap --lttng's ukstap:event events, against truths independent of
ukstap's LTTng path.

  lttng_live_check.py LIVE TEXT FACTS N
      LIVE: babeltrace2's text (pretty) output of the live session. TEXT: what the same ukstap
      run wrote to -o TEXT ('open FILENAME FLAGS' + the backtrace's lines, 'close FD'). FACTS:
      the traced program's own "pid PID" line. N: the opens and closes it was asked to make.
      Event by event: the name, the printed values, callstack_user = the backtrace's addresses,
      callstack_user_symbols' functions = the backtrace's functions; vpid/vtid = the program's
      pid; N opens of /dev/null and at least N closes; hit_ns never goes back.
"""
import re
import sys

# The -o text of the same script is read as run_ctf.sh reads it.
from ctf_check import text_records


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


class Pretty:
    """A parser of babeltrace2's pretty payload: { key = value, ... } with values strings,
    integers (decimal or 0x hex), [ [i] = value, ... ] arrays and nested { }."""

    def __init__(self, s):
        self.s, self.i = s, 0

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def eat(self, c):
        self.ws()
        if not self.s.startswith(c, self.i):
            raise ValueError("expected %r at %d: %r" % (c, self.i, self.s[self.i:self.i + 40]))
        self.i += len(c)

    def value(self):
        self.ws()
        c = self.s[self.i]
        if c == '"':
            out, self.i = [], self.i + 1
            esc = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}
            while self.s[self.i] != '"':
                if self.s[self.i] == "\\":
                    self.i += 1
                    out.append(esc.get(self.s[self.i], "\\" + self.s[self.i]))
                else:
                    out.append(self.s[self.i])
                self.i += 1
            self.i += 1
            return "".join(out)
        if c == "[":
            self.i += 1
            out = []
            self.ws()
            while self.s[self.i] != "]":
                self.eat("[")
                m = re.compile(r"\d+").match(self.s, self.i)
                self.i = m.end()
                self.eat("]")
                self.eat("=")
                out.append(self.value())
                self.ws()
                if self.s[self.i] == ",":
                    self.i += 1
                self.ws()
            self.i += 1
            return out
        if c == "{":
            return self.struct()
        m = re.compile(r"-?(0x[0-9A-Fa-f]+|\d+)").match(self.s, self.i)
        if not m:
            raise ValueError("bad value at %d: %r" % (self.i, self.s[self.i:self.i + 40]))
        self.i = m.end()
        return int(m.group(0), 0)

    def struct(self):
        self.eat("{")
        d = {}
        self.ws()
        while self.s[self.i] != "}":
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.s, self.i)
            key = m.group(0)
            self.i = m.end()
            self.eat("=")
            d[key] = self.value()
            self.ws()
            if self.s[self.i] == ",":
                self.i += 1
            self.ws()
        self.i += 1
        return d


def live_events(path):
    evs = []
    for line in open(path):
        k = line.find(" ukstap:event: ")
        if k < 0:
            continue
        p = Pretty(line[k + len(" ukstap:event: "):])
        p.struct()  # the packet context (cpu_id)
        p.eat(",")
        e = p.struct()
        e["line"] = line.rstrip("\n")  # what babeltrace2 printed, for a failure's message
        evs.append(e)
    return evs


FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,]+)(?:, |$)')


def unquote(v):
    return Pretty(v).value() if v.startswith('"') else int(v, 0)


def live_records(evs):
    recs = []
    for i, e in enumerate(evs):
        try:
            recs.append(live_record(e))
        except (KeyError, ValueError, IndexError) as x:
            fail("live event %d is not one of the script's (%r):\n  %s" % (i, x, e["line"]))
    return recs


def live_record(e):
    f = {k: unquote(v) for k, v in FIELD.findall(e["fields"])}
    if e["name"] == "syscall.openat":
        syms = e["callstack_user_symbols"].split("\n") if e["callstack_user_symbols"] else []
        return {"kind": "open", "vals": (f["arg0"] if "arg0" in f else f["filename"], f.get("arg1", f.get("flags"))),
                "addrs": list(e["callstack_user"]), "funcs": [s.split("+", 1)[0] for s in syms]}
    if e["name"] == "syscall.close":
        return {"kind": "close", "vals": (f.get("fd", f.get("arg0")),), "addrs": [], "funcs": []}
    raise ValueError("unexpected event " + e["name"])


def differing(lr, tx, evs):
    """The first place the live events and the text part, with a few events either side."""
    i = 0
    while i < min(len(lr), len(tx)) and lr[i] == tx[i]:
        i += 1
    out = []
    for j in range(max(0, i - 2), min(max(len(lr), len(tx)), i + 3)):
        out.append("  #%d live %s" % (j, evs[j]["line"] if j < len(evs) else "-"))
        out.append("  #%d text %s" % (j, tx[j] if j < len(tx) else "-"))
    return "\n".join(out)


def main(live, text, facts, n):
    evs = live_events(live)
    if not evs:
        fail("no ukstap:event in " + live)
    lr, tx = live_records(evs), text_records(text)
    if len(lr) != len(tx):
        fail("%d live events, %d records in the text; first difference:\n%s" % (len(lr), len(tx), differing(lr, tx, evs)))
    for i, (a, b) in enumerate(zip(lr, tx)):
        if a != b:
            fail("event %d differs:\n  live %s\n  text %s\n%s" % (i, a, b, differing(lr, tx, evs)))
    pid = int(open(facts).readline().split()[1])
    last = 0
    for e in evs:
        if (e["vpid"], e["vtid"]) != (pid, pid):
            fail("vpid/vtid %d/%d, the program was %d" % (e["vpid"], e["vtid"], pid))
        if e["callstack_user"] and e["ip"] != e["callstack_user"][0]:
            fail("ip %#x is not the first frame" % e["ip"])
        if e["hit_ns"] < last:
            fail("hit_ns went back")
        last = e["hit_ns"]
    opens = sum(r["kind"] == "open" and r["vals"][0] == '"/dev/null"' for r in lr)
    closes = sum(r["kind"] == "close" for r in lr)
    if opens != n or closes < n:
        fail("%d opens of /dev/null and %d closes, the program made %d and at least %d" % (opens, closes, n, n))
    print("ok: %d events" % len(evs))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
