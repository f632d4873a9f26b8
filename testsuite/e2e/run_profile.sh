#!/bin/bash
# ukstap --profile (issue 7): timer samples to folded stacks, an SVG flame graph and pprof.
#
# Truth: progs/split_prog.c spends 75% of its loop in spin_a and 25% in spin_b (the same loop
# body, 3:1 iterations). Each output must show that split within a few percent, read back by
# independent readers: the folded text by awk, the SVG by Python's XML parser and by headless
# Chromium (it renders; a real click event zooms), pprof by `go tool pprof`. Root only; under
# CI=true not being root is a failure, never a skip.
# e2e-schedule: first (run-e2e.sh): one of the longest scripts. Not alone: split_prog runs for
# seconds of its own CPU time and cpu_clock samples that time, so its shares and sample counts are
# its own on a busy machine too; the system-wide check filters by its name (it ran alone before).
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_CACHE"
S="$T_TMP/split"
t_build split_prog gcc -O2 -fomit-frame-pointer -o "$S" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/split_prog.c" ||
  { t_done; exit; }

# share NAME FILE: spin_a's share (%) of the samples under spin_a or spin_b in folded FILE
share() {
  awk -v f="$1" '{n = $NF; if ($0 ~ /;spin_a(;|$)/) a += n; else if ($0 ~ /;spin_b(;|$)/) b += n}
                 END {if (a + b < 100) {print "too few samples: " a + b; exit 1}; printf "%.1f\n", 100 * a / (a + b)}' "$2"
}
export -f share
NL=$'\n'

# --- folded stacks (the default; also -o *.folded) -------------------------------------------
t "folded: run" 0 '' '' -- "$UKSTAP" --profile=999 -o "$T_TMP/p.folded" -c "$S 1"
t "folded: 'comm;root;...;leaf N' lines, main's stacks through _start" 0 '' '' -- bash -c "
  grep -q '^split;_start;__libc_start_main;__libc_start_call_main;main;work;spin_a;burn [0-9]*\$' '$T_TMP/p.folded' &&
  ! grep -qv '^[^;]*;.* [0-9][0-9]*\$' '$T_TMP/p.folded' || { cat '$T_TMP/p.folded'; exit 1; }"
t "folded: spin_a has 75% +- 5 of the samples" 0 '' '' -- bash -c "
  v=\$(share x '$T_TMP/p.folded') && awk -v v=\"\$v\" 'BEGIN {exit !(v >= 70 && v <= 80)}' || { echo \"spin_a: \$v%\"; exit 1; }"
t "folded to standard output without -o" 0 '' '' -- bash -c "
  '$UKSTAP' --profile=199 -c '$S 0.3' | grep -q ';work;spin_a;burn [0-9]*\$'"

# A process's first milliseconds: the VMA mirror lags an exec until ukstap drains the side-band,
# and a timer sample's walk can ask the kernel for one mapping only (docs/DESIGN.md "Timer
# samples and the lagging mirror"); before the wake-up on a mirror miss, every sample of a
# program's first ~20 ms stopped after two frames. Three 60 ms runs: >= 85% of all samples
# must unwind to _start (in the folded output, the frame after the process name).
t "short-lived process: >= 85% of its samples unwind to _start" 0 '' '' -- bash -c "
  for i in 1 2 3; do '$UKSTAP' --profile=999 -c '$S 0.06' || exit 1; done |
  awk '{n += \$NF; if (\$0 ~ /^split;_start;/) ok += \$NF}
       END {if (n >= 60 && ok >= 0.85 * n) exit 0; printf \"%d of %d samples reach _start\\n\", ok, n; exit 1}'"

# -c follows the command's children, as perf record does: a shell loop running split 40 times,
# 4 ms each. A child lives for a few samples only, shorter than the mirror's lag: its stacks
# come from what the kernel said at its exec (the program's and ld.so's text) and at earlier
# samples (docs/DESIGN.md "Short-lived processes"). >= 95% of the children's samples must
# unwind to the outermost frame: _start, or ld.so's _dl_start_user while it loads the program.
printf 'for i in $(seq 40); do "%s" 0.004; done\n' "$S" > "$T_TMP/loop.sh"
t "children of -c: sampled, >= 95% of their samples unwind to the outermost frame" 0 '' '' -- bash -c "
  '$UKSTAP' --profile=999 -o '$T_TMP/kids.folded' -c 'sh $T_TMP/loop.sh' &&
  awk '{n = \$NF} /^split;/ {k += n; if (\$0 ~ /^split;(_start|_dl_start_user)[; ]/) ok += n}
       END {if (k >= 60 && ok >= 0.95 * k) exit 0; printf \"%d of %d child samples complete\\n\", ok, k; exit 1}' '$T_TMP/kids.folded'"
t "children of -c: every return address follows a call (objdump)" 0 '' '' -- bash -c "
  '$UKSTAP' -o '$T_TMP/kids.out' -c 'sh $T_TMP/loop.sh' \\
    -e 'probe perf.sw.cpu_clock.hz(999) { if (ppid() == target()) { log(pn()); print_ubacktrace() } }' &&
  python3 '$UKSTAP_TOP_SRCDIR/testsuite/e2e/ustack_check.py' callsites '$T_TMP/kids.out' 100"

# --- SVG -------------------------------------------------------------------------------------
t "svg: run (format from the extension)" 0 '' '' -- "$UKSTAP" --profile=999 -o "$T_TMP/p.svg" -c "$S 1"
t "svg: well-formed XML; spin_a/spin_b frame widths 3:1 (+- 5%), tooltips with counts" 0 '' '' -- python3 -c "
import re, sys, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
root = ET.parse('$T_TMP/p.svg').getroot()
w = {'spin_a': 0.0, 'spin_b': 0.0}
for g in root.iter(ns + 'g'):
    if g.get('class') != 'f': continue  # the header
    title = g.find(ns + 'title').text
    m = re.match(r'(.+) \((\d+) samples?, ([0-9.]+)%\)', title)  # a name may have spaces
    if not m: sys.exit('bad tooltip: ' + title)
    if m.group(1) in w:
        w[m.group(1)] += float(g.find(ns + 'rect').get('width'))
a = 100 * w['spin_a'] / (w['spin_a'] + w['spin_b'])
sys.exit(0 if 70 <= a <= 80 else 'spin_a width share %.1f%%' % a)"
t "svg: headless Chromium renders it (screenshot in the log)" 0 '' '' -- bash -c "
  timeout 60 chromium --headless --no-sandbox --disable-gpu --window-size=1200,400 \
    --screenshot='$T_TMP/flamegraph.png' 'file://$T_TMP/p.svg' > /dev/null 2>&1
  [ -s '$T_TMP/flamegraph.png' ] && cp '$T_TMP/flamegraph.png' /tmp/ukstap-flamegraph-test.png"
echo "  (flame graph screenshot: /tmp/ukstap-flamegraph-test.png)"
# A click on spin_a (a MouseEvent dispatched by the page itself for #zoom=NAME, through the
# same click handler a user's click reaches): spin_a then spans the whole width, spin_b is
# hidden, and their common ancestor work still spans the width.
t "svg: a click on spin_a zooms: it fills the width, spin_b is hidden (Chromium DOM)" 0 '' '' -- bash -c "
  timeout 60 chromium --headless --no-sandbox --disable-gpu --dump-dom 'file://$T_TMP/p.svg#zoom=spin_a' 2>/dev/null > '$T_TMP/dom.xml'
  python3 -c \"
import re, sys
d = open('$T_TMP/dom.xml').read()
frames = re.findall(r'<g class=\\\"f\\\"([^>]*)><title>(\\\\S+) \\\\((\\\\d+) [^<]*</title><rect[^>]*width=\\\"([0-9.]+)\\\"', d)
if not frames: sys.exit('no frames in the DOM')
best = {}
for attrs, name, n, width in frames:
    if name not in best or int(n) > int(best[name][1]): best[name] = (attrs, n, float(width))
a, b, w = best['spin_a'], best['spin_b'], best['work']
ok = abs(a[2] - 1180) < 0.5 and 'display: none' in b[0] and abs(w[2] - 1180) < 0.5 and 'display: none' not in a[0]
sys.exit(0 if ok else 'after the click: spin_a %s, spin_b %s, work %s' % (a, b, w))\""

# --- pprof ------------------------------------------------------------------------------------
t "pprof: run (.pb.gz)" 0 '' '' -- "$UKSTAP" --profile=999 -o "$T_TMP/p.pb.gz" -c "$S 1"
export HOME="$T_TMP/gohome" GOCACHE="$T_TMP/gohome/cache" GOPATH="$T_TMP/gohome/go"
# The root frame is the process name of each sample: split, or for a sample taken between the
# -c child's fork and its exec, ukstap (its name before the exec, as perf names it too).
t "pprof: go tool pprof reads it; spin_a 75% +- 5 of spin_a+spin_b, >= 99% of samples under split" 0 '' '' -- bash -c "
  go tool pprof -sample_index=samples -top -cum '$T_TMP/p.pb.gz' 2>&1 > '$T_TMP/top.txt'
  awk 'NF == 6 && \$NF == \"spin_a\" {a = \$4} NF == 6 && \$NF == \"spin_b\" {b = \$4} NF == 6 && \$NF == \"split\" {s = \$5 + 0}
       END {if (a + b == 0) exit 1; v = 100 * a / (a + b); if (v < 70 || v > 80 || s < 99) {print v, s; exit 1}}' '$T_TMP/top.txt' ||
  { cat '$T_TMP/top.txt'; exit 1; }"
t "pprof: --format=pprof wins over the extension; the file is gzip" 0 '' '' -- bash -c "
  '$UKSTAP' --profile=99 --format=pprof -o '$T_TMP/p.out' -c '$S 0.3' && [ \"\$(head -c2 '$T_TMP/p.out' | od -An -tx1 | tr -d ' ')\" = 1f8b ]"

# --- system-wide, bad input -------------------------------------------------------------------
# Whatever else runs on the machine is sampled too: code whose CFI has a rule the unwinder
# cannot evaluate (ld.so's lazy-binding trampolines, hand-written crypto assembly) may cut a few
# of those stacks short, and the exit warning says so. That one line is the machine's, not the
# test's: any other stderr fails.
# The program runs for up to 60 s and is killed once ukstap is done: on a loaded machine ukstap's
# start-up may take longer than a short run. The warnings accepted come from whatever else the
# machine runs (stacks of other programs cut short; the unwind-table pool filled by their big
# binaries, e.g. a compiler running beside the test; side-band records of their mappings lost
# when the machine makes them faster than a starved ukstap reads: 5,419 in 1 s under load 13).
# ukstap runs under a name of its own (a symlink: comm is the name it was run by), so that another
# ukstap on the machine, sampled like any process, is not taken for this one.
# Both checks start sampling once the program runs split (its exec done: /proc/PID/exe), not
# after a fixed time: on a loaded machine the background job may not have exec'd when a cached
# ukstap starts, and its samples would be the shell's (named as it, or not at all).
ln -s "$UKSTAP" "$T_TMP/uk-self"
# The program is stopped (SIGSTOP) from its exec until ukstap -v says the sampling is on ("Pass 5:
# started"): its mappings are read from /proc at the start, as for any process already running,
# and it does not spin through ukstap's start-up (seconds of CPU time on a loaded machine).
cat > "$T_TMP/exec_wait.sh" <<'EOS'
exec_wait() {  # exec_wait PID PROGRAM: until PID runs PROGRAM (60 s at most), then stops it
  local i
  for i in $(seq 600); do [ "$(readlink "/proc/$1/exe")" = "$2" ] && kill -STOP "$1" && return 0; sleep 0.1; done
  echo "pid $1 never ran $2" >&2; return 1
}
# cont_when_started PID FIFO LOG: once ukstap -v (stderr into FIFO) has started, continue PID;
# ukstap's stderr goes on into LOG without -v's own lines (the passes, the exit's counts, the
# files of other processes without an unwind table: loader/unwind_tables.cpp says those under
# -v only); returns when ukstap has closed its stderr
verbose_only='^(Pass [0-9]: |User stacks: |VMA tracker: |Kernel stacks: |WARNING: no unwind table for )'
cont_when_started() {
  local l
  exec 8< "$2"
  while IFS= read -r -u 8 l; do
    [[ $l == "Pass 5: started"* ]] && break
    printf '%s\n' "$l"
  done > "$3.v"
  kill -CONT "$1"
  cat <&8 >> "$3.v"
  grep -Ev "$verbose_only" "$3.v" > "$3"
}
EOS
t "system-wide -T 1: other processes sampled, ukstap itself not" 0 '' '' -- bash -c "
  . '$T_TMP/exec_wait.sh'
  '$S' 60 & sp=\$!
  exec_wait \$sp '$S' || { kill \$sp; exit 1; }
  mkfifo '$T_TMP/all.fifo'
  '$T_TMP/uk-self' -v --profile=199 -T 1 -o '$T_TMP/all.folded' 2> '$T_TMP/all.fifo' & up=\$!
  cont_when_started \$sp '$T_TMP/all.fifo' '$T_TMP/all.err'
  wait \$up; rc=\$?; kill \$sp; wait \$sp 2>/dev/null
  [ \$rc = 0 ] && grep -q '^split;' '$T_TMP/all.folded' && ! grep -q '^uk-self;' '$T_TMP/all.folded' &&
  ! grep -Ev '^WARNING: ([0-9]* of [0-9]* user stacks were cut short|Number of lost VMA side-band records): ' '$T_TMP/all.err' >&2"
# -x PID: without -v (the default exit report: it warns of stacks cut short, -v's report does
# not), so ukstap's attach is read from /proc: a perf bpf_link in its fdinfo. The run ends once
# the program has run 0.5 s of its own CPU time (utime, /proc/PID/stat field 14, in 1/100 s),
# not after a fixed time: on a loaded machine its share of a time window varies.
cat >> "$T_TMP/exec_wait.sh" <<'EOS'
attached() {  # attached PID: until PID holds a perf bpf_link (60 s at most, or while it lives)
  local i
  for i in $(seq 600); do
    kill -0 "$1" 2>/dev/null || return 1
    grep -qs '^link_type:[[:space:]]*perf' /proc/"$1"/fdinfo/* && return 0; sleep 0.1
  done; return 1
}
utime() { awk '{print $14}' "/proc/$1/stat"; }
ran() {  # ran PID TICKS: until PID's utime has grown by TICKS (120 s at most)
  local i u0; u0=$(utime "$1") || return 1
  for i in $(seq 1200); do [ $(($(utime "$1") - u0)) -ge "$2" ] && return 0; sleep 0.1; done; return 1
}
EOS
t "-x PID: that process's stacks only, none cut short" 0 '' '' -- bash -c "
  . '$T_TMP/exec_wait.sh'
  '$S' 60 & pid=\$!
  exec_wait \$pid '$S' || { kill \$pid; exit 1; }
  '$UKSTAP' --profile=199 -x \$pid -o '$T_TMP/x.folded' 2> '$T_TMP/x.err' & up=\$!
  attached \$up && kill -CONT \$pid && ran \$pid 50; kill -INT \$up
  wait \$up; rc=\$?; kill \$pid 2>/dev/null; wait \$pid 2>/dev/null
  cat '$T_TMP/x.err' >&2
  [ \$rc = 0 ] && grep -q '^split;.*;work;spin_a;burn [0-9]*\$' '$T_TMP/x.folded' && ! grep -qv '^split;' '$T_TMP/x.folded'"
t "--format=png is refused" 1 '' "ukstap: Invalid --format 'png' (folded, svg or pprof).${NL}Try 'ukstap --help' for more information.${NL}" -- "$UKSTAP" --profile --format=png -c true
t "--profile with a script is refused" 1 '' "ukstap: --profile runs its own sampling script: give no script (-e or a file).${NL}Try 'ukstap --help' for more information.${NL}" -- "$UKSTAP" --profile -e 'probe begin {}'
t "an unwritable -o names the file" 1 '' "ukstap: cannot open output file '/nonexistent/p.svg': No such file or directory${NL}" -- \
  "$UKSTAP" --profile=99 -o /nonexistent/p.svg -c true
t_done
