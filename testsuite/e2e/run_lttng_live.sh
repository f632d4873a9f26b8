#!/bin/bash
# ukstap --lttng (lttng-writer/README.md): the script's events as LTTng-UST events, recorded by
# an LTTng live session and streamed through lttng-relayd on loopback (issue 18).
#
# The test starts its own LTTng daemons, as `nobody` with a private LTTNG_HOME (liblttng-ust in
# ukstap's writer, a root process, registers with the per-user session daemon its LTTNG_HOME
# names as well as the root one) and a relay daemon on three free loopback ports; it never
# touches /var/run/lttng. One live session records ukstap:event with a blocking channel;
# `babeltrace2 --input-format=lttng-live net://.../host/HOST/SESSION` reads it while ukstap runs.
# Truths: the text ukstap wrote to -o FILE in the same run (event by event: names, values,
# backtrace addresses and function names), the program's own pid and its 25 opens of /dev/null
# (the count it was asked for). Then: the daemons are stopped by their pids and nothing started here
# is left running; a run with no session enabling ukstap:event says on stderr how many events no
# session recorded.
# Root only; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"
PY=/usr/bin/python3
CHECK="$UKSTAP_TOP_SRCDIR/testsuite/e2e/lttng_live_check.py"
P="$T_TMP/ctf_prog"
t_build ctf_prog gcc -O2 -g -fno-omit-frame-pointer -o "$P" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/ctf_prog.c" ||
  { t_done; exit; }

# The daemons' home: traversable by nobody (T_TMP is root's, mode 700).
LH=$(mktemp -d /tmp/ukstap-lttng.XXXXXX)
chmod 755 "$LH"
chown nobody "$LH"
DAEMONS=()
stop_daemons() {
  local p
  for p in "${DAEMONS[@]}"; do kill -TERM "$p" 2> /dev/null; done
  for p in "${DAEMONS[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -0 "$p" 2> /dev/null && kill -KILL "$p"
    wait "$p" 2> /dev/null
  done
  DAEMONS=()
}
trap 'stop_daemons; [ "$T_FAILED" = 0 ] || keep; rm -rf "$T_TMP" "$LH"' EXIT
# A failure keeps what the live reader, the text and the daemons said (the temporary directories
# go at exit): a flake can then be read.
keep() {
  local d
  d=$(mktemp -d /tmp/ukstap-lttng-failed.XXXXXX)
  cp -a "$T_TMP/live.txt" "$T_TMP/live.err" "$T_TMP/text" "$T_TMP/ukstap.err" "$T_TMP/facts" "$LH"/*.log "$d" 2> /dev/null
  echo "run_lttng_live: failed; its outputs are kept in $d"
}
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$LH" LTTNG_HOME="$LH" "$@"; }
read -r P1 P2 P3 < <($PY -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
# Started directly (setpriv and env exec): $! is the daemon's own pid.
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$LH" LTTNG_HOME="$LH")
"${NOBODY[@]}" lttng-sessiond --no-kernel > "$LH/sessiond.log" 2>&1 &
DAEMONS+=($!)
"${NOBODY[@]}" lttng-relayd -C "tcp://127.0.0.1:$P1" -D "tcp://127.0.0.1:$P2" -L "tcp://127.0.0.1:$P3" \
  -o "$LH/relayd" > "$LH/relayd.log" 2>&1 &
DAEMONS+=($!)
HOST=$(hostname)
SESS=ukstap-live-$$

cat > "$T_TMP/s.stp" <<'STP'
probe syscall.openat {
  if (pid() == target() && execname() == "ctf_prog") { printf("open %s %d\n", filename, flags); print_ubacktrace() }
}
probe syscall.close { if (pid() == target() && execname() == "ctf_prog") printf("close %d\n", fd) }
STP
t "a live session through lttng-relayd on 127.0.0.1 (private sessiond, ports $P1 $P2 $P3)" 0 '' '' -- bash -c "
  $(declare -f as_nobody); LH='$LH'
  for i in \$(seq 300); do as_nobody lttng list > /dev/null 2>&1 && break; sleep 0.1; done
  as_nobody lttng create '$SESS' --live=100000 --set-url=net://127.0.0.1:$P1:$P2 > '$LH/ctl.log' 2>&1 &&
  as_nobody lttng enable-channel --userspace ch --blocking-timeout=inf >> '$LH/ctl.log' 2>&1 &&
  as_nobody lttng enable-event --userspace --channel=ch 'ukstap:*' >> '$LH/ctl.log' 2>&1 &&
  as_nobody lttng start >> '$LH/ctl.log' 2>&1 || { cat '$LH/ctl.log'; exit 1; }
  # A second, local session records liblttng-ust's own statedump of the writer (the layout check
  # below). Not a second channel of the live session: babeltrace2 2.0.4's live reader fails
  # (\"No stream class with ID 1\") when a second channel's data comes before its metadata.
  as_nobody lttng create sd --output='$LH/sd' >> '$LH/ctl.log' 2>&1 &&
  as_nobody lttng add-context --userspace -t vpid -t vtid -t ip -t procname >> '$LH/ctl.log' 2>&1 &&
  as_nobody lttng enable-event --userspace 'lttng_ust_statedump:*' >> '$LH/ctl.log' 2>&1 &&
  as_nobody lttng start >> '$LH/ctl.log' 2>&1 || { cat '$LH/ctl.log'; exit 1; }
  babeltrace2 --component=src.ctf.lttng-live \
    --params='inputs=[\"net://127.0.0.1:$P3/host/$HOST/$SESS\"],session-not-found-action=\"end\"' \
    > '$T_TMP/live.txt' 2> '$T_TMP/live.err' &
  reader=\$!
  LTTNG_HOME='$LH' '$UKSTAP' --lttng -o '$T_TMP/text' '$T_TMP/s.stp' -c '$P $T_TMP/facts 25' 2> '$T_TMP/ukstap.err'
  rc=\$?
  # Streamed while the session runs: the reader prints every event before lttng stop flushes
  # anything (the live timer sends data every 100 ms). The loop waits for that; its bound is a
  # guard, what it saw is checked below.
  want=\$(grep -c -E '^(open|close) ' '$T_TMP/text')
  for i in \$(seq 300); do
    [ \"\$(grep -c ' ukstap:event: ' '$T_TMP/live.txt')\" -ge \"\$want\" ] && break; sleep 0.1
  done
  echo \"\$(grep -c ' ukstap:event: ' '$T_TMP/live.txt') \$want\" > '$T_TMP/before_stop'
  as_nobody lttng list --userspace >> '$LH/ctl.log' 2>&1
  as_nobody lttng stop '$SESS' >> '$LH/ctl.log' 2>&1
  as_nobody lttng destroy '$SESS' >> '$LH/ctl.log' 2>&1
  as_nobody lttng destroy sd >> '$LH/ctl.log' 2>&1
  for i in \$(seq 300); do kill -0 \$reader 2> /dev/null || break; sleep 0.1; done
  if kill -0 \$reader 2> /dev/null; then echo 'the live reader did not end after lttng destroy'; kill \$reader; fi
  wait \$reader; echo \"reader rc \$?\" >> '$T_TMP/live.err'
  cat '$T_TMP/ukstap.err' >&2; exit \$rc"
t "live events = the run's text event by event; vpid = the program's pid; its 25 opens of /dev/null" 0 '~^ok: [0-9]+ events$' '' -- \
  bash -c "$PY '$CHECK' '$T_TMP/live.txt' '$T_TMP/text' '$T_TMP/facts' 25 || { cat '$T_TMP/live.err'; exit 1; }"
t "... every event was printed by the live reader before the session was stopped" 0 '' '' -- bash -c "
  read got want < '$T_TMP/before_stop'; [ \"\$got\" = \"\$want\" ] || echo \"\$got of \$want\""
t "... and LTTng discarded none (the channel blocks: --blocking-timeout=inf)" 0 '' '' -- bash -c "
  grep -i 'discarded' '$T_TMP/live.txt' '$T_TMP/live.err'; true"
t "the relay daemon's copy of the session has the events the live reader printed" 0 '' '' -- bash -c "
  a=\$(babeltrace2 '$LH/relayd' 2> /dev/null | grep -c ' ukstap:event: '); b=\$(grep -c ' ukstap:event: ' '$T_TMP/live.txt')
  [ \"\$a\" = \"\$b\" ] || { echo \"relayd's copy \$a, live \$b\"; exit 1; }"

# --- Trace Compass's environment for --ctf traces ------------------------------------------------
# The writer is an LTTng-UST application: the local session `sd` recorded liblttng-ust's own
# statedump of it, with the vpid/vtid/ip/procname contexts: a real LTTng-UST trace of this
# machine's LTTng-UST, the truth for the layout a --ctf trace declares (lttng_layout_check.py).
t "--ctf of the same program: a trace with statedump events" 0 '' '' -- \
  "$UKSTAP" --ctf="$T_TMP/ctf" -o "$T_TMP/ctf.text" "$T_TMP/s.stp" -c "$P $T_TMP/facts2 3"
t "--ctf's env (domain, tracer_name, tracer_major/minor) and statedump layout = LTTng-UST's here" 0 '~^ok: env domain=ust, tracer_name=lttng-ust, tracer_major=2, tracer_minor=[0-9]+; 3 statedump classes$' '' -- \
  $PY "$UKSTAP_TOP_SRCDIR/testsuite/e2e/lttng_layout_check.py" "$LH/sd" "$T_TMP/ctf"
# A frame event is written once per distinct address of a process (ctf-writer/statedump.h): as
# many leaf_open frame events as the text has distinct leaf_open return addresses.
t "... and babeltrace2 still reads it, --debug-info resolving leaf_open as the text names it" 0 '' '' -- bash -c "
  n=\$(babeltrace2 --debug-info '$T_TMP/ctf' | grep -c 'ukstap:callstack_user_frame: .*func = \"leaf_open+') &&
  d=\$(grep ' : leaf_open+' '$T_TMP/ctf.text' | awk '{print \$1}' | sort -u | wc -l) &&
  [ \"\$(grep -c ' : leaf_open+' '$T_TMP/ctf.text')\" = 3 ] && [ \"\$n\" -ge 1 ] && [ \"\$n\" = \"\$d\" ] || echo \"\$n leaf_open frame events, \$d distinct addresses\""

# --- nobody records: said on stderr, with the count ----------------------------------------------
t "no session enables ukstap:event: the writer says how many events were not recorded" 0 '' \
  '~: 1 of 1 events were not recorded: no LTTng session had ukstap:event enabled' -- bash -c "
  LTTNG_HOME='$LH' '$UKSTAP' --lttng -e 'probe begin { printf(\"x\") exit() }'"
t "--lttng with --ctf: one error line" 1 '' '~--lttng and --ctf cannot be combined' -- "$UKSTAP" --lttng --ctf="$T_TMP/c" -e 'probe begin { exit() }'

# --- nothing left running ----------------------------------------------------------------------
PIDS="${DAEMONS[*]}"
stop_daemons
# (the pattern's [.] keeps the checking shell, whose command line holds it, from matching itself)
t "the daemons stopped by their pids ($PIDS): no process started here is left (none names $LH)" 0 '' '' -- bash -c "
  for p in $PIDS; do kill -0 \$p 2> /dev/null && echo \"\$p still runs\"; done
  left=\$(pgrep -a -f '${LH/./[.]}'); [ -z \"\$left\" ] || { echo \"\$left\"; exit 1; }
  pgrep -a -x ukstap-lttng || true"
t_done
