#!/usr/bin/env python3
"""Checks ukstap's kernel backtraces (testsuite/e2e/run_kstack.sh) against /proc/kallsyms, read
here on its own: no code is shared with ukstap's kallsyms table.

  kstack_check.py frames OUT [NEED_REGEX...]
      Every kernel frame line ` 0xADDR : NAME+0xOFF/0xSIZE [MODULE]` of OUT names a symbol of
      /proc/kallsyms that starts at ADDR-OFF, SIZE is the distance from that start to the next
      symbol (of any name), the address lies inside it (a return address may sit at its very
      end), and MODULE is `kernel` or the symbol's module. Every stack (a run of kernel frames)
      has a frame whose name matches each NEED_REGEX. Kernel frames without a symbol fail.
  kstack_check.py profile OUT
      OUT holds timer.profile samples: "== USER_MODE" then print_backtrace() then
      print_ubacktrace(). User-mode samples have `<no kernel backtrace at timer.profile>` and
      then user frames; kernel-mode samples kernel frames (checked as above), ending in a kernel
      entry point, then user frames. At least one of each, and a kernel-mode one that went
      through read(2) from read_zero().
  kstack_check.py pairs OUT
      OUT holds one aggregation printed twice ("== stack", frames, "== count N" per entry, then
      "== samples N"): each half's counts add up to the samples; the complete stacks (down to
      _start), at least 90% of the samples, are the same with the same counts in both halves
      (" (inexact)" marks aside); one runs through spin_user(). (The first samples of a process
      can be walked before the VMA tracker has seen its mappings: frames past an inexact one
      that is not known to be code are dropped from print_ubacktrace()/print_ustack_id(), but
      a ubacktrace() string has no exactness marks to go by.)
Prints what is wrong on stderr and exits 1; silent on success.
"""
import bisect
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (bench/ is distributed whole)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "lib"))
from stap_stack import KERNEL_MIN, parse_frame  # noqa: E402


def kallsyms():
    starts = {}  # address -> (names, module)
    for line in open("/proc/kallsyms"):
        f = line.split()
        if len(f) < 3 or f[1] in "aAuUnN":
            continue
        addr = int(f[0], 16)
        if addr == 0:
            continue
        mod = f[3].strip("[]") if len(f) > 3 else "kernel"
        names, _ = starts.setdefault(addr, (set(), mod))
        names.add(f[2])
    order = sorted(starts)
    return starts, order


def check_frame(line, syms, order, errors):
    """The frame's name, or None when the line is no kernel frame."""
    f = parse_frame(line)
    if not f or f.addr < KERNEL_MIN:
        return None
    if not f.name or f.offset is None:
        errors.append("kernel frame without a symbol: %r" % line)
        return None
    addr, name, off, size, mod = f.addr, f.name, f.offset, f.size, f.module
    start = addr - off
    if start not in syms or name not in syms[start][0]:
        errors.append("%r: no symbol %s at 0x%x in /proc/kallsyms" % (line, name, start))
        return name
    i = bisect.bisect_right(order, start)
    want = order[i] - start if i < len(order) else 0
    if size != want:
        errors.append("%r: size 0x%x, /proc/kallsyms says 0x%x" % (line, size, want))
    if want and off > want:
        errors.append("%r: address beyond the symbol's end" % line)
    if mod != syms[start][1]:
        errors.append("%r: module %s, /proc/kallsyms says %s" % (line, mod, syms[start][1]))
    return name


def frames(out, needs):
    syms, order = kallsyms()
    errors, stacks, cur = [], [], []
    for line in open(out):
        line = line.rstrip("\n")
        name = check_frame(line, syms, order, errors)
        if name is not None:
            cur.append(name)
        elif cur:
            stacks.append(cur)
            cur = []
    if cur:
        stacks.append(cur)
    if not stacks:
        errors.append("no kernel stack in %s" % out)
    for st in stacks:
        for need in needs:
            if not any(re.fullmatch(need, n) for n in st):
                errors.append("stack %s has no frame matching %s" % (st, need))
    return errors


ENTRY = re.compile(r"entry_SYSCALL_64.*|asm_.*|ret_from_fork.*|common_startup_64|secondary_startup_64.*")


def profile(out):
    syms, order = kallsyms()
    errors, samples = [], []
    for line in open(out):
        line = line.rstrip("\n")
        if line.startswith("== "):
            samples.append({"user": line == "== 1", "lines": []})
        elif samples:
            samples[-1]["lines"].append(line)
    n_user = n_kernel = n_read = 0
    for s in samples:
        lines = s["lines"]
        if s["user"]:
            n_user += 1
            if not lines or lines[0] != "<no kernel backtrace at timer.profile>":
                errors.append("user-mode sample without the no-kernel line: %s" % lines[:2])
                continue
            f = parse_frame(lines[1]) if len(lines) >= 2 else None
            if not f or not f.name or f.inexact or f.addr >= KERNEL_MIN:
                errors.append("user-mode sample without user frames: %s" % lines[:3])
            continue
        n_kernel += 1
        kn = []
        i = 0
        while i < len(lines):
            name = check_frame(lines[i], syms, order, errors)
            if name is None:
                break
            kn.append(name)
            i += 1
        user = [f.name for f in map(parse_frame, lines[i:]) if f and f.name and not f.inexact]
        if not kn:
            errors.append("kernel-mode sample without kernel frames: %s" % lines[:2])
            continue
        if len(kn) == 1 and "indirect_thunk" in kn[0]:
            # a tick inside a retpoline thunk (__x86_indirect_thunk_*, seen once in a loaded
            # make check): the kernel's own unwinder, whose answer bpf_get_stack returns, gave
            # no frame beyond it
            continue
        if not ENTRY.fullmatch(kn[-1]):
            # a sample that interrupted a kernel thread's work or an interrupt handler may end
            # elsewhere; those of the traced program run syscalls and page faults
            errors.append("kernel stack does not end in an entry point: %s" % kn)
        if kn[-1].startswith("entry_SYSCALL_64") and "read_zero" in user and "main" in user:
            n_read += 1
    if n_user == 0:
        errors.append("no user-mode sample")
    if n_kernel == 0:
        errors.append("no kernel-mode sample")
    if n_read == 0:
        errors.append("no kernel-mode sample inside read(2) called by read_zero() from main()")
    return errors


def pairs(out):
    blocks, cur, samples = [], None, 0
    for line in open(out):
        line = line.rstrip("\n")
        if line == "== stack":
            cur = []
        elif line.startswith("== count "):
            blocks.append(("\n".join(cur or []), int(line.split()[2])))
            cur = None
        elif line.startswith("== samples "):
            samples = int(line.split()[2])
        elif cur is not None:
            cur.append(re.sub(r" \(inexact\)$", "", line))
    errors = []
    half = len(blocks) // 2
    a, b = blocks[:half], blocks[half:]
    for side in (a, b):
        if sum(c for _, c in side) != samples:
            errors.append("%d samples, counts add up to %d" % (samples, sum(c for _, c in side)))
    full_a = sorted(x for x in a if " : _start+" in x[0])
    full_b = sorted(x for x in b if " : _start+" in x[0])
    if full_a != full_b:
        errors.append("the complete stacks differ: %d and %d" % (len(full_a), len(full_b)))
        errors += ["only in one: %r" % (x,) for x in set(full_a) ^ set(full_b)][:4]
    if samples < 20 or sum(c for _, c in full_a) < 0.9 * samples:
        errors.append("%d samples, %d of them complete" % (samples, sum(c for _, c in full_a)))
    if not any(" : spin_user+" in t for t, _ in full_a):
        errors.append("no stack through spin_user()")
    return errors


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "frames":
        errors = frames(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 3 and sys.argv[1] == "profile":
        errors = profile(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "pairs":
        errors = pairs(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for e in errors[:20]:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
