"""The stack texts that ukstap's checks and benchmarks read, parsed once.

Used by bench/compare.py, bench/perf_agreement.py and testsuite/e2e/{ustack,kstack}_check.py
(testsuite/e2e/stack_parser.py tests it).

SystemTap's backtrace lines (docs/STAP-FORMATS.md §4: print_backtrace(), print_ubacktrace(),
print_*backtrace_fileline()), each maybe followed by " (inexact)":
  " 0xADDR : NAME+0xOFF/0xSIZE [MODULE]"              a symbol covers the address
  " 0xADDR : NAME+0xOFF/0xSIZE at FILE:LINE [MODULE]"  the same with its source line
  " 0xADDR [MODULE+0xOFF/0xSIZE]"                      only the module is known
  " 0xADDR"                                            nothing is known
MODULE is a path, "[vdso]", "kernel" or a kernel module's name.

perf script's frame lines (-F ip,sym[,symoff],dso): "\\tIP SYM[+0xOFF] (DSO)", IP in hex
without 0x (with -F ...,dso: relative to the DSO for user frames).

follows_call(): whether a file address sits right after a call instruction, by binutils'
objdump -d (independent of ukstap): what a return address must do.
"""
import bisect
import collections
import re
import subprocess

Frame = collections.namedtuple("Frame", "addr name offset size module src inexact")
Frame.__doc__ = """One backtrace line: addr (int); name (None without a symbol); offset, size
(ints: within the symbol, or within the module's mappings when there is no symbol; None when
not printed); module (None when unknown); src ("FILE:LINE" or None); inexact (bool)."""

# A demangled C++ name has spaces ("f(int) const", "std::function<void ()>"): the name runs
# up to its +0xOFF/0xSIZE, or to " [module]" when there is none.
_WITH_SYM = re.compile(r"^ 0x([0-9a-f]+) : (.+?)(?:\+0x([0-9a-f]+)/0x([0-9a-f]+))?"
                       r"(?: at (\S+:\d+))? \[(.*)\]( \(inexact\))?$")
_WITH_MOD = re.compile(r"^ 0x([0-9a-f]+) \[(.+?)\+0x([0-9a-f]+)/0x([0-9a-f]+)\]( \(inexact\))?$")
_BARE = re.compile(r"^ 0x([0-9a-f]+)( \(inexact\))?$")

KERNEL_MIN = 0xFFFF800000000000  # x86_64: kernel addresses are the upper half


def parse_frame(line):
    """The Frame of one backtrace line (its "\\n" may be there), or None if it is none."""
    line = line.rstrip("\n")
    m = _WITH_SYM.match(line)
    if m:
        return Frame(int(m.group(1), 16), m.group(2),
                     int(m.group(3), 16) if m.group(3) else None,
                     int(m.group(4), 16) if m.group(4) else None,
                     m.group(6), m.group(5), bool(m.group(7)))
    m = _WITH_MOD.match(line)
    if m:
        return Frame(int(m.group(1), 16), None, int(m.group(3), 16), int(m.group(4), 16),
                     m.group(2), None, bool(m.group(5)))
    m = _BARE.match(line)
    if m:
        return Frame(int(m.group(1), 16), None, None, None, None, None, bool(m.group(2)))
    return None


PerfFrame = collections.namedtuple("PerfFrame", "ip sym offset dso")
PerfFrame.__doc__ = """One perf script frame line: ip (int), sym (as printed, "[unknown]" when
perf has none), offset (int with -F symoff, else None), dso (None when not printed)."""

_PERF = re.compile(r"^\s+([0-9a-f]+) (.*?)(?:\+0x([0-9a-f]+))?(?: \((.*)\))?$")


def parse_perf_frame(line):
    """The PerfFrame of one perf script frame line, or None if it is none."""
    m = _PERF.match(line.rstrip("\n"))
    if not m:
        return None
    return PerfFrame(int(m.group(1), 16), m.group(2), int(m.group(3), 16) if m.group(3) else None,
                     m.group(4))


_call_sites = {}


def _disassembly(path):
    """(sorted return sites, [(start, end)] of the disassembled sections) of a file."""
    if path in _call_sites:
        return _call_sites[path]
    try:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True,
                             text=True).stdout
    except OSError:
        out = ""
    insn = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)")
    sites, ranges, after_call, lo, hi = [], [], False, None, None
    for line in out.splitlines():
        if line.startswith("Disassembly of section"):
            if lo is not None:
                ranges.append((lo, hi))
            lo = hi = None
            after_call = False
            continue
        m = insn.match(line)
        if not m:
            continue
        a = int(m.group(1), 16)
        if after_call:
            sites.append(a)
        after_call = m.group(2).startswith("call")
        lo = a if lo is None else lo
        hi = a
    if lo is not None:
        ranges.append((lo, hi))
    sites.sort()
    _call_sites[path] = (sites, ranges)
    return _call_sites[path]


def follows_call(path, vaddr):
    """Does file address `vaddr` of `path` come right after a call instruction? True or False;
    None when the file cannot say (not readable, or vaddr outside its disassembled code)."""
    sites, ranges = _disassembly(path)
    i = bisect.bisect_left(sites, vaddr)
    if i < len(sites) and sites[i] == vaddr:
        return True
    if not any(lo <= vaddr <= hi for lo, hi in ranges):
        return None
    return False
