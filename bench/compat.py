#!/usr/bin/python3
"""Compatibility benchmark: SystemTap's shipped examples run with ukstap (issue 14).

    bench/compat.py [--ukstap PATH] [--examples DIR] [--tapsets DIR] [--out FILE]
                    [--blockers FILE] [--label TEXT] [--jobs N] [--timeout SECONDS]
                    [--only SUBSTRING] [--classify-only]

`make compat` runs it on the tree's ukstap; docs/COMPAT.md explains the figures.

For every example script DIR/*/*.stp (Debian's systemtap-doc installs them under
/usr/share/systemtap/examples) this runs what its .meta file's test_installcheck line runs (else
its test_check line), with `stap` replaced by the ukstap under test, from the script's
directory, and records:

  p2    `ukstap -p2 ...` (parse + elaborate) exits 0 (the line's own -pN taken out);
  p4    `ukstap -p4 ...` (compile) exits 0;
  runs  the full command exits 0 within --timeout, prints no error line, and its output has the
        shape the script prints (output_shape(), sample_header()); a .meta command that stops
        at -pN counts when it and p4 succeed ("yes (-pN)");
  why   the first error line, or the harness's own reason (timeout, no output, ...).

Every script is also classified as *servable by this kernel* or not, with a one-line reason,
from the script text, the .meta file and SystemTap's own tapsets (which say which alias is
built on kprobes and which on tracepoints). The rules are the RULES table below, printed under
the results table. A script without a .meta file gets p2/p4 (`ukstap -p4 SCRIPT`) and runs "-".

Writes a Markdown table (script | servable | p2 | p4 | runs | why not) with totals to --out
(default bench/results/compat.md), optionally the first errors of the servable scripts that do
not run grouped by cause (--blockers), and prints the totals. Each ukstap run has a hard timeout;
on timeout the whole process group gets SIGINT, then SIGKILL. At most 2 runs at a time (the
machine is shared). Root only (the runs attach BPF programs).
"""
import argparse
import concurrent.futures
import fnmatch
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
TRACEFS = "/sys/kernel/tracing/events"

# --------------------------------------------------------------------------------------------
# Classification rules. A script is servable when each of its probes is, and nothing else in
# it needs SystemTap's kernel-module backend. The reasons, in the order they are checked:
RULES = [
    ("no .meta", "the script has no .meta file: no command line to run (p2/p4 only)"),
    ("embedded C", "`%{ %}` embedded C that touches kernel internals (kernel headers, "
     "`current`, kernel structures through pointers, kernel functions or macros) runs only "
     "inside SystemTap's kernel module; a BPF program cannot run it"),
    ("kprobes", "kernel.function/kernel.statement/module(...)/kprobe.* probes, and tapset "
     "aliases that SystemTap builds only on them with no tracepoint equivalent on this "
     "kernel (kprobes are not available here)"),
    ("kernel module", "kernel.mark (static markers, gone from Linux since 2.6.32): only "
     "SystemTap's kernel module had them"),
    ("kernel.data", "hardware watchpoints: servable when the kernel has the perf breakpoint "
     "PMU and the watched kernel variable's address is known; this kernel's /proc/kallsyms "
     "lists no data symbols (CONFIG_KALLSYMS_ALL off)"),
    ("servable, not kernel-bound", "procfs(...) probes (and input.*, built on procfs "
     "\"__stdin\"): SystemTap's own BPF runtime serves them from user space with FIFOs in "
     "/var/tmp/systemtap-USER/MODNAME (stapprobes(3stap)); netfilter.* hooks: Linux 6.4+ runs "
     "BPF netfilter programs (BPF_PROG_TYPE_NETFILTER, checked by loading one), whose return "
     "value is the verdict"),
    ("no tracepoint", "a kernel.trace(...) tracepoint this kernel does not have"),
    ("no PMU", "perf.hw*/perf.hw_cache* need hardware counters; this machine (a VM) exposes "
     "none (/sys/bus/event_source/devices has no cpu PMU)"),
    ("not installed", "a program, library or debuginfo the script probes or runs (-c, "
     "process(\"...\"), test_support) is not installed here"),
    ("@var", "@var(\"name@file\") of a kernel global needs the kernel's DWARF debuginfo (not "
     "installed; BTF describes types and per-CPU variables only)"),
    ("kernel write", "assigning a kernel probe's `$variable` (guru mode: change a syscall's "
     "arguments) needs a kprobe on the function: a tracepoint's BPF program reads its "
     "arguments and cannot change what the kernel does with them. Netfilter's `$verdict` is "
     "the exception: it is the BPF netfilter program's return value"),
    ("@cast type", "@cast to a type that is in no type information installed here: not in the "
     "kernel's BTF and the probed program's DWARF is not installed (\"not installed\")"),
    ("machine", "the .meta's -c command fails on this machine without any tracer (e.g. the "
     "sandbox refuses to open a block device even to root)"),
]

# Tapset aliases that SystemTap (4.8, linux runtime) builds on kprobes only, but whose event
# this kernel does report through a tracepoint: a tracer can serve them (issue 14 lists them).
# Each maps an alias prefix to the tracepoints that carry the same event; the rule holds only if
# one of them exists on this kernel.
TRACEPOINT_EQUIVALENTS = {
    "signal.send": ["signal:signal_generate"],
    "signal.handle": ["signal:signal_deliver"],
    "scheduler.cpu_off": ["sched:sched_switch"],
    "scheduler.ctxswitch": ["sched:sched_switch"],
    "scheduler.wakeup": ["sched:sched_wakeup"],
    "scheduler.wakeup_new": ["sched:sched_wakeup_new"],
    "scheduler.process_fork": ["sched:sched_process_fork"],
    "scheduler.process_exit": ["sched:sched_process_exit"],
    "scheduler.process_free": ["sched:sched_process_free"],
    "scheduler.process_wait": ["sched:sched_process_wait"],
    "scheduler.migrate": ["sched:sched_migrate_task"],
    "kprocess.create": ["sched:sched_process_fork"],
    "kprocess.start": ["sched:sched_process_fork"],
    "kprocess.exec": ["sched:sched_process_exec"],
    "kprocess.exec_complete": ["sched:sched_process_exec"],
    "kprocess.exit": ["sched:sched_process_exit"],
    "kprocess.release": ["sched:sched_process_free"],
    "ioblock.request": ["block:block_bio_queue"],
    "ioblock.end": ["block:block_bio_complete"],
    "ioblock_trace.request": ["block:block_bio_queue"],
    "ioblock_trace.end": ["block:block_bio_complete"],
    "ioblock_trace.bounce": ["block:block_bio_bounce"],
    "netdev.transmit": ["net:net_dev_queue"],
    "netdev.hard_transmit": ["net:net_dev_start_xmit"],
    "netdev.receive": ["net:netif_receive_skb"],
    "vm.pagefault": ["exceptions:page_fault_user", "exceptions:page_fault_kernel"],
    "vm.kmem_cache_alloc": ["kmem:kmem_cache_alloc"],
    "vm.kmem_cache_free": ["kmem:kmem_cache_free"],
    "vm.kmalloc": ["kmem:kmalloc"],
    "vm.kfree": ["kmem:kfree"],
    "irq_handler.entry": ["irq:irq_handler_entry"],
    "irq_handler.exit": ["irq:irq_handler_exit"],
    "softirq.entry": ["irq:softirq_entry"],
    "softirq.exit": ["irq:softirq_exit"],
    "workqueue.execute": ["workqueue:workqueue_execute_start"],
}
# A ".return" of the aliases above has the same tracepoint only where the event has one end:
# vm.pagefault.return (handle_mm_fault's return value) has none.
NO_RETURN_EQUIVALENT = {"vm.pagefault"}

# Not listed: scheduler.cpu_on. Its handler runs in the task switched in (pid(), execname(),
# cpu() are that task's: chng_cpu.stp and graphs.stp depend on it), and no tracepoint fires in
# that task; sched_switch runs in the task switched out.

# Built-in probe point families (not tapset aliases) and their servability here.
BUILTIN_OK = {"begin", "end", "error", "never", "timer", "process", "perf"}


def tracepoint_exists(tp):
    """tp is "sys:name", "name" or a glob; true if /sys/kernel/tracing/events has it."""
    if tp is None:
        return True
    if ":" in tp:
        sys_, name = tp.split(":", 1)
    else:
        sys_, name = "*", tp
    return bool(glob.glob(os.path.join(TRACEFS, sys_, name, "id")))


_ELF_INFO = {}


def elf_info(path):
    """(defined function symbols, has DWARF) of an ELF file: .dynsym and .symtab, and the
    separate debug file found by build-id under /usr/lib/debug/.build-id when installed."""
    if path in _ELF_INFO:
        return _ELF_INFO[path]
    syms, dwarf, files = set(), False, [path]
    try:
        notes = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                               timeout=20).stdout
        m = re.search(r"Build ID:\s*([0-9a-f]+)", notes)
        if m:
            debug = "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2], m.group(1)[2:])
            if os.path.exists(debug):
                files.append(debug)
        for f in files:
            sections = subprocess.run(["readelf", "-SW", f], capture_output=True, text=True,
                                      timeout=20).stdout
            dwarf = dwarf or ".debug_info" in sections
            for args in (["nm", "-D", "--defined-only", f], ["nm", "--defined-only", f]):
                out = subprocess.run(args, capture_output=True, text=True, timeout=60).stdout
                for line in out.splitlines():
                    parts = line.split()
                    if len(parts) == 3 and parts[1] in "TtWi":
                        syms.add(parts[2].split("@")[0])
    except (OSError, subprocess.TimeoutExpired):
        pass
    _ELF_INFO[path] = (syms, dwarf)
    return _ELF_INFO[path]


def resolve_program(path):
    """The native ELF files a process("PATH") names (PATH via $PATH, or a glob)."""
    if "/" not in path:
        w = shutil.which(path)
        return [os.path.realpath(w)] if w else []
    return [os.path.realpath(h) for h in sorted(glob.glob(path))
            if elf_machine(os.path.realpath(h)) == NATIVE_MACHINE]


def user_dwarf_verdict(point, needs_vars):
    """process("PATH").function("NAME") / .statement(...): the function must be in the
    binary's symbols (or DWARF); a file:line spec, .statement and $variables need DWARF."""
    comps = components(point)
    if len(comps) < 2 or not comps[0].startswith("process("):
        return (True, "")
    path = first_string(comps[0])
    what = comps[1]
    if not path or not (what.startswith("function(") or what.startswith("statement(")):
        return (True, "")
    spec = first_string(what) or ""
    files = resolve_program(path)
    if not files:
        return (True, "")  # reported by program_problem
    infos = [(f, elf_info(f)) for f in files]
    need_dwarf = needs_vars or what.startswith("statement(") or "@" in spec or ":" in spec
    if need_dwarf and not any(dwarf for _f, (_s, dwarf) in infos):
        return (False, "not installed: debuginfo of %s (%s DWARF)" % (
            files[0], "its $variables need" if needs_vars else spec + " needs"))
    name = spec.split("@")[0]
    if name and not any(fnmatch.fnmatchcase(sym, name) for _f, (syms, _d) in infos
                        for sym in syms) and not any(d for _f, (_s, d) in infos):
        return (False, "not installed: %s has no symbol %s (stripped; debuginfo not "
                "installed)" % (files[0], name))
    return (True, "")


def kernel_data_verdict():
    """kernel.data(ADDR|"symbol") watchpoints: perf's breakpoint PMU, and kernel data symbols
    in /proc/kallsyms to find the variable (the examples look their address up there)."""
    if not os.path.isdir("/sys/bus/event_source/devices/breakpoint"):
        return (False, "no PMU: no perf breakpoint PMU for kernel.data watchpoints")
    data = 0
    try:
        with open("/proc/kallsyms") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in "dDbB":
                    data += 1
                    if data > 1000:
                        return (True, "")
    except OSError:
        pass
    return (False, "kernel.data: /proc/kallsyms lists no kernel data symbols "
            "(CONFIG_KALLSYMS_ALL off): the watched variable's address is unknown")


_NETFILTER = []


def bpf_netfilter_available():
    """Loads the smallest BPF netfilter program (return NF_ACCEPT) once: the kernel serves
    netfilter hooks to BPF when this works (BPF_PROG_TYPE_NETFILTER, Linux 6.4+, root)."""
    if _NETFILTER:
        return _NETFILTER[0]
    ok = False
    try:
        import ctypes
        import struct
        libc = ctypes.CDLL(None, use_errno=True)
        insns = ctypes.create_string_buffer(struct.pack("<BBhi", 0xb7, 0, 0, 1) +  # r0 = 1
                                            struct.pack("<BBhi", 0x95, 0, 0, 0))   # exit
        lic = ctypes.create_string_buffer(b"GPL")
        attr = bytearray(144)
        # union bpf_attr for BPF_PROG_LOAD: prog_type 32 (NETFILTER), insn_cnt, insns,
        # license; expected_attach_type 45 (BPF_NETFILTER) at offset 68
        struct.pack_into("<IIQQ", attr, 0, 32, 2, ctypes.addressof(insns), ctypes.addressof(lic))
        struct.pack_into("<I", attr, 68, 45)
        a = ctypes.create_string_buffer(bytes(attr))
        SYS_bpf = {"x86_64": 321, "aarch64": 280}.get(os.uname().machine)
        if SYS_bpf:
            fd = libc.syscall(SYS_bpf, 5, a, 144)  # BPF_PROG_LOAD
            if fd >= 0:
                os.close(fd)
                ok = True
    except Exception:
        ok = False
    _NETFILTER.append(ok)
    return ok


def has_cpu_pmu():
    return os.path.isdir("/sys/bus/event_source/devices/cpu")


# --------------------------------------------------------------------------------------------
# Script text helpers


# Embedded C that reaches into the kernel: kernel headers, the current task, kernel structures
# through pointers, kernel functions and macros. Such C runs only inside SystemTap's kernel
# module. Embedded C that only computes on its arguments (string helpers) is not a reason.
KERNEL_C_RE = re.compile(r"#\s*include\s*<(?:linux|net|asm|uapi|trace)/|\bcurrent\b|->|"
                         r"\bstruct\s+\w+\s*\*|^\s*-?[A-Z][A-Z0-9_]+\s*$|\bkey_put\b|"
                         r"\b(?:READ|WRITE)_ONCE\b|\blist_for_each", re.M)


def strip_comments(text):
    """Removes #, // and /* */ comments outside string literals (keeps line count)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "#" and i > 0 and text[i - 1] == "$":
            out.append(c)  # $# (the argument count), not a comment
            i += 1
        elif c == "#" or text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            seg = text[i:(n if j < 0 else j + 2)]
            out.append("\n" * seg.count("\n"))
            i = n if j < 0 else j + 2
        elif text.startswith("%{", i):
            # embedded C: keep a marker, drop its body (it may hold braces and quotes)
            j = text.find("%}", i + 2)
            body = text[i + 2:(n if j < 0 else j)]
            out.append("%{KERNELC%}" if KERNEL_C_RE.search(body) else "%{EMBEDDED%}")
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_top(s, sep=","):
    """Splits s at sep outside parentheses and string literals."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(s):
        c = s[i]
        if c == '"':
            j = i + 1
            while j < len(s) and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            cur.append(s[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def flatten_conditionals(s):
    """`%( COND %? A %: B %)` in a probe point list: keep both branches as alternatives."""
    s = re.sub(r"%\((.*?)%\?", ",", s, flags=re.S)
    return s.replace("%:", ",").replace("%)", ",")


PROBE_RE = re.compile(r"(?:^|[;}])\s*probe\s+", re.M)


def probe_specs(text):
    """The text between `probe` and its body's `{` for each probe statement. A `{` right after
    a `.` opens brace alternatives (syscall.{open,close}), not the body."""
    for m in PROBE_RE.finditer(text):
        i, depth, quote, alt = m.end(), 0, False, 0
        while i < len(text):
            c = text[i]
            if c == '"':
                quote = not quote
            elif quote:
                pass
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "{" and depth == 0:
                before = text[m.end():i].rstrip()
                if not before or before[-1] in ".,{" or alt:
                    alt += 1
                else:
                    break
            elif c == "}" and alt:
                alt -= 1
            i += 1
        yield text[m.end():i], block_at(text, i)


def block_at(text, i):
    """The text inside the braces that open at text[i] (string literals skipped)."""
    level, quote, j = 0, False, i
    while j < len(text):
        c = text[j]
        if c == '"':
            quote = not quote
        elif quote:
            if c == "\\":
                j += 1
        elif c == "{":
            level += 1
        elif c == "}":
            level -= 1
            if level == 0:
                return text[i + 1:j]
        j += 1
    return text[i + 1:]


def probe_statements(text):
    """[(lhs alias name or None, [(point, optional)], body)] of each probe statement."""
    result = []
    for spec, body in probe_specs(text):
        lhs = None
        am = re.match(r"\s*([\w.*]+(?:\([^)]*\))?(?:\.[\w*]+)*)\s*\+?=(?!=)(.*)$", spec, re.S)
        if am:
            lhs, spec = am.group(1), am.group(2)
        points = []
        for p in split_top(flatten_conditionals(spec)):
            for p, optional in expand_braces(p.strip(), ""):
                p = re.sub(r"\s+if\s*\(.*$", "", p, flags=re.S).strip()
                while p and p[-1] in "?!":
                    optional = optional or p[-1]
                    p = p[:-1].rstrip()
                if p and not p.startswith("%"):
                    points.append((p, optional))
        result.append((lhs, points, body))
    return result


def expand_braces(point, optional):
    """kernel.{trace("a")!, trace("b")}.x -> [(kernel.trace("a").x, "!"), ...]: SystemTap's
    brace alternatives with their marker: "?" optional, "!" optional and sufficient (the
    points after it are not tried when it resolves), "" required."""
    depth, quote, start = 0, False, -1
    for i, c in enumerate(point):
        if c == '"':
            quote = not quote
        elif quote:
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "{" and depth == 0:
            start = i
            break
    if start < 0:
        return [(point, optional)]
    level, end = 0, -1
    for j in range(start, len(point)):
        if point[j] == "{":
            level += 1
        elif point[j] == "}":
            level -= 1
            if level == 0:
                end = j
                break
    if end < 0:
        return [(point, optional)]
    out = []
    for alt in split_top(point[start + 1:end]):
        alt = alt.strip()
        opt = optional
        while alt and alt[-1] in "?!":
            opt = opt or alt[-1]
            alt = alt[:-1].rstrip()
        out.extend(expand_braces(point[:start] + alt + point[end + 1:], opt))
    return out


def components(point):
    """kernel.function("x").return -> ['kernel', 'function("x")', 'return']."""
    return [c.strip() for c in split_top(point, ".")]


# --------------------------------------------------------------------------------------------
# SystemTap's tapset aliases: which are built on tracepoints, which on kprobes only


class Tapsets:
    def __init__(self, root):
        self.aliases = {}  # name -> [(point, optional)]
        files = glob.glob(os.path.join(root, "*.stp")) + \
            glob.glob(os.path.join(root, "linux", "*.stp")) + \
            glob.glob(os.path.join(root, "linux", os.uname().machine, "*.stp"))
        for f in files:
            try:
                text = strip_comments(open(f, encoding="utf-8", errors="replace").read())
            except OSError:
                continue
            for lhs, points, _body in probe_statements(text):
                if lhs:
                    self.aliases.setdefault(lhs, []).extend(points)
        self.memo = {}

    def with_script_aliases(self, statements):
        """A copy that also knows the aliases a script defines."""
        t = Tapsets.__new__(Tapsets)
        t.aliases = dict(self.aliases)
        for lhs, points, _body in statements:
            if lhs:
                t.aliases.setdefault(lhs, []).extend(points)
        t.memo = {}
        return t

    def lookup(self, point):
        """Alias names matching point (wildcards allowed), longest prefix of components."""
        comps = components(point)
        for k in range(len(comps), 0, -1):
            name = ".".join(comps[:k])
            if "*" in name:
                hits = [a for a in self.aliases if fnmatch.fnmatchcase(a, name)
                        and a.count(".") == name.count(".")]
            else:
                hits = [name] if name in self.aliases else []
            if hits:
                return hits, comps[k:]
        return [], comps

    def alias_verdict(self, name, stack=()):
        """(ok, reason) for a tapset alias."""
        if name in self.memo:
            return self.memo[name]
        if name in stack:
            return (False, "recursive alias " + name)
        eq = equivalent(name)
        if eq is not None:
            self.memo[name] = eq
            return eq
        reasons = []
        ok_any = False
        for point, _opt in self.aliases.get(name, []):
            ok, why = point_verdict(point, self, stack + (name,))
            if ok:
                ok_any = True
                break
            reasons.append(why)
        if ok_any:
            v = (True, "")
        else:
            first = reasons[0] if reasons else "no definition"
            v = (False, "tapset alias %s: %s" % (name, first))
        self.memo[name] = v
        return v


def equivalent(name):
    """Verdict from TRACEPOINT_EQUIVALENTS for an alias name (or None if not listed)."""
    comps = name.split(".")
    for k in range(len(comps), 0, -1):
        prefix = ".".join(comps[:k])
        if prefix in TRACEPOINT_EQUIVALENTS:
            rest = comps[k:]
            if "return" in rest and prefix in NO_RETURN_EQUIVALENT:
                return None
            tps = TRACEPOINT_EQUIVALENTS[prefix]
            if any(tracepoint_exists(t) for t in tps):
                return (True, "")
            return (False, "%s: tracepoint %s not on this kernel" % (name, tps[0]))
    return None


def first_string(comp):
    m = re.search(r'"([^"]*)"', comp)
    return m.group(1) if m else None


def elf_machine(path):
    """The ELF e_machine of a file, or None if it is not ELF."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    return int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")


NATIVE_MACHINE = elf_machine("/proc/self/exe")


def program_installed(path):
    """A process("PATH") target exists: PATH found via $PATH, or a glob matching at least one
    ELF file of this machine's architecture (Debian's /lib32/libc.so.6 matches /lib*/libc.so.6
    but no 64-bit process maps it, so the probes would never fire)."""
    return program_problem(path) is None


def program_problem(path):
    if not path:
        return None
    if "/" not in path:
        return None if shutil.which(path) else "not installed: %s" % path
    hits = glob.glob(path)
    if not hits:
        return "not installed: %s" % path
    native = [h for h in hits if elf_machine(os.path.realpath(h)) in (NATIVE_MACHINE, None)]
    if not native:
        return "not installed: %s matches only %s (another architecture's)" % (
            path, ", ".join(sorted(hits)))
    return None


def point_verdict(point, tapsets, stack=()):
    """(servable, reason) for one probe point."""
    comps = components(point)
    head = comps[0]
    head2 = ".".join(comps[:2])
    if head.startswith("kernel") and len(comps) > 1:
        second = comps[1]
        if second.startswith("function") or second.startswith("statement"):
            return (False, "kprobes: " + point)
        if second.startswith("trace"):
            tp = first_string(second) or "*"
            if tracepoint_exists(tp):
                return (True, "")
            return (False, "no tracepoint %s on this kernel" % tp)
        if second.startswith("data"):
            return kernel_data_verdict()
        if second.startswith("mark"):
            return (False, "kernel module: kernel.mark (markers left Linux in 2.6.32)")
    if head.startswith("module(") or head == "kprobe" or head.startswith("kprobe"):
        return (False, "kprobes: " + point)
    if head.startswith("procfs"):
        return (True, "")  # user-space FIFOs, as SystemTap's BPF runtime does (RULES)
    if head == "netfilter":
        if bpf_netfilter_available():
            return (True, "")
        return (False, "kernel: no BPF netfilter programs (Linux 6.4+, root) for " + point)
    if head.startswith("java("):
        return (False, "not installed: Byteman (java(...) probes)")
    if head.startswith("process"):
        problem = program_problem(first_string(head))
        if problem:
            return (False, problem)
        return (True, "")
    if head == "perf":
        if len(comps) > 1 and comps[1].startswith("hw") and not has_cpu_pmu():
            return (False, "no PMU: " + point)
        return (True, "")
    if head in BUILTIN_OK or head.startswith("timer"):
        return (True, "")
    hits, _rest = tapsets.lookup(point)
    if not hits:
        eq = equivalent(".".join(c for c in comps))
        if eq is not None:
            return eq
        return (False, "not installed: the %s tapset (shipped with the program it probes) for %s"
                % (comps[0], point))
    reasons = []
    for h in hits:
        ok, why = tapsets.alias_verdict(h, stack)
        if ok:
            return (True, "")
        reasons.append(why)
    return (False, reasons[0])


# --------------------------------------------------------------------------------------------
# .meta command lines


def read_meta(path):
    meta = {}
    try:
        for line in open(path, encoding="utf-8", errors="replace"):
            if ":" in line:
                k, v = line.split(":", 1)
                meta.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return meta


def replace_stap(cmdline, replacement):
    """Replaces the first unquoted `stap` command word of a shell line with replacement."""
    i, n, quote = 0, len(cmdline), None
    while i < n:
        c = cmdline[i]
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"':
                i += 1
        elif c in "'\"":
            quote = c
        elif (cmdline.startswith("stap", i) and (i == 0 or cmdline[i - 1] in " \t|;&(")
              and (i + 4 == n or cmdline[i + 4] in " \t")):
            return cmdline[:i] + replacement + cmdline[i + 4:]
        i += 1
    return None


def stap_argv(cmdline):
    """The words after the unquoted `stap` (for the -c command and script arguments)."""
    marker = "\x00UKSTAP\x00"
    line = replace_stap(cmdline, marker)
    if line is None:
        return []
    rest = line.split(marker, 1)[1]
    lex = shlex.shlex(rest, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    words = []
    try:
        for w in lex:
            if w in ("|", "||", "&&", ";", "&", ")"):
                break
            words.append(w)
    except ValueError:
        return rest.split()
    return words


OPTS_WITH_ARG = set("cxoTpIDGemdrBSs")


def parse_stap_args(argv, script_name):
    """(-c command or None, script args, -I dirs) from a stap argument list. Like stap's
    getopt, options are recognized after the script name too (.meta lines put -c and -T after
    the script's arguments); after `--` everything is an argument."""
    cmd, args, seen_script, includes = None, [], False, []
    i, options_end = 0, False
    while i < len(argv):
        a = argv[i]
        if not options_end and a == "--":
            options_end = True
        elif not options_end and a.startswith("--"):
            pass
        elif (not options_end and a.startswith("-") and len(a) >= 2
              and a[1] in OPTS_WITH_ARG):
            val = a[2:] if len(a) > 2 else (argv[i + 1] if i + 1 < len(argv) else "")
            if len(a) == 2:
                i += 1
            if a[1] == "c":
                cmd = val
            if a[1] == "I":
                includes.append(val)
        elif not options_end and a.startswith("-") and len(a) >= 2:
            pass  # flags: -g, -w, -v, -u, ...
        elif not seen_script and (a == script_name or a.endswith("/" + script_name)):
            seen_script = True
        elif seen_script:
            args.append(a)
        i += 1
    return cmd, args, includes


ARGC_CONDITIONAL = re.compile(r"%\(((?:(?!%\().)*?)%\?((?:(?!%\().)*?)(?:%:((?:(?!%\().)*?))?%\)",
                              re.S)


def choose_argc_conditionals(text, argc):
    """`%( $# >= 5 %? A %: B %)` (conditions on the argument count only, joined by || and &&)
    becomes A or B, as SystemTap's preprocessor does; other conditionals stay as they are."""
    def rep(m):
        cond = m.group(1).replace("$#", str(argc)).replace("||", " or ").replace("&&", " and ")
        if not re.fullmatch(r"[\d\s<>=!()]*(?:(?:or|and)[\d\s<>=!()]*)*", cond):
            return m.group(0)
        try:
            taken = eval(cond, {"__builtins__": {}})  # digits, comparisons, or/and only
        except Exception:
            return m.group(0)
        return m.group(2) if taken else (m.group(3) or "")
    return ARGC_CONDITIONAL.sub(rep, text)


def substitute_args(text, args):
    """$1/@1 in probe points (scripts that take a probe point as argument), after choosing
    the branches of conditionals on the argument count."""
    text = choose_argc_conditionals(text, len(args))
    def rep(m):
        k = int(m.group(2)) - 1
        return args[k] if 0 <= k < len(args) else m.group(0)
    return re.sub(r'(@|\$)(\d+)', rep, text)


def command_program(cmd):
    """The first program a -c command runs (after env assignments and sudo-like words)."""
    try:
        words = shlex.split(cmd)
    except ValueError:
        words = cmd.split()
    for w in words:
        if "=" in w and not w.startswith("/"):
            continue
        if w in ("(", "exec", "env", "nice"):
            continue
        return w
    return None


SUPPORT_STAP_L = re.compile(r"stap\s+-[lL]\s+'([^']*)'")


def support_verdict(line, directory, tapsets):
    """test_support (the SystemTap testsuite's precondition): stap -l POINT parts are judged
    by the same point rules; other commands (which, rpm, perf, test) are run (10 s)."""
    if not line:
        return (True, "")
    points = SUPPORT_STAP_L.findall(line)
    if "stap" in line:
        if not points:
            return (True, "")  # `stap -p4 x.stp`: that is the benchmark itself
        # a || b: any alternative group servable; a && b: all. Approximate: the support
        # line's alternatives (`||`) are tried in order, first servable wins.
        groups = [g for g in re.split(r"&&", line)]
        for g in groups:
            pts = SUPPORT_STAP_L.findall(g)
            if not pts:
                continue
            ok_group = False
            why = ""
            for p in pts:
                alts = [a.strip().rstrip("?!").strip() for a in split_top(p)]
                ok = any(point_verdict(a, tapsets)[0] for a in alts if a)
                if ok:
                    ok_group = True
                    break
                why = point_verdict(alts[0], tapsets)[1]
            if not ok_group:
                return (False, why)
        return (True, "")
    try:
        r = subprocess.run(["bash", "-c", line], cwd=directory, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=10)
        if r.returncode == 0:
            return (True, "")
    except (subprocess.TimeoutExpired, OSError):
        pass
    return (False, "not installed: test_support `%s` fails" % line)


def classify(script, meta, tapsets):
    """(servable, reason) for one example script."""
    text = strip_comments(open(script, encoding="utf-8", errors="replace").read())
    name = os.path.basename(script)
    line = meta.get("test_installcheck") or meta.get("test_check") or ""
    cmd, args, includes = parse_stap_args(stap_argv(line), name) if line else (None, [], [])
    if "%{KERNELC%}" in text:
        return (False, "embedded C: %{ %} touching kernel internals (kernel-module C)")
    # ukstap runs from the script's directory: relative process("./x") paths are relative to it
    here = os.path.dirname(os.path.abspath(script))
    text = re.sub(r'process\("(\.\.?/[^"]*)"\)',
                  lambda m: 'process("%s")' % os.path.normpath(os.path.join(here, m.group(1))),
                  text)
    statements = probe_statements(substitute_args(text, args))
    for d in includes:
        for f in glob.glob(os.path.join(os.path.dirname(script), d, "*.stp")):
            statements += [(lhs, pts, "") for lhs, pts, _b in
                           probe_statements(strip_comments(open(f, errors="replace").read()))]
    tapsets = tapsets.with_script_aliases(statements)
    skipped, events = [], 0
    for lhs, points, body in statements:
        if lhs and lhs_unused(lhs, text):
            continue
        # $variables (other than the alias's own locals) of a process().function probe need
        # the binary's DWARF
        uses_targets = re.search(r"\$\$?[A-Za-z_]", body) is not None
        verdicts = []
        for p, opt in points:
            v = point_verdict(p, tapsets)
            if v[0] and uses_targets:
                v = user_dwarf_verdict(p, needs_vars=True)
            elif v[0]:
                v = user_dwarf_verdict(p, needs_vars=False)
            verdicts.append((p, opt, v))
            if opt == "!" and v[0]:
                break  # `a !, b`: b is only tried when a does not resolve
        required = [v for v in verdicts if not v[1]]
        bad = [v for v in required if not v[2][0]]
        if bad:
            return (False, bad[0][2][1])
        served = [v for v in verdicts if v[2][0]]
        if verdicts and not served:
            # all points optional and none resolves: SystemTap skips the probe
            skipped.append(verdicts[0][2][1])
        elif any(not is_lifecycle(v[0]) for v in served):
            events += 1
    if skipped and not events:
        # what is left (begin/end/timers) does not trace what the script is about
        return (False, skipped[0])
    if re.search(r'@var\s*\(\s*"[^"@]*@', text):
        return (False, "@var: kernel global needs kernel debuginfo")
    why = kernel_write_problem(statements)
    if why:
        return (False, why)
    why = cast_type_problem(text)
    if why:
        return (False, why)
    if cmd:
        prog = command_program(cmd)
        if prog and prog.startswith("."):
            prog = os.path.normpath(os.path.join(here, prog))
        if prog and not program_installed(prog):
            return (False, "not installed: %s (the -c command)" % prog)
        why = machine_refuses_command(cmd, here)
        if why:
            return (False, why)
    ok, why = support_verdict(meta.get("test_support", ""), os.path.dirname(script), tapsets)
    if not ok:
        return (False, why)
    return (True, "")


TARGET_WRITE = re.compile(r"\$([A-Za-z_]\w*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)")


def kernel_write_problem(statements):
    """A kernel probe's body that assigns a `$variable` (other than netfilter's `$verdict`)."""
    for _lhs, points, body in statements:
        kernel = [p for p, _o in points
                  if not components(p)[0].startswith("process") and not is_lifecycle(p)]
        if not kernel:
            continue
        for m in TARGET_WRITE.finditer(body):
            if m.group(1) == "verdict" and all(p.startswith("netfilter") for p in kernel):
                continue
            return "kernel write: $%s = ... in %s needs a kprobe" % (m.group(1), kernel[0])
    return None


CAST_TYPE = re.compile(r'@cast\s*\([^,()]*(?:\([^()]*\))?[^,()]*,\s*"(?:struct\s+|union\s+)?'
                       r'([A-Za-z_]\w*)"\s*(?:,\s*"([^"]*)")?\s*\)')
_KERNEL_TYPES = None


def kernel_btf_types():
    """Struct, union and typedef names of the running kernel's BTF (bpftool)."""
    global _KERNEL_TYPES
    if _KERNEL_TYPES is None:
        names = set()
        try:
            out = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                 timeout=60).stdout
            names = set(re.findall(r"^\[\d+\] (?:STRUCT|UNION|TYPEDEF|INT) '([^']+)'", out,
                                   re.M))
        except (OSError, subprocess.TimeoutExpired):
            pass
        _KERNEL_TYPES = names
    return _KERNEL_TYPES


def cast_type_problem(text):
    """@cast(p, "TYPE") (kernel module or none given) to a type the kernel's BTF lacks, unless
    guarded by @defined: only the probed program's DWARF could have it."""
    types = kernel_btf_types()
    if not types:
        return None
    for m in CAST_TYPE.finditer(text):
        name, module = m.group(1), m.group(2)
        if module and not module.startswith("kernel"):
            continue
        if name in types or text[max(0, m.start() - 12):m.start()].rstrip().endswith("@defined("):
            continue
        return "not installed: type %s of @cast (not in the kernel's BTF; no DWARF has it)" % name
    return None


def machine_refuses_command(cmd, here):
    """A -c command that opens a device: run it once without tracing (10 s); if the machine
    refuses it, no tracer could be tested with it here."""
    if "/dev/" not in cmd:
        return None
    try:
        r = subprocess.run(["bash", "-c", cmd], cwd=here, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode == 0:
        return None
    first = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0]
    return "machine: the -c command fails without tracing: %s" % first


def is_lifecycle(point):
    """begin/end/error/never/timer probes: they trace no event of the system."""
    head = components(point)[0]
    return head in ("begin", "end", "error", "never", "oneshot") or head.startswith("timer")


def lhs_unused(lhs, text):
    """An alias the script defines counts only if the script uses it."""
    base = lhs.split("(")[0]
    return len(re.findall(re.escape(base) + r"\b", text)) <= 1


# --------------------------------------------------------------------------------------------
# Running

ERROR_RE = re.compile(r"^(?:semantic error|parse error|ERROR|error)\b|^\S+:\d+:\d+: error:",
                      re.I)


def run_shell(line, cwd, timeout):
    """(rc or 'timeout', stdout, stderr). Own process group; SIGINT then SIGKILL on timeout."""
    p = subprocess.Popen(["bash", "-c", line], cwd=cwd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        try:
            out, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
        rc = "timeout"
    # whatever the command left behind in the group goes too
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def first_error(out, err, rc):
    lines = [l.strip() for l in err.splitlines() + out.splitlines()]
    # SystemTap's chain "while resolving probe point: ..." then its cause: the cause says why
    if lines and lines[0].startswith("semantic error: while resolving probe point"):
        causes = [l for l in lines if l.startswith("semantic error:")]
        if len(causes) > 1:
            return causes[-1]
    for l in lines:
        if ERROR_RE.search(l):
            return l
    for l in err.splitlines():
        if l.strip() and not l.startswith("WARNING"):
            return l.strip()
    if rc == "timeout":
        return "timeout"
    return "exit %s" % rc


PRINT_RE = re.compile(r"\b(?:print|printf|println|printd|printdln|print_\w+|ansi_\w+|"
                      r"sprint\w*|log|warn)\s*\(")


PRINT_CALL = r"\b(?:print|printf|println|printd|printdln|print_\w+|log)\s*\("


def unconditional(body):
    """The statements of a block that run every time: nested blocks and the single statement
    of an if/foreach/for/while removed (string literals blanked first)."""
    # braces and parentheses inside string literals are not structure
    body = re.sub(r'"(?:[^"\\]|\\.)*"',
                  lambda m: re.sub(r"[{}()]", " ", m.group(0)), body)
    prev = None
    while prev != body:
        prev = body
        body = re.sub(r"\{[^{}]*\}", ";", body)
    out, i = [], 0
    for m in re.finditer(r"\b(?:if|foreach|for|while|else)\b", body):
        if m.start() < i:
            continue
        out.append(body[i:m.start()])
        j = m.end()
        while j < len(body) and body[j].isspace():
            j += 1
        if j < len(body) and body[j] == "(":
            depth = 0
            while j < len(body):
                depth += body[j] == "("
                depth -= body[j] == ")"
                j += 1
                if depth == 0:
                    break
        k = body.find(";", j)
        i = len(body) if k < 0 else k + 1
    out.append(body[i:])
    return "".join(out)


def timer_period(point):
    """Seconds between firings of a timer.ms(N)/.s(N)/.sec(N)/.us(N)/.ns(N) point, else None."""
    m = re.match(r"timer\.(ms|msec|s|sec|us|usec|ns|nsec)\((\d+)\)", point.replace(" ", ""))
    if not m:
        return None
    scale = {"ms": 1e-3, "msec": 1e-3, "s": 1, "sec": 1, "us": 1e-6, "usec": 1e-6,
             "ns": 1e-9, "nsec": 1e-9}[m.group(1)]
    return int(m.group(2)) * scale


def run_seconds(line):
    """The -T SECONDS of a command line, else None."""
    m = re.search(r"(?:^|\s)-T\s*([0-9.]+)", line)
    return float(m.group(1)) if m else None


def output_shape(text, seconds=None):
    """What the script's output must look like: (output expected, literal header or None).
    Output is expected when a begin, end or timer probe prints unconditionally (directly or
    through a function of the script); prints under an event, an `if` or a `foreach` may
    legitimately print nothing in a short run. A timer whose period is not shorter than the
    run (`-T SECONDS`) never fires before the exit: SystemTap prints nothing there either
    (pf2.stp: timer.ms(5000) under -T 1). The header is the literal text of the first
    unconditional print of a `probe begin` (up to the first format directive or escape), checked
    when at least 4 characters long."""
    functions = {}
    for m in re.finditer(r"\bfunction\s+(\w+)[^{;]*\{", text):
        functions[m.group(1)] = block_at(text, m.end() - 1)
    printing = {f for f, b in functions.items() if re.search(PRINT_CALL, unconditional(b))}
    expect, header = False, None
    for spec, body in probe_specs(text):
        points = [p for p in split_top(spec) if p.strip()]
        if "=" in spec or not points or not all(is_lifecycle(p.strip()) for p in points):
            continue
        periods = [timer_period(p.strip()) for p in points]
        if seconds is not None and all(t is not None and t >= seconds for t in periods):
            continue
        flat = unconditional(body)
        if re.search(PRINT_CALL, flat) or any(re.search(r"\b%s\s*\(" % f, flat)
                                              for f in printing):
            expect = True
        if header is None and components(points[0].strip())[0] in ("begin", "oneshot"):
            pm = re.search(r'\b(?:printf|println|print)\s*\(\s*"((?:[^"\\]|\\.)*)"', flat)
            if pm:
                lit = re.split(r"%|\\", pm.group(1))[0].strip()
                if len(lit) >= 4:
                    header = lit
    return expect, header


def sample_header(script, text):
    """A column-header line of the sample output SystemTap ships next to the script (NAME.txt
    or NAME_example.txt): a line after the first `stap` command line whose words are all
    letters and all appear as string literals in the script (so the script prints them, not
    the traced data). None when there is no sample or no such line."""
    base = script[:-4]
    for sample in (base + ".txt", base + "_example.txt"):
        try:
            lines = open(sample, encoding="utf-8", errors="replace").read().splitlines()
        except OSError:
            continue
        start = next((i for i, l in enumerate(lines) if re.search(r"\bstap\s", l)), None)
        if start is None:
            return None
        # what input.* probes print answers a keypress of the sample's session (eventcount.txt's
        # "Sorting by tid"): not a header the script prints by itself
        unprompted = text
        for spec, body in probe_specs(text):
            points = [p.strip() for p in split_top(spec) if p.strip()]
            if points and all(p.startswith("input.") for p in points):
                unprompted = unprompted.replace(body, "")
        literals = set()
        for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', unprompted):
            literals.update(re.findall(r"[A-Za-z_]+", lit))
        for l in lines[start + 1:]:
            if re.search(r"\bstap\s", l):
                break
            words = l.split()
            if (len(words) >= 3 and all(re.fullmatch(r"[A-Za-z_]+", w) for w in words)
                    and all(w in literals for w in words)):
                return " ".join(words), os.path.basename(sample)
        return None
    return None


def judge_run(rc, out, err, shape, line, sample=None):
    prints, header = shape
    if rc == "timeout":
        return False, "timeout"
    if rc != 0:
        return False, first_error(out, err, rc)
    for l in err.splitlines() + out.splitlines():
        if ERROR_RE.search(l.strip()):
            return False, l.strip()
    writes_file = re.search(r"(^|\s)-o\s", line) is not None
    # blank lines are no output: deviceseeks.stp prints only "\n" when its device (the .meta's
    # sda; this machine's disk is vda) had no request, which shows nothing of the script working
    if prints and not writes_file and not out.strip():
        return False, "no output (the script prints)"
    if header and not writes_file and header not in out:
        return False, "output lacks the script's header %r" % header
    if sample and prints and not writes_file:
        words, name = sample
        if not any(" ".join(l.split()) == words for l in out.splitlines()):
            return False, "output lacks the header line of SystemTap's sample (%s): %r" % (
                name, words)
    return True, ""


def evaluate(script, args):
    meta_path = script[:-4] + ".meta"
    has_meta = os.path.exists(meta_path)
    meta = read_meta(meta_path) if has_meta else {}
    rel = os.path.relpath(script, args.examples)
    directory = os.path.dirname(script)
    name = os.path.basename(script)
    row = {"script": rel}
    try:
        servable, reason = classify(script, meta, args.tapset_db)
    except Exception as e:  # a harness bug must not lose the row
        servable, reason = False, "classification failed: %s" % e
    if not has_meta:
        servable, reason = False, "no .meta: no command line"
    row["servable"], row["reason"] = servable, reason
    line = meta.get("test_installcheck") or meta.get("test_check")
    if not line:
        line = "stap %s" % shlex.quote(name)
    row["line"] = line
    if args.classify_only:
        row.update(p2=None, p4=None, runs=None, why=reason)
        return row
    ukstap = shlex.quote(args.ukstap)
    why = ""
    results = {}
    meta_pass, bare = meta_last_pass(line)
    row["meta_pass"] = meta_pass
    for key, opt in (("p2", "-p2"), ("p4", "-p4")):
        cmd = replace_stap(bare, "%s %s" % (ukstap, opt))
        if cmd is None:
            cmd = "%s %s %s" % (ukstap, opt, shlex.quote(name))
        rc, out, err = run_shell(cmd, directory, args.timeout)
        results[key] = rc == 0
        if rc != 0:
            why = first_error(out, err, rc)
            break
    row["p2"] = results.get("p2", False)
    row["p4"] = results.get("p4", False)
    if row["p4"] and has_meta and meta_pass < 5:
        # the .meta's command stops before the run (-p1, -p4): runs is that command's success
        cmd = replace_stap(line, ukstap)
        rc, out, err = run_shell(cmd, directory, args.timeout)
        row["runs"] = rc == 0 and not any(ERROR_RE.search(l.strip())
                                          for l in (err + out).splitlines())
        if not row["runs"]:
            why = first_error(out, err, rc)
    elif row["p4"] and has_meta:
        cmd = replace_stap(line, ukstap)
        rc, out, err = run_shell(cmd, directory, args.timeout)
        text = strip_comments(open(script, encoding="utf-8", errors="replace").read())
        ok, why = judge_run(rc, out, err, output_shape(text, run_seconds(line)), line,
                           sample_header(script, text))
        row["runs"] = ok
    else:
        row["runs"] = False if has_meta else None
    if not why and not servable:
        why = reason
    row["why"] = why
    return row


PASS_OPT_RE = re.compile(r"(?<=\s)-([a-zA-Z]*)p\s*([1-5])(?=\s|$)")


def meta_last_pass(line):
    """(N, line without it) for a .meta command that stops at pass N with -pN (also combined,
    as in -gp1); (5, line) for a full run."""
    m = PASS_OPT_RE.search(line)
    if not m:
        return 5, line
    flags = m.group(1)
    return int(m.group(2)), line[:m.start()] + ("-" + flags if flags else "") + line[m.end():]


def runs_cell(r):
    v = yn(r["runs"])
    if r.get("meta_pass", 5) < 5 and r["runs"] is not None:
        v += " (-p%d)" % r["meta_pass"]
    return v


def yn(v):
    return "-" if v is None else ("yes" if v else "no")


def md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ")[:160]


def render(rows, args):
    total = len(rows)
    srv = [r for r in rows if r["servable"]]
    def count(rs, k):
        return sum(1 for r in rs if r[k])
    lines = []
    lines.append("# SystemTap examples with ukstap\n")
    lines.append("ukstap: `%s`%s; examples: `%s`; %s; timeout %d s per run.\n" % (
        args.ukstap, " (%s)" % args.label if args.label else "", args.examples,
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), args.timeout))
    lines.append("| | scripts | p2 | p4 | runs |")
    lines.append("|---|---|---|---|---|")
    lines.append("| all | %d | %d | %d | %d |" % (total, count(rows, "p2"), count(rows, "p4"),
                                                  count(rows, "runs")))
    lines.append("| servable | %d | %d | %d | %d |" % (len(srv), count(srv, "p2"),
                                                       count(srv, "p4"), count(srv, "runs")))
    partial = [r for r in rows if r["runs"] and r.get("meta_pass", 5) < 5]
    lines.append("")
    lines.append("runs: the .meta command succeeded, printed no error and the output has the "
                 "shape the script prints; %d of them (%d servable) stop before pass 5 because "
                 "their .meta says so (\"yes (-pN)\")." % (
                     len(partial), sum(1 for r in partial if r["servable"])))
    lines.append("")
    lines.append("| script | servable | p2 | p4 | runs | why not |")
    lines.append("|---|---|---|---|---|---|")
    for r in rows:
        serv = "yes" if r["servable"] else "no: " + md_escape(r["reason"])
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            r["script"], serv, yn(r["p2"]), yn(r["p4"]), runs_cell(r),
            "" if r["runs"] else md_escape(r["why"])))
    lines.append("")
    lines.append("## Classification rules (servable by this kernel or not)\n")
    for key, text in RULES:
        lines.append("- **%s**: %s" % (key, text))
    lines.append("- **tracepoint equivalents** (kprobe-only aliases in SystemTap that this "
                 "kernel reports through a tracepoint, so they count as servable): " +
                 ", ".join("%s=%s" % (k, "/".join(t or "stdin" for t in v))
                           for k, v in TRACEPOINT_EQUIVALENTS.items()))
    lines.append("")
    return "\n".join(lines) + "\n"


def blockers(rows):
    """First error per failing servable script, grouped by cause (the message without names
    and places), then by the name it is about, most frequent first."""
    groups = {}
    for r in rows:
        if not r["servable"] or r["runs"]:
            continue
        cause, detail = normalize_cause(r["why"])
        groups.setdefault(cause, {}).setdefault(detail, []).append(r["script"])
    items = sorted(groups.items(), key=lambda kv: (-sum(map(len, kv[1].values())), kv[0]))
    n = sum(1 for r in rows if r["servable"] and not r["runs"])
    lines = ["# Blockers of servable examples (first error, grouped)\n",
             "%d servable scripts do not run. Only each script's first error is known: fixing "
             "it may uncover the next. Regenerate: `bench/compat.py --blockers FILE` "
             "(`make compat`).\n" % n]
    for cause, details in items:
        lines.append("- **%d** `%s`" % (sum(map(len, details.values())), cause))
        for detail, scripts in sorted(details.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append("  - %d %s: %s" % (len(scripts), detail or "-",
                                             ", ".join(scripts)))
    return "\n".join(lines) + "\n"


def normalize_cause(why):
    """(cause, detail): the message without file:line:col, suggestions and names; the detail is
    the first name it quotes (the missing alias, function, option...)."""
    s = re.sub(r"\s+at\s+\S*:\d+:\d+.*$", "", why)
    s = re.sub(r"\s*\((?:similar|alternatives):[^)]*\)?", "", s)
    m = re.search(r"'([^']*)'|(@\w+)" + (r"|\s(-[-\w]+)" if "option" in s else ""), s)
    detail = next((g for g in m.groups() if g), "") if m else ""
    fm = re.search(r"unresolved function (\S+?):?(?:\s|$)", s)
    if fm:
        detail = fm.group(1)
        s = s.replace(fm.group(1), "X", 1)
    s = re.sub(r"'[^']*'", "'X'", s)
    s = re.sub(r'"[^"]*"', '"X"', s)
    s = re.sub(r"@\w+", "@X", s)
    s = re.sub(r"\b\d+\b", "N", s)
    if not detail:
        m = re.search(r"(function|operator|option) (\S+)", why)
        detail = m.group(2) if m else ""
    return s[:140], detail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ukstap", default=os.path.join(TOP, "ukstap"))
    ap.add_argument("--examples", default="/usr/share/systemtap/examples")
    ap.add_argument("--tapsets", default="/usr/share/systemtap/tapset")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "compat.md"))
    ap.add_argument("--blockers", help="also write the grouped blockers to this file")
    ap.add_argument("--label", default="", help="what the binary is (printed in the header)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--only", help="only scripts whose path contains this")
    ap.add_argument("--classify-only", action="store_true",
                    help="classify, don't run ukstap")
    args = ap.parse_args()
    args.jobs = max(1, min(args.jobs, 2))
    args.ukstap = os.path.abspath(args.ukstap)
    args.examples = os.path.abspath(args.examples)
    if not args.classify_only and not os.access(args.ukstap, os.X_OK):
        sys.exit("compat.py: no executable ukstap at %s" % args.ukstap)
    scripts = sorted(glob.glob(os.path.join(args.examples, "*", "*.stp")))
    if args.only:
        scripts = [s for s in scripts if args.only in s]
    if not scripts:
        sys.exit("compat.py: no example scripts under %s (install systemtap-doc)" % args.examples)
    args.tapset_db = Tapsets(args.tapsets)
    rows = [None] * len(scripts)
    lock = threading.Lock()
    done = [0]
    def work(i):
        r = evaluate(scripts[i], args)
        rows[i] = r
        with lock:
            done[0] += 1
            print("[%d/%d] %-45s servable=%-3s p2=%-3s p4=%-3s runs=%-3s %s" % (
                done[0], len(scripts), r["script"], yn(r["servable"]), yn(r["p2"]),
                yn(r["p4"]), yn(r["runs"]), "" if r["runs"] else r["why"][:80]),
                file=sys.stderr, flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        list(ex.map(work, range(len(scripts))))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(render(rows, args))
    if args.blockers:
        with open(args.blockers, "w") as f:
            f.write(blockers(rows))
    srv = [r for r in rows if r["servable"]]
    print("compat: %d scripts: p2 %d, p4 %d, runs %d; servable %d: p2 %d, p4 %d, runs %d "
          "(table: %s)" % (
              len(rows), sum(1 for r in rows if r["p2"]), sum(1 for r in rows if r["p4"]),
              sum(1 for r in rows if r["runs"]), len(srv), sum(1 for r in srv if r["p2"]),
              sum(1 for r in srv if r["p4"]), sum(1 for r in srv if r["runs"]), args.out))


if __name__ == "__main__":
    main()
