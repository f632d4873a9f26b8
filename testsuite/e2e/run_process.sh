#!/bin/bash
# The process probe family as SystemTap scripts write it (stapprobes "USER-SPACE"): program
# lookup (relative to the working directory, $PATH, globs), functions of a stripped binary,
# .return's $return, PLT stubs and $$name, .library, .statement, process.begin/end,
# process.syscall[.return], and the one-line errors.
#
# Truths: the test program's own output (testsuite/e2e/progs/proc_prog.c prints work()'s return
# values and getppid()'s), nm/objdump/gdb/readelf for addresses and names, ls for globs, bash's
# $! for pids, strace -n for syscall numbers. Root only; under CI=true not being root fails.
# e2e-schedule: first (run-e2e.sh): one of the longest scripts (18 CPU s, 2026-11-26).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"

cd "$T_TMP" || exit 1
t_build "the target program" gcc -g -O0 -no-pie -rdynamic -pthread -o proc_prog "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/proc_prog.c" || { t_done; exit; }
PROG=$T_TMP/proc_prog
fail_msg() { echo "$*" >&2; return 1; }
# same WHAT A B: files A and B have the same lines
same() { cmp -s "$2" "$3" || { echo "$1 differ:" >&2; diff "$2" "$3" >&2; return 1; }; }
check() { local d=$1; shift; t "$d" 0 '' '' -- "$@"; }

# ---------------------------------------------------------------- lookup, .return, addresses
# process("proc_prog") with -c ./proc_prog: not in $PATH, so the working directory's (stap's
# find_executable); $return of each call = what the program printed.
"$UKSTAP" -o ret.out -c './proc_prog 4' \
  -e 'probe process("proc_prog").function("work").return { printf("work=%d\n", $return) }' > prog.out
sed -n 's/^work([0-9]*)=/work=/p' prog.out > want.ret
check "relative process(\"proc_prog\") with -c ./proc_prog: \$return = the program's values" \
  same '$return' want.ret ret.out

# The probed address and name: nm's.
"$UKSTAP" -o addr.out -c './proc_prog 1' \
  -e 'probe process("./proc_prog").function("work") { printf("%s %x\n", probefunc(), uaddr()) }' > /dev/null
printf 'work %s\n' "$(nm proc_prog | awk '$3 == "work" { sub(/^0+/, "", $1); print $1 }')" > want.addr
check "function(\"work\"): probefunc() and uaddr() = nm's symbol" same address want.addr addr.out

# process.function without a path: the -c program.
"$UKSTAP" -o nopath.out -c './proc_prog 2' \
  -e 'probe process.function("work").return { printf("work=%d\n", $return) }' > prog.out
sed -n 's/^work([0-9]*)=/work=/p' prog.out > want.nopath
check "process.function(\"work\") with -c: the -c program" same '$return' want.nopath nopath.out

# A stripped copy (no .symtab, readelf says so) still has work in .dynsym.
strip -o proc_prog.stripped proc_prog
check "the stripped copy has no .symtab" sh -c "! readelf -S proc_prog.stripped | grep -q '\.symtab'"
"$UKSTAP" -o strip.out -c './proc_prog.stripped 3' \
  -e 'probe process("./proc_prog.stripped").function("work").return { printf("work=%d\n", $return) }' > prog.out
sed -n 's/^work([0-9]*)=/work=/p' prog.out > want.strip
check "stripped binary: work found in .dynsym, \$return = the program's values" \
  same '$return' want.strip strip.out

# ---------------------------------------------------------------- $PATH and globs (pass 2)
LS=$(readlink -f "$(command -v ls)")
"$UKSTAP" -l 'process("ls").function("*")' | sed -n 's/.*\.function("\([^"@]*\).*/\1/p' | sort -u > ls.ukstap
nm -D --defined-only "$LS" | awk '$2 ~ /^[TtWiI]$/ { print $3 }' | sed 's/@.*//' | sort -u > ls.nm
check "process(\"ls\") through \$PATH: the functions of nm -D $LS" same functions ls.nm ls.ukstap
"$UKSTAP" -l 'process("ls").function("*")' | sed -n 's/^process("\([^"]*\)").*/\1/p' | sort -u > ls.path
echo "$LS" > ls.want
check "process(\"ls\") is $LS" same path ls.want ls.path

"$UKSTAP" -l 'process("/lib*/libc.so.6").function("getppid")' | sed -n 's/^process("\([^"]*\)").*/\1/p' | sort -u > glob.got
for f in /lib*/libc.so.6; do [ -e "$f" ] && readlink -f "$f"; done | sort -u > glob.want
check "process(\"/lib*/libc.so.6\"): one point per file ls /lib*/libc.so.6 lists" same files glob.want glob.got

# ---------------------------------------------------------------- .plt, .library, .statement
PLT=$(objdump -d --no-show-raw-insn proc_prog | sed -n 's/^0*\([0-9a-f]*\) <getppid@plt>:$/\1/p')
"$UKSTAP" -o plt.out -c './proc_prog 3' \
  -e 'probe process("./proc_prog").plt("getppid") { printf("%s %x\n", $$name, uaddr()) }' > /dev/null
printf 'getppid %s\n' "$PLT" "$PLT" "$PLT" > want.plt
check ".plt(\"getppid\"): \$\$name and objdump's getppid@plt address, once per call" same PLT want.plt plt.out
"$UKSTAP" -o pltall.out -c './proc_prog 1' -e 'probe process.plt { println($$name) }' > /dev/null
check "process.plt with -c: getppid among the stubs run" grep -qx getppid pltall.out

"$UKSTAP" -o lib.out -c './proc_prog 3' \
  -e 'probe process.library("libc.so.6").function("getppid").return { printf("%d\n", $return) }' > prog.out
sed -n 's/^ppid=//p' prog.out > want.lib
check "process.library(\"libc.so.6\").function(\"getppid\").return: the values the program got" \
  same '$return' want.lib lib.out

LINE=$(grep -n 'int r = n \* 3;' "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/proc_prog.c" | cut -d: -f1)
GDB=$(gdb -batch -ex "info line proc_prog.c:$LINE" proc_prog 2>/dev/null | sed -n 's/.*starts at address 0x\([0-9a-f]*\).*/\1/p')
"$UKSTAP" -o stmt.out -c './proc_prog 2' \
  -e "probe process(\"./proc_prog\").statement(\"work@proc_prog.c:$LINE\") { printf(\"%x\\n\", uaddr()) }" > /dev/null
printf '%s\n' "$GDB" "$GDB" > want.stmt
check ".statement(\"work@proc_prog.c:$LINE\"): gdb's info line address, once per call" same address want.stmt stmt.out

# .mark("*"): readelf -n's provider and name ($$provider, $$name), the arguments the program
# passed (i and work(i), which it printed).
readelf -n proc_prog | sed -n 's/^ *Provider: \(.*\)/\1/p; s/^ *Name: \(.*\)/\1/p' | paste -d' ' - - > marks.want
"$UKSTAP" -o mark.out -c './proc_prog 3' \
  -e 'probe process("./proc_prog").mark("*") { printf("%s %s %d=%d\n", $$provider, $$name, $arg1, $arg2) }' > prog.out
sed -n 's/^work(\([0-9]*\))=/\1=/p' prog.out | sed "s/^/$(cat marks.want) /" > want.mark
check ".mark(\"*\"): readelf -n's provider and name, \$arg1/\$arg2 = the program's values" same marks want.mark mark.out

# ---------------------------------------------------------------- process.syscall[.return]
# Syscall numbers of the target from its execve on, against strace -n's for the same program.
"$UKSTAP" -o sys.out -c './proc_prog 2' \
  -e 'probe process.syscall { if (pid() == target()) printf("%d\n", $syscall) }' > /dev/null
sed -n '/^59$/,$p' sys.out > sys.got
strace -n -o strace.out ./proc_prog 2 > /dev/null
# strace -n: "[ NR] name(args) = ret" (its closing "[231] +++ exited with 0 +++" is no call)
sed -n 's/^\[ *\([0-9]*\)\] [a-z_0-9]*(.*/\1/p' strace.out > sys.want
check "process.syscall: \$syscall sequence = strace -n's" same 'syscall numbers' sys.want sys.got
"$UKSTAP" -o sysret.out -c './proc_prog 2' \
  -e 'probe process.syscall.return { if ($syscall == 110) printf("%d\n", $return) }' > prog.out
sed -n 's/^ppid=//p' prog.out > want.sysret
check "process.syscall.return: getppid's \$return = the program's getppid()" same '$return' want.sysret sysret.out
"$UKSTAP" -o sysarg.out -c './proc_prog 1' \
  -e 'probe process.syscall { if ($syscall == 1) printf("%d %d\n", $arg1, $arg3) }' > prog.out
printf '1 %d\n' "$(wc -c < prog.out)" > want.sysarg
check "process.syscall: write's \$arg1 (fd 1) and \$arg3 (the bytes the program wrote)" same args want.sysarg sysarg.out

# ---------------------------------------------------------------- process.begin/end vs $!
wait_line() { for _ in $(seq 600); do grep -qx "$1" "$2" 2> /dev/null && return 0; sleep 0.1; done; return 1; }
"$UKSTAP" -o be.out -e "probe process(\"$PROG\").begin { printf(\"begin %d\\n\", pid()) }
probe process(\"$PROG\").end { printf(\"end %d\\n\", pid()) }
global said; probe timer.ms(100) { if (!said) { said = 1; println(\"ready\") } }" &
UK=$!
wait_line ready be.out
./proc_prog 1 > /dev/null &
P=$!
wait $P
wait_line "end $P" be.out
kill -INT $UK; wait $UK
printf 'ready\nbegin %d\nend %d\n' $P $P > want.be
check "process(\"PATH\").begin/end: once each, with bash's \$! as pid()" same lines want.be be.out

# A process that exists before ukstap starts: its begin (with -x, only it and its children).
./proc_prog 1 stay > /dev/null &
P=$!
t "process.begin with -x: the existing process, pid = bash's \$!" 0 "begin $P"$'\n' '' -- \
  timeout 60 "$UKSTAP" -x $P -e 'probe process.begin { printf("begin %d\n", pid()); exit() }'
kill $P; wait $P 2> /dev/null

# process.thread.begin/end: the new thread's tid (the program prints gettid()), the main thread
# is no "thread".
"$UKSTAP" -o th.out -c './proc_prog 0 thread' \
  -e 'probe process.thread.begin { printf("begin %d\n", tid()) } probe process.thread.end { printf("end %d\n", tid()) }' > prog.out
TID=$(sed -n 's/^tid=//p' prog.out)
printf 'begin %s\nend %s\n' "$TID" "$TID" > want.th
check "process.thread.begin/end: once each, tid() = the thread's gettid()" same lines want.th th.out

# ---------------------------------------------------------------- errors: one line each
t "a missing program: one error naming it" 1 '' '~^semantic error: cannot find executable .no-such-prog-xyz' -- \
  "$UKSTAP" -p2 -e 'probe process("no-such-prog-xyz").function("main") {}'
t "a glob matching no file: one error naming it" 1 '' "~^semantic error: no file matches '/no-such-dir\\*/libc.so.6'" -- \
  "$UKSTAP" -p2 -e 'probe process("/no-such-dir*/libc.so.6").function("malloc") {}'
t "a function that is not there: one error naming it and the file" 1 '' "~^semantic error: no function matches 'nosuch' in $PROG" -- \
  "$UKSTAP" -p2 -e "probe process(\"$PROG\").function(\"nosuch\") {}"
# A 32-bit library (readelf -h: ELF32, as Debian's /lib32/libc.so.6 that /lib*/libc.so.6 matches):
# the error says why nothing there is this machine's code.
printf '.globl f\n.type f,@function\nf: ret\n' | as --32 -o x32.o && ld -m elf_i386 -shared -o x32.so x32.o
check "the 32-bit test library is ELF32" sh -c "readelf -h x32.so | grep -q 'Class: *ELF32'"
t "a pattern matching only 32-bit ELF code: the error says so" 1 '' "~no function matches 'nosuch' in $T_TMP/x32.so \\(32-bit ELF" -- \
  "$UKSTAP" -p2 -e 'probe process("./x32.so").function("nosuch") {}'
t "an optional point that matches nothing is no error" 0 '~^# probes' '' -- \
  "$UKSTAP" -p2 -e 'probe process("/no-such-dir*/libc.so.6").function("malloc")?, begin {}'

t_done
