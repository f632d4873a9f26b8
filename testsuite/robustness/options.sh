#!/bin/bash
# Option values out of what the runtime can do: one line naming the option (plus the --help
# hint, as every usage error), exit status 1, and nothing compiled or attached. The accepted
# ranges come from the runtime (runtime/common/stp_limits.h) and
# from what the kernel loads; the edges that are accepted are run to show they really work.
. "$(dirname "$0")/../e2e-lib.sh"

NL=$'\n'
HINT="Try 'ukstap --help' for more information."
OK='probe begin { exit() }'
usage() { printf 'ukstap: %s\n%s\n' "$1" "$HINT"; }

# --- -D limits ---------------------------------------------------------------------------------
for v in -1 0 1000000 100 12abc ''; do
  t "-D MAXSTRINGLEN=$v" 1 '' "$(usage "Invalid -D 'MAXSTRINGLEN=$v': MAXSTRINGLEN must be a power of two from 16 to 8192.")$NL" \
    -- "$UKSTAP" -p2 -D "MAXSTRINGLEN=$v" -e "$OK"
done
t "-D MAXSTRINGLEN without a value" 1 '' "$(usage "Invalid -D 'MAXSTRINGLEN': MAXSTRINGLEN must be a power of two from 16 to 8192.")$NL" \
  -- "$UKSTAP" -p2 -D MAXSTRINGLEN -e "$OK"
for v in 0 4194305 99999999999999999999; do
  t "-D MAXMAPENTRIES=$v" 1 '' "$(usage "Invalid -D 'MAXMAPENTRIES=$v': MAXMAPENTRIES must be 1 to 4194304.")$NL" \
    -- "$UKSTAP" -p2 -D "MAXMAPENTRIES=$v" -e "$OK"
done
t "-D MAXBACKTRACE=2000" 1 '' "$(usage "Invalid -D 'MAXBACKTRACE=2000': MAXBACKTRACE must be 1 to 1024.")$NL" \
  -- "$UKSTAP" -p2 -D MAXBACKTRACE=2000 -e "$OK"
t "-D STP_SYSCALL_DISPATCH=banana" 1 '' "$(usage "Invalid -D 'STP_SYSCALL_DISPATCH=banana': STP_SYSCALL_DISPATCH must be 0 or 1.")$NL" \
  -- "$UKSTAP" -p2 -D STP_SYSCALL_DISPATCH=banana -e "$OK"
# Any other macro lands on a #define line of the generated C: it must stay on that line.
t "-D value with a newline" 1 '' "$(usage "Invalid -D 'FOO=...': the value must be one line (no newline or final '\\').")$NL" \
  -- "$UKSTAP" -p2 -D "FOO=1${NL}#include </etc/shadow>" -e "$OK"
t "-D value ending in a backslash" 1 '' "$(usage "Invalid -D 'FOO=...': the value must be one line (no newline or final '\\').")$NL" \
  -- "$UKSTAP" -p2 -D 'FOO=1\' -e "$OK"

# --- -T, -c, -I, -d ----------------------------------------------------------------------------
t "-T 1e300" 1 '' $'Invalid timeout interval.\n' -- "$UKSTAP" -p2 -T 1e300 -e "$OK"
t "-T above INT32_MAX seconds" 1 '' $'Invalid timeout interval.\n' -- "$UKSTAP" -p2 -T 2147483648 -e "$OK"
t "-c ''" 1 '' "$(usage "-c needs a command.")$NL" -- "$UKSTAP" -p2 -c '' -e "$OK"
t "-I /nonexistent" 1 '' "$(usage "-I /nonexistent: No such file or directory.")$NL" \
  -- "$UKSTAP" -p2 -I /nonexistent -e "$OK"
t "-I a file" 1 '' "$(usage "-I /etc/passwd: Not a directory.")$NL" -- "$UKSTAP" -p2 -I /etc/passwd -e "$OK"
t "-d a text file" 1 '' "$(usage "-d /etc/passwd: not an ELF file.")$NL" -- "$UKSTAP" -p2 -d /etc/passwd -e "$OK"
t "-d a directory" 1 '' "$(usage "-d /usr: Is a directory.")$NL" -- "$UKSTAP" -p2 -d /usr -e "$OK"
t "-d a missing file" 1 '' "$(usage "-d /nonexistent: No such file or directory.")$NL" \
  -- "$UKSTAP" -p2 -d /nonexistent -e "$OK"
true_bin=$(readlink -f /bin/true)
head -c 4096 "$true_bin" > "$T_TMP/truncated"   # a real ELF header, the rest cut off
t "-d a truncated ELF" 1 '' '~^ukstap: -d .*/truncated: corrupt ELF file' -- "$UKSTAP" -p2 -d "$T_TMP/truncated" -e "$OK"
{ head -c 64 "$true_bin"; head -c 8192 /dev/zero; } > "$T_TMP/zeroed"  # header, no sections
t "-d an ELF header over zeros" 1 '' '~^ukstap: -d .*/zeroed: corrupt ELF file' -- "$UKSTAP" -p2 -d "$T_TMP/zeroed" -e "$OK"
t "-d a real executable is accepted" 0 '*' '' -- "$UKSTAP" -p2 -d "$true_bin" -e "$OK"

# --- -G: checked against the global's type once pass 2 knows it --------------------------------
G='global n = 1, s = "x", arr
probe begin { arr[1] = 1; printf("%d %s %d\n", n, s, arr[1]); exit() }'
t "-G n=abc" 1 '' $'semantic error: -G n=abc: global \'n\' is a long and \'abc\' is not a whole number (64-bit)\n\nPass 2: analysis failed.  [man error::pass2]\n' \
  -- "$UKSTAP" -p2 -G n=abc -e "$G"
t "-G n=12abc" 1 '' '~^semantic error: -G n=12abc: global .n. is a long and .12abc. is not a whole number' \
  -- "$UKSTAP" -p2 -G n=12abc -e "$G"
t "-G n=2^64" 1 '' '~^semantic error: -G n=18446744073709551616: global .n. is a long' \
  -- "$UKSTAP" -p2 -G n=18446744073709551616 -e "$G"
t "-G nosuch=1" 1 '' '~^semantic error: -G nosuch=1: the script has no global .nosuch.$' \
  -- "$UKSTAP" -p2 -G nosuch=1 -e "$G"
t "-G on an array" 1 '' '~^semantic error: -G arr=1: .arr. is an array or aggregate' \
  -- "$UKSTAP" -p2 -G arr=1 -e "$G"

# --- the accepted edges really work (independent truth: the program's own output) -------------
if t_require_root; then
  export XDG_CACHE_HOME=$T_TMP/cache
  t "-G sets a long (hex) and a string" 0 $'16 hello 1\n' '' -- "$UKSTAP" -G n=0x10 -G s=hello -e "$G"
  t "-G negative long" 0 $'-5 x 1\n' '' -- "$UKSTAP" -G n=-5 -e "$G"
  # The largest MAXSTRINGLEN in a kernel probe: a string built there and read back natively.
  t "-D MAXSTRINGLEN=8192 loads and runs" 0 "$(printf '<%2000s> 2002' x)$NL" '' \
    -- "$UKSTAP" -D MAXSTRINGLEN=8192 -c /bin/true -e '
global out
probe kernel.trace("syscalls:sys_enter_execve") { if (pid() == target()) out = sprintf("<%2000s>", "x") }
probe end { printf("%s %d\n", out, strlen(out)) }'
  # The largest MAXMAPENTRIES: the map's entries are the edge, so its key is a long. A string
  # key (512 bytes) made the preallocated map 2.4 GB: 5 s of kernel time zeroing it, for the same
  # check (string keys are checked at the default size throughout the e2e suite).
  t "-D MAXMAPENTRIES=4194304 loads and runs" 0 $'1\n' '' \
    -- "$UKSTAP" -D MAXMAPENTRIES=4194304 -c /bin/true -e '
global a
probe kernel.trace("syscalls:sys_enter_execve") { if (pid() == target()) a[pid()] = 1 }
probe end { foreach (k in a) println(a[k]) }'
fi
t_done
