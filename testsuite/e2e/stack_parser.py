#!/usr/bin/env python3
"""Tests of bench/lib/stap_stack.py, the one stack-line parser of bench/ and the e2e checks
(run by stack_parser.sh). Truth: lines written here by hand after docs/STAP-FORMATS.md §4 and
perf script's frame format, and an object assembled here whose call instructions' lengths are
known from their encoding (call rel32: 5 bytes, call *%rax: 2 bytes).

usage: stack_parser.py [TestCase...]"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (bench/ is distributed whole)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "lib"))
from stap_stack import Frame, PerfFrame, follows_call, parse_frame, parse_perf_frame  # noqa: E402

LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"


class StapLines(unittest.TestCase):
    def test_with_symbol(self):
        self.assertEqual(parse_frame(" 0x4005d4 : foo+0x8/0x1b [/tmp/a.out]\n"),
                         Frame(0x4005d4, "foo", 0x8, 0x1b, "/tmp/a.out", None, False))
        self.assertEqual(parse_frame(" 0xffffffff81234567 : do_sys_openat2+0x74/0x130 [kernel]"),
                         Frame(0xffffffff81234567, "do_sys_openat2", 0x74, 0x130, "kernel", None, False))
        self.assertEqual(parse_frame(" 0xffffffffc0123456 : xfs_file_read_iter+0x10/0x100 [xfs]").module, "xfs")

    def test_module_only(self):
        self.assertEqual(parse_frame(" 0x7f0c2a42724a [%s+0x2724a/0x1b1000]" % LIBC),
                         Frame(0x7f0c2a42724a, None, 0x2724a, 0x1b1000, LIBC, None, False))
        # a '+' in the path: the offset is the last "+0x…/0x…"
        self.assertEqual(parse_frame(" 0x7f0000001234 [/usr/lib/libstdc++.so.6+0x1234/0x200000]"),
                         Frame(0x7f0000001234, None, 0x1234, 0x200000, "/usr/lib/libstdc++.so.6", None, False))

    def test_nothing_known(self):
        self.assertEqual(parse_frame(" 0x7f0c2a42724a"),
                         Frame(0x7f0c2a42724a, None, None, None, None, None, False))

    def test_fileline(self):
        self.assertEqual(parse_frame(" 0x4005d4 : foo+0x8/0x1b at /tmp/a.c:5 [/tmp/a.out]"),
                         Frame(0x4005d4, "foo", 0x8, 0x1b, "/tmp/a.out", "/tmp/a.c:5", False))

    def test_inexact(self):
        for line, name, module in [
                (" 0x7f0000001000 : sub_1000+0x0/0x20 [/tmp/jit.so] (inexact)", "sub_1000", "/tmp/jit.so"),
                (" 0x7f0000001000 [/tmp/x.so+0x1000/0x2000] (inexact)", None, "/tmp/x.so"),
                (" 0x7f0000002000 (inexact)", None, None)]:
            f = parse_frame(line)
            self.assertIsNotNone(f, line)
            self.assertTrue(f.inexact, line)
            self.assertEqual((f.name, f.module), (name, module), line)

    def test_brackets_in_module(self):
        f = parse_frame(" 0x7ffd1c5f2a4d : __vdso_clock_gettime+0x4d/0x3c0 [[vdso]]")
        self.assertEqual((f.name, f.offset, f.module), ("__vdso_clock_gettime", 0x4d, "[vdso]"))
        f = parse_frame(" 0x7ffd1c5f2a4d [[vdso]+0xa4d/0x2000] (inexact)")
        self.assertEqual((f.name, f.offset, f.size, f.module, f.inexact), (None, 0xa4d, 0x2000, "[vdso]", True))

    def test_not_frames(self):
        for line in ["<no user backtrace at kernel.function(\"foo\")>", "<no kernel backtrace at timer.profile>",
                     "foo+0x8 [a.out]", "foo+0x8", "0x4005d4 0x400612 ", "syscall.getppid", "", " ",
                     "0x4005d4 : foo+0x8/0x1b [/tmp/a.out]", " 0xZZ : foo+0x8/0x1b [/tmp/a.out]",
                     "@@ukstap-sample 1 2 comm", "== 1"]:
            self.assertIsNone(parse_frame(line), repr(line))


class PerfLines(unittest.TestCase):
    def test_with_symoff(self):
        self.assertEqual(parse_perf_frame("\t    7f0c2a4d61fa __getdents64+0x1a (%s)\n" % LIBC),
                         PerfFrame(0x7f0c2a4d61fa, "__getdents64", 0x1a, LIBC))

    def test_without_symoff(self):
        self.assertEqual(parse_perf_frame("\t          401136 main (/tmp/a.out)"),
                         PerfFrame(0x401136, "main", None, "/tmp/a.out"))
        self.assertEqual(parse_perf_frame("\t    55d0c0de1234 [unknown] (/usr/bin/sort)"),
                         PerfFrame(0x55d0c0de1234, "[unknown]", None, "/usr/bin/sort"))
        self.assertEqual(parse_perf_frame("\tffffffffffffffff [unknown] ([unknown])").dso, "[unknown]")

    def test_without_dso(self):
        self.assertEqual(parse_perf_frame("\t  401136 main"), PerfFrame(0x401136, "main", None, None))

    def test_not_frames(self):
        for line in ["ls  1234 [001] 12.345678: syscalls:sys_enter_getdents64: fd: 0x3", "", "\t", "ls 1234"]:
            self.assertIsNone(parse_perf_frame(line), repr(line))


# f: call g (e8 rel32, 5 bytes) at 0; nop at 5; call *%rax (ff d0, 2 bytes) at 6; nop at 8;
# ret at 9; g: ret at 0xa
ASM = """
  .text
  .globl f
f:
  call g
  nop
  call *%rax
  nop
  ret
g:
  ret
"""


class FollowsCall(unittest.TestCase):
    def test_call_sites(self):
        with tempfile.TemporaryDirectory() as d:
            src, obj = os.path.join(d, "calls.s"), os.path.join(d, "calls.o")
            with open(src, "w") as fo:
                fo.write(ASM)
            subprocess.run(["as", "-o", obj, src], check=True)
            self.assertIs(follows_call(obj, 5), True)   # after the direct call
            self.assertIs(follows_call(obj, 8), True)   # after the indirect call
            for a in (0, 6, 9, 0xa):
                self.assertIs(follows_call(obj, a), False, hex(a))
            self.assertIsNone(follows_call(obj, 0x1000))  # outside its code
            self.assertIsNone(follows_call(os.path.join(d, "missing.o"), 5))


if __name__ == "__main__":
    unittest.main()
