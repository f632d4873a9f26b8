#!/usr/bin/env python3
"""Checks ukstap's user backtraces against truth from outside ukstap (run_ustack.sh).

Truth: the traced program's own libunwind backtrace ("truth:" lines) and /proc/self/maps lines
("map:"), readelf's symbol tables and program headers, objdump's disassembly. Frame lines
(docs/STAP-FORMATS.md §4) are read by bench/lib/stap_stack.py.

usage: ustack_check.py chain UKSTAP_OUT PROG_OUT BINARY FIRST_FUNC OUTER_FUNC
         (BINARY is the file of the program's "map:" line; frames 0 and up to OUTER_FUNC's caller)
       ustack_check.py stripped UKSTAP_OUT PROG_OUT UNSTRIPPED_TWIN FIRST_FUNC OUTER_FUNC
         (as chain; functions without a symbol must be sub_<their start in the twin>)
       ustack_check.py exact UKSTAP_OUT PROG_OUT   (DWARF walk: all frames = libunwind's, none inexact)
       ustack_check.py callsites UKSTAP_OUT MIN  (timer samples: return addresses follow calls)
       ustack_check.py fileline UKSTAP_OUT BINARY  (print_ubacktrace_fileline vs addr2line)
       ustack_check.py symbols UKSTAP_OUT     (every frame of every stack has a symbol, and the
                                               symbol+offset agrees with readelf's table)
Prints one line per problem; exit status 0 when there is none.
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (bench/ is distributed whole)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "lib"))
from stap_stack import follows_call, parse_frame  # noqa: E402


def stacks(text):
    """Stacks in ukstap's output: runs of frame lines (any other line separates them)."""
    out, cur = [], []
    for line in text.splitlines():
        f = parse_frame(line)
        if not f:
            if cur:
                out.append(cur)
            cur = []
            continue
        cur.append({"pc": f.addr, "name": f.name, "off": f.offset, "size": f.size,
                    "module": f.module, "inexact": f.inexact})
    if cur:
        out.append(cur)
    return out


_syms = {}


def code_sections(path):
    """Indexes (as readelf -s prints them) of the sections with the X flag."""
    text = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    return {m.group(1) for m in re.finditer(r"^\s*\[\s*(\d+)\]\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S*X\S*)\s", text, re.M)}


def symbols(path):
    """FUNC/OBJECT symbols with an address, and untyped labels in code (as perf and ukstap
    count them), sorted: readelf's .symtab, else .dynsym."""
    if path in _syms:
        return _syms[path]
    text = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True).stdout
    code = code_sections(path)
    tables, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"Symbol table '(\S+)'", line)
        if m:
            cur = tables.setdefault(m.group(1), [])
            continue
        f = line.split()
        if cur is None or len(f) < 8 or not f[0].endswith(":") or not f[0][:-1].isdigit():
            continue
        value, typ, ndx, name = int(f[1], 16), f[3], f[6], f[7].split("@")[0]
        if (typ in ("FUNC", "OBJECT", "IFUNC") and ndx != "UND" or typ == "NOTYPE" and ndx in code) and value:
            cur.append((value, name))
    syms = sorted(set(tables.get(".symtab") or tables.get(".dynsym") or []))
    _syms[path] = syms
    return syms


def bias(path, map_start, pgoff):
    """Load bias of a mapping (readelf's PT_LOAD headers): file vaddr = pc - bias."""
    text = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off, vaddr, filesz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            if off - (off % 4096) <= pgoff < off + filesz:
                return map_start - (vaddr - off + pgoff)
    return None


def expect(path, vaddr, caller):
    """(name, offset) readelf gives for a file vaddr; callers look up vaddr-1."""
    syms = symbols(path)
    key = vaddr - 1 if caller else vaddr
    best = None
    for i, (v, n) in enumerate(syms):
        if v > key:
            break
        best = i
    if best is None:
        return None
    v, n = syms[best]
    # all names at that address are acceptable (aliases)
    names = {name for (a, name) in syms if a == v}
    nxt = next((a for (a, _) in syms[best + 1:] if a > v), None)
    return names, vaddr - v, (nxt - v) if nxt else 0


def check_chain(ukstap_out, prog_out, binary, first_func, outer_func, stripped=False):
    """stripped: the traced file is BINARY stripped; functions it has no symbol for must be
    named sub_<hex start> with the start readelf gives for them in BINARY."""
    problems = []
    prog = open(prog_out).read()
    truth = [int(x, 16) for x in re.search(r"^truth: (.*)$", prog, re.M).group(1).split()]
    mline = re.search(r"^map: ([0-9a-f]+)-[0-9a-f]+ \S+ ([0-9a-f]+) \S+ \S+\s+(\S+)$", prog, re.M)
    mstart, mpgoff, mpath = int(mline.group(1), 16), int(mline.group(2), 16), mline.group(3)
    b = bias(binary, mstart, mpgoff)
    st = stacks(open(ukstap_out).read())
    if len(st) != 1:
        return ["expected one stack, got %d" % len(st)]
    fr = st[0]
    if stripped:
        for f in fr:
            if f["name"] and f["name"].startswith("sub_"):
                start = int(f["name"][4:], 16)
                names = [n for (a, n) in symbols(binary) if a == start]
                if names:
                    f["name"], f["sub"] = names[0], True
    outer = next((i for i, f in enumerate(fr) if f["name"] == outer_func), None)
    if outer is None:
        return ["no frame named %s: %s" % (outer_func, [f["name"] for f in fr])]
    # libunwind's frame 0 is print_truth, its frame 1 the innermost function (as ukstap's frame 0,
    # at another pc: the syscall instruction); its frames 2.. are ukstap's frames 1.., the same
    # return addresses, up to the frame that called OUTER_FUNC.
    last = min(outer + 1, len(truth) - 2, len(fr) - 1)
    for i in range(1, last + 1):
        if fr[i]["pc"] != truth[i + 1]:
            problems.append("frame %d: ukstap 0x%x, libunwind 0x%x" % (i, fr[i]["pc"], truth[i + 1]))
    if last < outer:
        problems.append("the stack stops at frame %d, before OUTER_FUNC" % last)
    # Symbols of the frames in BINARY against readelf.
    seen = 0
    for i, f in enumerate(fr[:outer + 1]):
        if f["module"] != mpath:
            continue
        seen += 1
        e = expect(binary, f["pc"] - b, i > 0)
        if not e or f["name"] not in e[0] or f["off"] != e[1] or (f["size"] != e[2] and not f.get("sub")):
            problems.append("frame %d: ukstap %s+0x%x/0x%x, readelf %s" %
                            (i, f["name"], f["off"] or 0, f["size"] or 0, e))
    if not seen:
        problems.append("no frame in %s" % mpath)
    if fr[0]["name"] != first_func:
        problems.append("frame 0 is %s, not %s" % (fr[0]["name"], first_func))
    for i, f in enumerate(fr[:outer + 1]):
        if f["name"] is None:
            problems.append("frame %d has no symbol" % i)
    return problems


def check_exact(ukstap_out, prog_out):
    """Every frame exact and equal to libunwind's, through the outermost (_start)."""
    problems = []
    prog = open(prog_out).read()
    truth = [int(x, 16) for x in re.search(r"^truth: (.*)$", prog, re.M).group(1).split()]
    st = stacks(open(ukstap_out).read())
    if len(st) != 1:
        return ["expected one stack, got %d" % len(st)]
    fr = st[0]
    got = [f["pc"] for f in fr[1:]]
    if got != truth[2:]:
        problems.append("frames 1..: ukstap %s, libunwind %s" % ([hex(x) for x in got], [hex(x) for x in truth[2:]]))
    for i, f in enumerate(fr):
        if f["inexact"]:
            problems.append("frame %d is inexact" % i)
        if f["name"] is None:
            problems.append("frame %d has no symbol" % i)
    return problems


def check_callsites(ukstap_out, min_checked):
    """Every return-address frame (index >= 1, not after a signal frame) whose file vaddr can be
    computed (sub_<vaddr> names, or a symbol readelf knows) follows a call instruction."""
    problems, checked, bad = [], 0, []
    for fr in stacks(open(ukstap_out).read()):
        for i, f in enumerate(fr):
            if i == 0 or f["name"] is None or f["module"].startswith("["):
                continue
            if fr[i - 1]["name"] == "__restore_rt":
                continue  # the interrupted pc: not a return address
            if f["name"].startswith("sub_"):
                starts = [int(f["name"][4:], 16)]
            else:
                # A name can have several addresses (glibc's versioned pthread_cond_wait@GLIBC_2.2.5
                # and @@GLIBC_2.3.2): the frame is right when one of them gives a return site.
                starts = [a for (a, n) in symbols(f["module"]) if n == f["name"]]
                if not starts:
                    continue
            checked += 1
            if not any(follows_call(f["module"], s + f["off"]) for s in starts):
                bad.append("0x%x %s+0x%x [%s]" % (f["pc"], f["name"], f["off"], f["module"]))
    if checked < int(min_checked):
        problems.append("only %d frames could be checked" % checked)
    if bad:
        problems.append("%d of %d return addresses do not follow a call: %s" % (len(bad), checked, bad[:5]))
    return problems


def check_fileline(ukstap_out, binary):
    """' at FILE:LINE' of the frames in BINARY = what binutils' addr2line says for the same
    address (pc-1 for return addresses)."""
    problems, checked = [], 0
    for i, line in enumerate(open(ukstap_out).read().splitlines()):
        f = parse_frame(line)
        if not f or not f.src or not f.name or f.module != binary:
            continue
        starts = [a for (a, n) in symbols(binary) if n == f.name]
        if not starts:
            continue
        vaddr = starts[0] + f.offset - (1 if i > 0 else 0)
        out = subprocess.run(["addr2line", "-e", binary, hex(vaddr)], capture_output=True,
                             text=True).stdout.strip().split(" ")[0]
        want = out.rsplit("/", 1)[-1]
        got = f.src.rsplit("/", 1)[-1]
        checked += 1
        if got != want:
            problems.append("frame %d: ukstap %s, addr2line %s" % (i, got, want))
    if checked < 5:
        problems.append("only %d frames with a line to check" % checked)
    return problems


def check_symbols(ukstap_out):
    problems = []
    for s, fr in enumerate(stacks(open(ukstap_out).read())):
        for i, f in enumerate(fr):
            if f["name"] is None:
                problems.append("stack %d frame %d: no symbol: 0x%x [%s]" % (s, i, f["pc"], f["module"]))
    return problems


def main():
    cmd = sys.argv[1]
    if cmd == "chain":
        problems = check_chain(*sys.argv[2:])
    elif cmd == "stripped":
        problems = check_chain(*sys.argv[2:], stripped=True)
    elif cmd == "exact":
        problems = check_exact(*sys.argv[2:])
    elif cmd == "callsites":
        problems = check_callsites(*sys.argv[2:])
    elif cmd == "fileline":
        problems = check_fileline(*sys.argv[2:])
    elif cmd == "symbols":
        problems = check_symbols(sys.argv[2])
    else:
        problems = ["unknown command " + cmd]
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
