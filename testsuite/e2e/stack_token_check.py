#!/usr/bin/env python3
"""Checks the deferred tokens a run of run_stack_token.sh printed against the hash written out
again here from its documentation (runtime/common/stp_stack_abi.h), not from the runtime's code:

  fnv(h, v) = (h XOR v) * 0x100000001b3 mod 2^64, starting from 0xcbf29ce484222325
  token(h, kind, flags) = fnv(h, kind << 32 | flags), 1 if that is 0

usage: stack_token_check.py OUTPUT MAXSTRINGLEN
OUTPUT lines: "native K=.. U=.. I=.. S=..", "bpf PID K=.. U=.. I=.. S=.. B=..", then the BPF
probe's ubacktrace() (the pcs the sprint_ubacktrace() token hashes). Exit 0 when every token is
the expected one, else 1 with a line per mismatch.
"""
import sys

MASK = (1 << 64) - 1
OFFSET = 0xCBF29CE484222325
PRIME = 0x100000001B3
# enum stp_ustack_kind and the _STP_SYM_* flags the tapset functions pass (RUNTIME-HOOKS.md).
PCS, HEXSTR, SYM, ID = 0, 1, 2, 4
SYM_SIMPLE, SYM_SYMBOL = 4, 16


def fnv(h, v):
    return ((h ^ v) * PRIME) & MASK


def token(h, kind, flags):
    return fnv(h, (kind << 32) | flags) or 1


def fields(line):
    return dict(f.split("=", 1) for f in line.split() if "=" in f)


def main():
    path, maxstr = sys.argv[1], int(sys.argv[2])
    lines = open(path).read().splitlines()
    native = next(l for l in lines if l.startswith("native "))
    i = next(i for i, l in enumerate(lines) if l.startswith("bpf "))
    bpf, pcs = lines[i], [int(x, 16) for x in lines[i + 1].split()]
    pid = int(bpf.split()[1])
    addr, sid, hexlist = 0x1234, 7, b"0x1 0x2"

    # BPF: a hex list is hashed as its MAXSTRINGLEN buffer, zero-padded, in little-endian words,
    # after the pid; natively byte by byte from the offset basis (no pid: ukstap's own process).
    buf = hexlist.ljust(maxstr, b"\0")
    h = fnv(OFFSET, pid)
    for w in range(0, maxstr, 8):
        h = fnv(h, int.from_bytes(buf[w:w + 8], "little"))
    bpf_hexstr = token(h, HEXSTR, SYM_SIMPLE)
    h = OFFSET
    for c in hexlist:
        h = fnv(h, c)
    native_hexstr = token(h, HEXSTR, SYM_SIMPLE)
    h = fnv(OFFSET, pid)
    for pc in pcs:
        h = fnv(h, pc)
    ustack = token(h, PCS, SYM_SIMPLE)

    want = {
        "native": {"K": token(fnv(OFFSET, addr), SYM, SYM_SYMBOL),
                   "U": token(fnv(OFFSET, addr), SYM, SYM_SYMBOL),
                   "I": token(fnv(OFFSET, sid), ID, SYM_SIMPLE),
                   "S": native_hexstr},
        "bpf": {"K": token(fnv(OFFSET, addr), SYM, SYM_SYMBOL),
                "U": token(fnv(fnv(OFFSET, pid), addr), SYM, SYM_SYMBOL),
                "I": token(fnv(OFFSET, sid), ID, SYM_SIMPLE),
                "S": bpf_hexstr,
                "B": ustack},
    }
    bad = 0
    for side, line in (("native", native), ("bpf", bpf)):
        got = fields(line)
        for k, v in want[side].items():
            if got.get(k) != "%016x" % v:
                print("%s %s: got %s, want %016x" % (side, k, got.get(k), v))
                bad = 1
    if not pcs:
        print("bpf: no pcs from ubacktrace()")
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
