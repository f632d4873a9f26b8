#!/bin/bash
# Big binaries' unwind tables (issue 15): cc1plus (478k rows, more than the whole fixed pool of
# before) gets its table when g++ runs it, and its stacks are gdb's; a memory budget too small
# for a table refuses that file with one warning naming it and leaves the others loaded.
#
# Truth: gdb's backtrace (past main) at the same point, cc1plus run by gdb with the arguments
# `g++ -###` gives it: the openat() of the source file. cc1plus is not PIE, so its frames must
# have gdb's addresses exactly; libc's frames (randomized) the same offset within the page.
# Root only; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
CC1PLUS=/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus
LIBC=$(ldd /bin/true | sed -n 's/.*libc\.so\.6 => \([^ ]*\).*/\1/p')  # -v names it by its real path
cd "$T_TMP" || exit 1
printf '#include <string>\n#include <vector>\nint f() { std::vector<std::string> v{"a", "b"}; return (int)v.size(); }\n' > x.cpp

# --- the budget: 2 MiB (1 MiB of rules, one 1 MiB chunk of rows) holds libc's table (110 KiB),
# not cc1plus's (2 MiB) ------------------------------------------------------------------------
NOSTACK='probe begin { exit() } probe syscall.getppid { if (pid() == 0) print_ubacktrace() }'
t "budget: one warning names cc1plus, its size and the budget; libc keeps its table" 0 '' \
  "~^WARNING: unwind table memory budget of 2 MiB exceeded: $CC1PLUS \([0-9]+ rows, [0-9.]+ MiB\) has no unwind table, its frames unwind by frame pointers only" -- \
  "$UKSTAP" -v -D STP_UNWIND_TABLE_MB=2 -d "$CC1PLUS" -d "$LIBC" -e "$NOSTACK"
cp "$T_TMP/err" budget.err
t "budget: exactly one warning, cc1plus not loaded, libc loaded" 0 '' '' -- bash -c "
  [ \$(grep -c '^WARNING' budget.err) = 1 ] &&
  grep -q '^Pass 5: $CC1PLUS: .*(not loaded)\$' budget.err &&
  grep '^Pass 5: [^ ]*/libc\.so\.6: ' budget.err | grep -vq 'not loaded'"
t "budget: a value that is not a number is refused with a warning" 0 '' \
  '~^WARNING: -D STP_UNWIND_TABLE_MB=lots is not a number of MiB > 0: using 512' -- \
  "$UKSTAP" -D STP_UNWIND_TABLE_MB=lots -e "$NOSTACK"

# --- g++ compiles x.cpp twice: cc1plus's table is loaded when the first run maps it (the budget
# run above left it in the cache), the second run's stack is the one compared -----------------
OPENAT='probe syscall.openat { if (execname() == "cc1plus" && filename == "\"x.cpp\"") print_ubacktrace() }'
t "g++: runs, no pool-full or budget warning" 0 '' '' -- \
  "$UKSTAP" -o ukstap.out -e "$OPENAT" -c 'g++ -c x.cpp -o x.o; g++ -c x.cpp -o x.o'

# gdb on cc1plus with the driver's arguments (the output file aside).
args=$(g++ -### -c x.cpp -o x.o 2>&1 | grep "^ $CC1PLUS " | sed 's/ -o [^ ]*\.s/ -o \/dev\/null/; s/"//g')
t "gdb: stops at cc1plus's openat of x.cpp" 0 '*' '*' -- bash -c "
  gdb -batch -nx -ex 'set backtrace past-main on' -ex 'catch syscall openat' \
    -ex 'condition 1 \$_streq((char*)\$rsi, \"x.cpp\")' -ex run -ex bt --args $args > gdb.out 2>&1
  grep -q '^#0 .* in __libc_open64 ' gdb.out"

# Frames as "ADDR" (cc1plus) or "lib+PAGEOFFSET" (libraries): ukstap's last stack, gdb's bt.
# ukstap's by the module it names: under ASLR a library can lie below 0x7f0000000000 (CI saw
# libc at 0x7efc3897a000); gdb runs cc1plus without ASLR, its libraries at 0x7ffff7...
frames_ukstap() {
  awk '/__libc_open64\+/ {n = 0; delete f} {f[n++] = $1 " " $NF} END {for (i = 0; i < n; i++) print f[i]}' ukstap.out |
    python3 -c 'import sys
for l in sys.stdin:
    addr, mod = l.split()
    a = int(addr, 16)
    print(hex(a) if mod.rstrip("]").endswith("/cc1plus") else "lib+%03x" % (a & 0xfff))'
}
frames_gdb() {
  sed -n 's/^#[0-9]*  *\(0x[0-9a-f]*\) in .*/\1/p' gdb.out |
    python3 -c 'import sys
for l in sys.stdin:
    a = int(l, 16)
    print(hex(a) if a < 0x7f0000000000 else "lib+%03x" % (a & 0xfff))'
}
frames_ukstap > ukstap.frames
frames_gdb > gdb.frames
t "g++: cc1plus's stack at openat = gdb's, frame for frame, down to _start" 0 '' '' -- bash -c "
  [ \$(wc -l < gdb.frames) -ge 9 ] && diff gdb.frames ukstap.frames >&2 &&
  tail -1 ukstap.out | grep -q ' : _start+'"
t_done
