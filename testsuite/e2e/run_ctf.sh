#!/bin/bash
# ukstap --ctf=DIR (issue 18): the script's output as a CTF trace that babeltrace2 reads.
#
# One run of progs/ctf_prog.c (25 openat(2) of /dev/null from main -> middle -> leaf_open, each
# closed) writes both the trace and, to -o FILE, the text; the trace is read back by
# babeltrace2 and by its Python bindings (ctf_check.py), never by ukstap. Truths: the text of the
# same run (event by event, frame by frame), strace -c's counts, the program's own pid and
# /proc/self/maps (every callstack address in an executable mapping of it), nm -S (leaf_open's
# frame inside leaf_open), the wall clock around the run (the clock's realtime offset), the CPU
# count (cpu_id). Then: a run killed with SIGKILL (bash's $? says 137) leaves a trace
# babeltrace2 reads; --profile --ctf; DIRs ukstap must refuse, with one line naming DIR.
# Root only; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"
PY=/usr/bin/python3  # Debian's, which has python3-bt2 (a pyenv python on PATH may not)
CHECK="$UKSTAP_TOP_SRCDIR/testsuite/e2e/ctf_check.py"
P="$T_TMP/ctf_prog"
t_build ctf_prog gcc -O2 -g -fno-omit-frame-pointer -o "$P" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/ctf_prog.c" ||
  { t_done; exit; }

# --- one run: the trace and the text of the same events --------------------------------------
# execname(): the -c command's process closes a descriptor of ukstap's before its exec;
# strace -c counts from the exec.
cat > "$T_TMP/s.stp" <<'STP'
probe syscall.openat {
  if (pid() == target() && execname() == "ctf_prog") { printf("open %s %d\n", filename, flags); print_ubacktrace() }
}
probe syscall.close { if (pid() == target() && execname() == "ctf_prog") printf("close %d\n", fd) }
STP
t "run: --ctf=DIR, the text to -o FILE" 0 '' '' -- bash -c "
  date +%s%N > '$T_TMP/t0'
  '$UKSTAP' --ctf='$T_TMP/tr' -o '$T_TMP/text' '$T_TMP/s.stp' -c '$P $T_TMP/facts 25'; rc=\$?
  date +%s%N > '$T_TMP/t1'; exit \$rc"
t "babeltrace2 DIR reads the trace: 58 events" 0 '' '' -- bash -c "
  n=\$(babeltrace2 '$T_TMP/tr' | grep -v -c -E ' (lttng_ust_statedump:|ukstap:callstack_user_frame)') && [ \"\$n\" = 58 ] || { echo \"\$n events\"; exit 1; }"
t "strace -c of the same program" 0 '' '' -- strace -f -c -o "$T_TMP/strace" "$P" "$T_TMP/facts2" 25
t "trace = the run's text, counts = strace -c, pid/clock/cpu/callstacks = the program's facts" 0 $'ok: 58 events\n' '' -- \
  bash -c "$PY '$CHECK' same '$T_TMP/tr' '$T_TMP/text' '$T_TMP/facts' '$P' '$T_TMP/strace' \$(cat '$T_TMP/t0') \$(cat '$T_TMP/t1')"
t "LTTng's names: vpid, vtid, procname, callstack_user in the metadata; cpu_id in packets" 0 '' '' -- bash -c "
  m='$T_TMP/tr/ukstap/metadata'
  for f in _vpid _vtid _procname _callstack_user _cpu_id; do grep -q \"} \$f;\\|} \$f\\[\" \"\$m\" || { echo \"no \$f\"; exit 1; }; done"

# --- the writer runs as root: no plugin from the caller's environment or home -------------------
# sudo -E keeps BABELTRACE_PLUGIN_PATH and HOME: a plugin planted there (here a shared object
# whose constructor creates a marker file, under the names libbabeltrace2 looks for) must not be
# loaded; the ctf plugin comes from babeltrace2's system directory. Truth: the marker file.
E="$T_TMP/evil"
mkdir -p "$E/path" "$E/home/.local/lib/babeltrace2/plugins" "$E/provider"
printf '#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void planted(void) { close(open(MARKER, O_CREAT | O_WRONLY, 0600)); }\n' > "$E/planted.c"
t_build planted gcc -shared -fPIC -DMARKER="\"$E/loaded\"" -o "$E/planted.so" "$E/planted.c" || { t_done; exit; }
for d in "$E/path" "$E/home/.local/lib/babeltrace2/plugins"; do cp "$E/planted.so" "$d/babeltrace-plugin-ctf.so"; done
cp "$E/planted.so" "$E/provider/babeltrace2-python-plugin-provider.so"
t "planted plugins (BABELTRACE_PLUGIN_PATH, ~/.local, provider dir): not loaded, the trace written" 0 '' '' -- bash -c "
  BABELTRACE_PLUGIN_PATH='$E/path' HOME='$E/home' LIBBABELTRACE2_PLUGIN_PROVIDER_DIR='$E/provider' \
    '$UKSTAP' --ctf='$T_TMP/pl' -e 'probe begin { printf(\"p %d\\n\", 1); exit() }' || exit 1
  [ ! -e '$E/loaded' ] || { echo 'a planted plugin was loaded'; exit 1; }
  [ \"\$(babeltrace2 '$T_TMP/pl' | wc -l)\" = 1 ]"

# --- killed with SIGKILL mid-run --------------------------------------------------------------
# The writer process finishes the trace on the socket's EOF: the packets closed so far (on 500 ms
# idle, after 1 s) and the rest ukstap sent. Waits for conditions, never a fixed time.
# (bash reports the job it saw killed on stderr: "Killed")
t "kill -9 mid-run: the trace survives, babeltrace2 reads it" 0 '~^ok' '~Killed' -- bash -c "
  '$UKSTAP' --ctf='$T_TMP/k' -e 'probe timer.ms(5) { printf(\"tick %d\\n\", 1) }' > /dev/null 2>&1 &
  pid=\$!
  for i in \$(seq 600); do
    [ -n \"\$(find '$T_TMP/k' -name 'channel0_*' -size +0 2>/dev/null)\" ] && break; sleep 0.1
  done
  kill -9 \$pid; wait \$pid; rc=\$?
  [ \$rc = 137 ] || { echo \"ukstap ended with \$rc, not by SIGKILL\"; exit 1; }
  for i in \$(seq 300); do [ -s '$T_TMP/k/ukstap/metadata' ] && break; sleep 0.1; done
  babeltrace2 '$T_TMP/k' > /dev/null && $PY '$CHECK' count '$T_TMP/k' 1"
t "a previous ukstap trace in DIR is replaced" 0 '' '' -- bash -c "
  '$UKSTAP' --ctf='$T_TMP/k' -e 'probe begin { printf(\"again %s\\n\", \"x\"); exit() }' &&
  [ \"\$(babeltrace2 '$T_TMP/k' | grep -c 'begin: .* arg0 = \"x\"')\" = 1 ] && [ \"\$(babeltrace2 '$T_TMP/k' | wc -l)\" = 1 ]"

# --- --profile --ctf ---------------------------------------------------------------------------
S="$T_TMP/split"
t_build split_prog gcc -O2 -fno-omit-frame-pointer -o "$S" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/split_prog.c" ||
  { t_done; exit; }
t "--profile --ctf: samples are events with user callstacks through spin_a, spin_b, main" 0 '~^ok' '' -- bash -c "
  '$UKSTAP' --profile=499 --ctf='$T_TMP/p' -c '$S 0.5' && $PY '$CHECK' profile '$T_TMP/p' split spin_a spin_b work main"

# --- a stuck writer (SIGSTOP: as DIR on hung storage) ------------------------------------------
# ukstap fills the socket (50 events a millisecond from a timer probe; a syscall probe is its BPF) until the stopped writer's receive queue
# holds >100 kB (ss -x: the kernel's count), then gets SIGINT. It must end (the 30 s loop is a
# guard against a hang, not the assertion), kill the writer, say so in one line naming DIR, and
# leave none of its BPF programs loaded (the ids from its /proc fdinfo, asked of bpftool after).
prog_ids() { grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u; }
still_loaded() { for id in "$@"; do bpftool prog show id "$id" > /dev/null 2>&1 && echo "$id"; done; true; }
S="$T_TMP/stuck"
t "stopped writer: ukstap ends on SIGINT, the writer named ukstap-ctf is killed" 0 '' '' -- bash -c "
  '$UKSTAP' --ctf='$S' -e 'probe timer.ms(1) { for (i = 0; i < 50; i++) printf(\"fill %d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n\", i) }
    probe syscall.close { if (pid() < 0) printf(\"never\\n\") }' \
    > /dev/null 2> '$S.err' &
  pid=\$!
  for i in \$(seq 600); do
    w=\$(pgrep -P \$pid -x ukstap-ctf) && [ -n \"\$(find '$S' -name 'channel0_*' 2>/dev/null)\" ] && break; sleep 0.1
  done
  [ -n \"\$w\" ] || { echo 'no child process named ukstap-ctf'; kill -9 \$pid; exit 1; }
  $(declare -f prog_ids); prog_ids \$pid > '$S.ids'
  kill -STOP \$w
  for i in \$(seq 600); do
    q=\$(ss -xpn | grep \"pid=\$w,\" | awk '{print \$3}' | sort -n | tail -1); [ \"\${q:-0}\" -gt 100000 ] && break; sleep 0.1
  done
  kill -INT \$pid
  for i in \$(seq 300); do kill -0 \$pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 \$pid 2>/dev/null; then echo 'ukstap still running 30 s after SIGINT'; kill -9 \$pid \$w; kill -CONT \$w; exit 1; fi
  wait \$pid; echo \$? > '$S.rc'
  for i in \$(seq 100); do kill -0 \$w 2>/dev/null || exit 0; sleep 0.1; done
  echo 'the writer is still running'; kill -9 \$w; exit 1"
t "... exit status 1, one line naming DIR: the trace may be incomplete" 0 '' '' -- bash -c "
  [ \"\$(cat '$S.rc')\" = 1 ] && [ \"\$(grep -c \"CTF writer of '$S' .*killed: the trace may be incomplete\" '$S.err')\" = 1 ] || cat '$S.err'"
t "... and leaves none of its programs loaded" 0 '' '' -- bash -c "
  ids=\$(cat '$S.ids'); [ -n \"\$ids\" ] || { echo 'no program ids'; exit 1; }; $(declare -f still_loaded); still_loaded \$ids"

# --- a timestamp that goes back within a stream ------------------------------------------------
# The writer alone (ukstap re-executed as ukstap-ctf-writer DIR, its socket on fd 3), fed wire.h
# messages by hand: cpu 0 gets ts 1000, 500 (back), 2000, 1500 (back); cpu 1 gets 100. Truth: the
# input: two events raised (to 1000 and 2000), reported in one line; babeltrace2 reads 5 events.
cat > "$T_TMP/feed.py" <<'PY'
import struct, sys
from ctf_writer_feed import msg, s, start_writer
a, w = start_writer(sys.argv[1], sys.argv[2])
spec = lambda ty, bits, name: bytes([ty, bits, 10, 0]) + s(name.encode())
out = msg(b"\x01" + struct.pack("<Q", 0) + s(b"monotonic") + struct.pack("<I", 0) + struct.pack("<I", 0))
out += msg(b"\x02" + struct.pack("<I", 0) + s(b"ev") + struct.pack("<I", 1) + spec(2, 64, "n"))
for n, (ts, cpu) in enumerate([(1000, 0), (500, 0), (2000, 0), (1500, 0), (100, 1)]):
    out += msg(b"\x03" + struct.pack("<IQI", 0, ts, cpu) + struct.pack("<Q", n))
a.sendall(out)
a.close()
sys.exit(w.wait())
PY
t "a timestamp going back in its stream is raised, counted, reported once" 0 '' \
  $'ukstap: CTF trace: 2 events\' timestamps were raised to keep their stream ordered\n' -- \
  env PYTHONPATH="$UKSTAP_TOP_SRCDIR/testsuite/e2e" $PY "$T_TMP/feed.py" "$UKSTAP" "$T_TMP/back"
t "... babeltrace2 reads the 5 events, the two raised ones at their stream's previous time" 0 \
  $'000000100 4\n000001000 0\n000001000 1\n000002000 2\n000002000 3\n' '' -- \
  bash -c "babeltrace2 '$T_TMP/back' | sed -E 's/^\\[[0-9:]+\\.([0-9]+)\\].* n = ([0-9]+) .*/\\1 \\2/'"

# --- DIRs to refuse: one line naming DIR, exit 1, nothing written ------------------------------
B='probe begin { exit() }'
mkdir "$T_TMP/full" && echo data > "$T_TMP/full/f"
echo file > "$T_TMP/file"
ln -s "$T_TMP/full" "$T_TMP/link"
mkdir -m 0777 "$T_TMP/open"
t "DIR not empty, not a ukstap trace" 1 '' "ukstap: cannot write the CTF trace to '$T_TMP/full': it is not empty and not a previous ukstap trace"$'\n' -- \
  "$UKSTAP" --ctf="$T_TMP/full" -e "$B"
t "... and left as it was" 0 $'data\n' '' -- cat "$T_TMP/full/f"
t "DIR is a file" 1 '' "ukstap: cannot write the CTF trace to '$T_TMP/file': it exists and is not a directory"$'\n' -- \
  "$UKSTAP" --ctf="$T_TMP/file" -e "$B"
t "DIR is a symbolic link (not followed)" 1 '' "ukstap: cannot write the CTF trace to '$T_TMP/link': it is a symbolic link"$'\n' -- \
  "$UKSTAP" --ctf="$T_TMP/link" -e "$B"
t "DIR writable by others" 1 '' "ukstap: cannot write the CTF trace to '$T_TMP/open': it is writable by group or others (who could plant links in it)"$'\n' -- \
  "$UKSTAP" --ctf="$T_TMP/open" -e "$B"
t "DIR cannot be made" 1 '' "ukstap: cannot write the CTF trace to '/proc/ukstap-ctf': No such file or directory"$'\n' -- \
  "$UKSTAP" --ctf=/proc/ukstap-ctf -e "$B"
t "--ctf= without a directory" 1 '' '~^ukstap: --ctf needs a directory' -- "$UKSTAP" --ctf= -e "$B"
t_done
