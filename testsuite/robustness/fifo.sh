#!/bin/bash
# FIFOs where ukstap reads a file (vma-tracker/traced_file.h): ukstap never blocks on them.
#  - `-d FIFO`: one error line, exit 1 (it hung in pass 5, ignoring SIGINT/SIGTERM);
#  - a FIFO put at the path of a library a traced program dlopen'ed (renamed away at once,
#    before ukstap reads the new mapping's file), then a probe hit in that library: the stack
#    still prints and SIGINT ends the run at once (ukstap hung in open() of the FIFO, its probes
#    attached, deaf to signals).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"
PROGS="$UKSTAP_TOP_SRCDIR/testsuite/robustness/progs"
wait_line() { for _ in $(seq "${3:-600}"); do grep -Eq -- "$2" "$1" 2> /dev/null && return 0; sleep 0.1; done; return 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

mkfifo "$T_TMP/fifo"
HINT="Try 'ukstap --help' for more information."
t "-d FIFO: one error line, exit 1" 1 '' \
  "ukstap: -d $T_TMP/fifo: a FIFO, not a regular file."$'\n'"$HINT"$'\n' -- \
  timeout -s KILL 60 "$UKSTAP" -d "$T_TMP/fifo" -e 'probe begin { print_ubacktrace(); exit() }'
ln -s "$T_TMP/fifo" "$T_TMP/fifo-link"
t "-d symlink to a FIFO: one error line, exit 1" 1 '' "~^ukstap: -d $T_TMP/fifo-link: a FIFO, not a regular file" -- \
  timeout -s KILL 60 "$UKSTAP" -d "$T_TMP/fifo-link" -e 'probe begin { print_ubacktrace(); exit() }'
ln -s /bin/true "$T_TMP/true-link"
t "-d symlink to a program: accepted" 0 $'ok\n' '' -- \
  timeout -s KILL 60 "$UKSTAP" -d "$T_TMP/true-link" -e 'probe begin { println("ok"); exit() }'

P="$T_TMP/dlopen_wait" L="$T_TMP/libfifo.so"
t_build "the test programs" gcc -O1 -g -fno-omit-frame-pointer -o "$P" "$PROGS/dlopen_wait.c" -ldl &&
  t_build "the test programs" gcc -O1 -g -fno-omit-frame-pointer -fPIC -shared -o "$L" "$PROGS/dlopen_lib.c" || { t_done; exit; }
# run_then_sigint NAME ARGS: runs the getppid stack script on `-c ARGS` into $T_TMP/NAME.out,
# waits for the program to call its library and for the stack to print, sends SIGINT and sets
# $ms to the time ukstap took to end (a regression: killed after 10 s).
run_then_sigint() {
  local name=$1 pid t0; shift
  "$UKSTAP" -o "$T_TMP/$name.out" -c "$*" \
    -e 'probe syscall.getppid { if (pid() == target()) { println("hit"); print_ubacktrace(); println("end") } }' \
    > "$T_TMP/$name.prog" 2> "$T_TMP/$name.err" &
  pid=$!
  wait_line "$T_TMP/$name.prog" '^called$'
  wait_line "$T_TMP/$name.out" '^end$' 200  # up to 20 s (before the fix: never, ukstap hung in open())
  t0=$(now_ms); kill -INT $pid
  for _ in $(seq 100); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
  ms=$(( $(now_ms) - t0 ))
  if kill -0 $pid 2> /dev/null; then kill -KILL $pid; fi
  wait $pid
  # A regression leaves the target running: not in the suite's way.
  for f in /proc/[0-9]*/cmdline; do
    { tr '\0' ' ' < "$f"; } 2> /dev/null | grep -q "^$P " && { f=${f#/proc/}; kill -KILL "${f%/cmdline}"; }
  done 2> /dev/null
}

run_then_sigint swap "$P" "$L"
t "library swapped for a FIFO: SIGINT ends the run (took $ms ms; a hang is killed at 10 s)" 0 '' '' -- test $ms -lt 10000
t "library swapped for a FIFO: the stack printed, through the program's main" 0 '~ : main\+0x' '' -- \
  sed -n '/^hit$/,/^end$/p' "$T_TMP/swap.out"
t "library swapped for a FIFO: its frame printed as an address in the library" 0 '~libfifo\.so' '' -- \
  sed -n '/^hit$/,/^end$/p' "$T_TMP/swap.out"
# A FIFO where libdwfl looks for a stripped library's separate debug file (DIR/NAME.debug, next
# to the library): the library keeps its path, the FIFO is what the debug-file search meets.
S="$T_TMP/dbg/libfifo.so"
mkdir "$T_TMP/dbg" && cp "$L.away" "$S" && strip --strip-all "$S" && mkfifo "$S.debug"
run_then_sigint dbg "$P" "$S" keep
t "FIFO as a stripped library's debug file: SIGINT ends the run (took $ms ms; a hang is killed at 10 s)" 0 '' '' -- test $ms -lt 10000
t "FIFO as a stripped library's debug file: the library frame has its .dynsym name" 0 '~ : fifo_lib_call\+0x' '' -- \
  sed -n '/^hit$/,/^end$/p' "$T_TMP/dbg.out"
t_done
