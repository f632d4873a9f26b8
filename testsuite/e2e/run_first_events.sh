#!/bin/bash
# A program's first events unwind fully however it is started (issue 15): with -c in shell
# syntax nothing is preloaded, and the first events come before ukstap has loaded the tables of
# the program's files; after a dlopen the same holds for the new library. Those walks stop with
# "unwind table not loaded yet" in the kernel and are finished in user space over a copy of the
# top of the stack (common/stp_usnap.h, loader/deferred_unwind.h).
#
# Truth: perf record --call-graph dwarf on the same program (run directly: through dash's fork
# perf itself unwinds one frame per stack). first_events_check.py counts complete stacks (ending
# at _start / _dl_start_user, no inexact frame) for both and compares, frame for frame, the
# functions in the program's own binary (or libffi) of the getppid events.
# Root only; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

CHECK="python3 $UKSTAP_TOP_SRCDIR/testsuite/e2e/first_events_check.py"
command -v perf > /dev/null || { echo "FAIL: perf is needed (the truth)"; T_FAILED=1; t_done; exit; }

cat > "$T_TMP/x.pl" <<'PL'
sub f3 { for (1..$_[0]) { my $p = getppid(); } }
sub f2 { f3(@_) }
sub f1 { f2(@_) }
f1(200);
PL
# ctypes dlopens libuuid, and the first call into it follows at once (getrandom, NR 318)
cat > "$T_TMP/ct.py" <<'PY'
import ctypes
uuid = ctypes.CDLL("libuuid.so.1")
buf = ctypes.create_string_buffer(16)
for _ in range(50): uuid.uuid_generate_random(buf)
PY

# ukstap_first COMM N FILTER CMD: the first N syscalls (FILTER: extra condition) of COMM, the -c
# command or its child (other helpers' processes may share the name)
ukstap_first() {
  local comm=$1 n=$2 filter=$3 cmd=$4
  "$UKSTAP" -v -o "$T_TMP/$comm.uk" -c "$cmd" -e "global n
probe kernel.trace(\"raw_syscalls:sys_enter\") {
  if ((pid() == target() || ppid() == target()) && execname() == \"$comm\" $filter && n++ < $n) { printf(\"== %d\n\", \$id); print_ubacktrace() }
}" 2> "$T_TMP/$comm.err"
}
# perf_first COMM FILTER_NR CMD...: perf's stacks of the same events (a 16 MiB buffer: with
# the default one perf loses most of a burst of dwarf samples, quietly under -q)
perf_first() {
  local comm=$1 nr=$2; shift 2
  perf record -q -m 16M -e raw_syscalls:sys_enter --call-graph dwarf -o "$T_TMP/$comm.data" -- "$@" \
    > /dev/null 2> "$T_TMP/$comm.perf.err" &&
  perf script -i "$T_TMP/$comm.data" --comms "$comm" -F comm,event,trace,ip,sym,dso 2> /dev/null |
    awk -v nr="$nr" '/^[^ \t]/ { keep = (nr == "" || $0 ~ ("NR " nr " ")) } keep' > "$T_TMP/$comm.perf"
}

# --- perl through the shell: its first 300 syscalls, from ld.so's first brk on --------------
t "perl via sh -c: run" 0 '' '' -- ukstap_first perl 300 '' "perl $T_TMP/x.pl > /dev/null"
t "perl: perf's run" 0 '' '' -- perf_first perl '' perl "$T_TMP/x.pl"
t "perl via sh -c: every stack complete, as many as perf; perl's frames = perf's" 0 '~^events 300' '' -- \
  $CHECK "$T_TMP/perl.uk" "$T_TMP/perl.perf" /usr/bin/perl
t "perl: the walks that waited for a table were finished in user space" 0 \
  '~walks waited for an unwind table: [1-9][0-9]* finished .* 0 without one' '' -- cat "$T_TMP/perl.err"

# --- python3 dlopens libuuid through ctypes and calls it at once: its table cannot be there.
# Debian's python3 run directly (its own files are preloaded: only the dlopen is tested), not a
# pyenv build on PATH (perf unwinds none of the latter's stacks here: one frame, then [stack]).
t "python3 ctypes dlopen: run" 0 '' '' -- \
  ukstap_first python3 52 '&& $id == 318' "/usr/bin/python3 $T_TMP/ct.py"
t "python3 ctypes dlopen: perf's run" 0 '' '' -- perf_first python3 318 /usr/bin/python3 "$T_TMP/ct.py"
t "python3 ctypes dlopen: every stack complete; libuuid's frames = perf's" 0 '~^events 52' '' -- \
  $CHECK "$T_TMP/python3.uk" "$T_TMP/python3.perf" libuuid 318
t "python3 ctypes dlopen: libffi's frames = perf's" 0 '~^events 52' '' -- \
  $CHECK "$T_TMP/python3.uk" "$T_TMP/python3.perf" libffi 318
t_done
