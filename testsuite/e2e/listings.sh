#!/bin/bash
# -l and -L listings (issue 17, "listings that are true").
#
# Truths: the kernel's tracefs (each syscall tracepoint's format file, available_events), the
# tapsets' own `probe NAME =` definitions, and SystemTap's documented -l/-L behaviour
# (docs/STAP-FORMATS.md section 6: -L lists an alias's locals, then the $variables common to all
# the points it expands to). Every listed point and $variable must also be accepted by the
# translator. Root (tracefs); under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

TRACEFS=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
  [ -d "$d/events/syscalls" ] && { TRACEFS=$d; break; }
done
[ -n "$TRACEFS" ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && TRACEFS=${TRACEFS:-/sys/kernel/tracing}

# --- -L of syscall aliases: their locals, then the tracepoint's fields as $variables -----------
# The fields of sys_enter_openat's format file, in stap's type spelling: integers are long, a
# pointer keeps its C type with `const` after what it qualifies (`const char *` -> `char const*`).
want_openat='syscall.openat name:string dfd:long dfd_str:string filename:string filename_unquoted:string flags:long flags_str:string mode:long argstr:string'
want_openat+=$(python3 "$UKSTAP_TOP_SRCDIR/testsuite/e2e/tracepoint_fields.py" "$TRACEFS" sys_enter_openat)
t "-L syscall.openat: the alias's locals, then sys_enter_openat's fields" 0 "$want_openat"$'\n' '' \
  -- "$UKSTAP" -L syscall.openat

# Every syscall alias, entry and return: its $variables are the fields common to the format files
# of the tracepoints it stands for (the -p2 chain names them), by name and type.
"$UKSTAP" -L 'syscall.*' 'syscall.*.return' > "$T_TMP/L.sys" 2> "$T_TMP/L.sys.err"
"$UKSTAP" -p2 -e 'probe syscall.*, syscall.*.return {}' > "$T_TMP/p2.sys" 2>> "$T_TMP/L.sys.err"
t "-L 'syscall.*': every alias's \$variables are its tracepoints' common fields" 0 '' '' -- python3 - \
  "$TRACEFS" "$T_TMP/L.sys" "$T_TMP/p2.sys" "$T_TMP/L.sys.err" <<'PY'
import os, re, sys
tracefs, listing, chains, err = sys.argv[1:]
if open(err).read(): sys.exit('stderr: ' + open(err).read())
sys.path.insert(0, os.environ['UKSTAP_TOP_SRCDIR'] + '/testsuite/e2e')
from tracepoint_fields import fields as tp_fields
def fields(event): return tp_fields(tracefs, event)
events = {}
for line in open(chains):
    m = re.match(r'kernel\.trace\("syscalls:(\w+)"\) /\* <- .* <- (syscall\.[\w.]+) <- syscall\.\*', line)
    if m: events.setdefault(m.group(2), []).append(m.group(1))
bad, n = [], 0
for line in open(listing):
    words = line.split()
    want = None
    for e in events.get(words[0], []):
        f = fields(e)
        want = f if want is None else [v for v in want if v in f]
    got = [w for w in words[1:] if w.startswith('$')]
    n += 1
    if want is None or got != want: bad.append('%s: got %s, want %s' % (words[0], got, want))
if n < 600 or bad: sys.exit('%d lines; %d differ, first: %s' % (n, len(bad), bad[:3]))
PY

# Each $variable listed compiles (-p4) where its probe is written, in one script.
script=$(for p in syscall.openat syscall.getdents syscall.execve syscall.read syscall.openat.return \
             nd_syscall.openat; do "$UKSTAP" -L "$p"; done |
  awk '{ a = ""; f = ""
         for (i = 2; i <= NF; i++) if ($i ~ /^\$/) { split($i, v, ":"); a = a ", " v[1]; f = f " %d" }
         if (a != "") print "probe " $1 " { if (pid() < 0) printf(\"" f "\\n\"" a ") }" }')
t "the listed \$variables compile at -p4 ($(grep -c . <<< "$script") probes)" 0 '' '' \
  -- bash -c "[ \$(grep -c . <<< '$script') = 6 ] && '$UKSTAP' -p4 -e '$script' > /dev/null"

# --- -l '*' and -l '**': every family (stapprobes(3stap): `*` matches within one component, `**`
# several sequential components) ----------------------------------------------------------------
# `*`: the one-component built-ins stap has (begin, end, error, never) and the tapsets' aliases
# whose name is one component (their `probe NAME =` lines).
{ printf '%s\n' begin end error never
  grep -rhoE '^probe +[A-Za-z_][A-Za-z0-9_]* *\+?=' "$UKSTAP_TOP_SRCDIR/tapsets" | sed -E 's/^probe +//; s/ *\+?=$//'
} | LC_ALL=C sort -u > "$T_TMP/want.star"
t "-l '*': begin, end, error, never and the one-component aliases" 0 "$(cat "$T_TMP/want.star")"$'\n' '' \
  -- "$UKSTAP" -l '*'

"$UKSTAP" -l '**' > "$T_TMP/all" 2> "$T_TMP/all.err"
rc=$?
t "-l '**' succeeds quietly, sorted and unique" 0 '' '' -- bash -c "
  cat '$T_TMP/all.err' >&2; [ $rc = 0 ] && LC_ALL=C sort -u '$T_TMP/all' | cmp -s - '$T_TMP/all'"
# Tracepoints: exactly tracefs's available_events.
sed 's/.*/kernel.trace("&")/' "$TRACEFS/available_events" | LC_ALL=C sort -u > "$T_TMP/want.tp"
t "-l '**' lists every tracepoint of available_events ($(wc -l < "$T_TMP/want.tp")), nothing else as kernel.*" 0 '' '' \
  -- bash -c "grep '^kernel\.' '$T_TMP/all' | cmp - '$T_TMP/want.tp'"
# The families without a parameter, one point each that stapprobes documents.
t "-l '**' has begin, timer.profile, perf.sw.cpu_clock, process.begin, input.line, procfs.read" 0 '' '' \
  -- bash -c "for p in begin end error never timer.profile perf.sw.cpu_clock perf.hw.cpu_cycles \
                       process.begin process.syscall input.line procfs.read syscall.openat \
                       nd_syscall.openat scheduler.cpu_off ioblock.request; do
                grep -qxF \"\$p\" '$T_TMP/all' || { echo \"missing \$p\"; exit 1; }; done"
# An alias this machine cannot resolve (its program is missing: stap.pass0 where SystemTap's stap
# is not installed) is left out of a wildcard listing; the others it matched are still listed.
# Truth: -p2 of the missing one fails, of the other succeeds. (Before: one such alias emptied the
# whole `**` match of aliases, and input.line was missing where stap was not installed.)
mkdir -p "$T_TMP/gone_tapset"
printf '%s\n' 'probe zz_gone.point = process("/nonexistent/zz_gone").mark("m") { }' \
  'probe zz_here.point = begin { }' > "$T_TMP/gone_tapset/gone.stp"
t "-l '**' with an unresolvable alias: the others listed, it not" 0 '' '' -- bash -c "
  ! '$UKSTAP' -I '$T_TMP/gone_tapset' -p2 -e 'probe zz_gone.point {}' > /dev/null 2>&1 &&
  '$UKSTAP' -I '$T_TMP/gone_tapset' -p2 -e 'probe zz_here.point {}' > /dev/null &&
  '$UKSTAP' -I '$T_TMP/gone_tapset' -l '**' > '$T_TMP/all.gone' &&
  grep -qxF zz_here.point '$T_TMP/all.gone' && grep -qxF input.line '$T_TMP/all.gone' &&
  ! grep -q zz_gone '$T_TMP/all.gone' && cmp -s <(grep -v '^zz_' '$T_TMP/all.gone') '$T_TMP/all'"
# Aliases: every `probe NAME =` of the tapsets is listed, unless the name cannot be resolved on
# this kernel (-p2 fails) or stands only for `never` (syscall.send on x86_64).
t "-l '**' lists every tapset alias this kernel can serve" 0 '' '' -- python3 - "$UKSTAP" \
  "$UKSTAP_TOP_SRCDIR/tapsets" "$T_TMP/all" <<'PY'
import glob, re, subprocess, sys
ukstap, tapsets, listing = sys.argv[1:]
names = set()
for f in glob.glob(tapsets + '/**/*.stp', recursive=True):
    for m in re.finditer(r'^probe\s+([A-Za-z_][\w.]*)\s*\+?=', open(f).read(), re.M):
        names.add(m.group(1))
listed = set(open(listing).read().split())
bad = []
for n in sorted(names - listed):
    p = subprocess.run([ukstap, '-p2', '-e', 'probe %s {}' % n], capture_output=True, text=True)
    points = [l.split()[0] for l in p.stdout.split('# probes\n')[-1].splitlines() if '/* <-' in l]
    if p.returncode == 0 and set(points) != {'never'}: bad.append(n)
if len(names) < 500 or bad: sys.exit('%d aliases; listed by nothing: %s' % (len(names), bad[:10]))
PY
# Listed points are points: a sample (every 20th line, and all that are neither a syscall nor a
# tracepoint) in one -p2 run.
{ echo probe; { awk 'NR % 20 == 0' "$T_TMP/all"; grep -v '^kernel\.trace\|syscall\.' "$T_TMP/all"; } |
  LC_ALL=C sort -u | sed '$!s/$/,/'; echo '{}'; } > "$T_TMP/sample.stp"
t "the listed points pass -p2 ($(($(wc -l < "$T_TMP/sample.stp") - 2)) of them)" 0 '' '' \
  -- bash -c "'$UKSTAP' -p2 '$T_TMP/sample.stp' > /dev/null"

t_done
