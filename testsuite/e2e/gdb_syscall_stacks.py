# gdb -batch -x gdb_syscall_stacks.py --args PROG ARGS...: the truth for the unwinder tests
# (run_unwind_coverage.sh). Stops at every entry and exit of the syscall named by $SYSCALL
# (gdb's `catch syscall`) and prints the stack gdb unwinds there as one line:
#   STACK <pc> <pc> ...
# one pc per physical frame (inline frames share their caller's pc and are left out; gdb's
# terminating frame with pc 0 too), innermost first: frame 0's pc, then return addresses.
# gdb runs the program with ASLR off; the test runs ukstap under `setarch -R` to compare pcs.
import os

import gdb

for cmd in ("set pagination off", "set confirm off", "set backtrace past-main on",
            "set backtrace past-entry on", "set backtrace limit 200",
            "catch syscall " + os.environ["SYSCALL"]):
    gdb.execute(cmd)
gdb.execute("run")
while True:
    try:
        frame = gdb.newest_frame()
    except gdb.error:  # the program exited: no frames
        break
    pcs = []
    while frame is not None:
        if frame.type() != gdb.INLINE_FRAME and frame.pc() != 0:
            pcs.append(frame.pc())
        frame = frame.older()
    print("STACK " + " ".join("0x%x" % pc for pc in pcs), flush=True)
    try:
        gdb.execute("continue")
    except gdb.error:
        break
