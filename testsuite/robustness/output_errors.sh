#!/bin/bash
# Output errors are never silent: a write that fails (a full disk, a closed pipe) is one error
# line naming the output and the error, and a non-zero exit; a pipe's reader going away
# (`| head -1`) ends the run at once, probes detached. -o FILE in a world-writable sticky
# directory (/tmp) does not follow a planted symbolic link nor take over another user's file
# (docs/DESIGN.md "What ukstap promises").
source "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

TEN_OUT=$(printf 'hello\n%.0s' {1..10})$'\n'
TEN='probe begin { for (i = 0; i < 10; i++) println("hello") exit() }'
t "-o /dev/full: error line, exit 1" 1 '' \
  $'ukstap: cannot write output to \'/dev/full\': No space left on device\n' -- \
  "$UKSTAP" -o /dev/full -e "$TEN"
t "stdout on /dev/full: error line, exit 1" 1 '' \
  $'ukstap: cannot write output to standard output: No space left on device\n' -- \
  bash -c '"$0" -e "$1" > /dev/full' "$UKSTAP" "$TEN"
# Everything fits: the same script still exits 0 and writes all ten lines.
t "-o FILE that can be written" 0 '' '' -- "$UKSTAP" -o "$T_TMP/ten.out" -e "$TEN"
t "  ... has the ten lines" 0 "$TEN_OUT" '' -- cat "$T_TMP/ten.out"

# | head -1. The script prints one line at begin and then nothing: ukstap must notice the reader
# leaving without another write. Its programs (named by its own descriptors' prog_id) must be
# gone once it has exited.
prog_ids() { grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u; }
still_loaded() { for id in "$@"; do bpftool prog show id "$id" > /dev/null 2>&1 && echo "$id"; done; true; }
fifo=$T_TMP/pipe; mkfifo "$fifo"
"$UKSTAP" -e 'probe begin { println("first") println("second") }
              probe kernel.trace("sched:sched_process_exec") { }' > "$fifo" 2> "$T_TMP/head.err" &
pid=$!
exec 3< "$fifo"
IFS= read -r line <&3  # begin ran: the probes are attached
ids=$(prog_ids $pid | tr '\n' ' ')
exec 3<&-              # the reader goes away, as head -1 does after its line
for _ in $(seq 100); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
if kill -0 $pid 2> /dev/null; then kill -KILL $pid; wait $pid; rc=timeout; else wait $pid; rc=$?; fi
t "| head -1: the line arrived" 0 'first' '' -- printf '%s' "$line"
t "| head -1: exits within 10 s with status 1" 0 '' '' -- test "$rc" = 1
t "| head -1: says why" 0 '' '' -- \
  grep -qx 'ukstap: cannot write output to standard output: Broken pipe' "$T_TMP/head.err"
t "| head -1: its programs ($ids) are gone" 0 '' '' -- \
  bash -c "[ -n '$ids' ] && [ -z \"\$($(declare -f still_loaded); still_loaded $ids)\" ]"
# The usual shape: a script that keeps printing, cut by head. Bounded by timeout.
t "| head -1 with a printing script" 0 $'tick\n1 0\n' '' -- bash -c \
  'timeout 20 "$0" -e "probe timer.ms(50) { println(\"tick\") }" 2> /dev/null | head -1; echo "${PIPESTATUS[*]}"' "$UKSTAP"

# -o in a world-writable sticky directory: nobody plants a link to a file of root's, or a file
# of their own, where root's run is going to write.
sticky=$(mktemp -d /tmp/ukstap-sticky.XXXXXX); chmod 1777 "$sticky"
echo precious > "$sticky/victim"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
as_nobody ln -s "$sticky/victim" "$sticky/link"
t "-o symlink in a sticky dir: refused" 1 '' \
  "~^ukstap: refusing to write output file '$sticky/link': it is a symbolic link" -- \
  "$UKSTAP" -o "$sticky/link" -e "$TEN"
t "  ... the link's target is untouched" 0 $'precious\n' '' -- cat "$sticky/victim"
as_nobody sh -c "echo theirs > '$sticky/theirs'"
t "-o another user's file in a sticky dir: refused" 1 '' \
  "~^ukstap: refusing to write output file '$sticky/theirs': it is owned by uid $(id -u nobody)" -- \
  "$UKSTAP" -o "$sticky/theirs" -e "$TEN"
t "  ... the file is untouched" 0 $'theirs\n' '' -- cat "$sticky/theirs"
echo old > "$sticky/mine"
t "-o an own file in a sticky dir: written" 0 '' '' -- "$UKSTAP" -o "$sticky/mine" -e "$TEN"
t "  ... truncated and rewritten" 0 "$TEN_OUT" '' -- cat "$sticky/mine"
t "-o a new file in a sticky dir: written" 0 '' '' -- "$UKSTAP" -o "$sticky/new" -e "$TEN"
t "  ... ten lines" 0 "$TEN_OUT" '' -- cat "$sticky/new"
rm -rf "$sticky"
# -o in another user's directory (as `sudo ukstap -o out` in their home): a link they plant there
# is not followed; a file of theirs there may be written (they could write it anyway).
theirs=$(mktemp -d /tmp/ukstap-theirs.XXXXXX); chmod 755 "$theirs"; chown nobody "$theirs"
echo precious > "$T_TMP/victim"; chmod 644 "$T_TMP/victim"
as_nobody ln -s "$T_TMP/victim" "$theirs/link"
t "-o symlink in another user's dir: refused" 1 '' \
  "~^ukstap: refusing to write output file '$theirs/link': it is a symbolic link in the directory" -- \
  "$UKSTAP" -o "$theirs/link" -e "$TEN"
t "  ... the link's target is untouched" 0 $'precious\n' '' -- cat "$T_TMP/victim"
as_nobody sh -c "echo old > '$theirs/out'"
t "-o a file of theirs in their dir: written" 0 '' '' -- "$UKSTAP" -o "$theirs/out" -e "$TEN"
t "  ... ten lines" 0 "$TEN_OUT" '' -- cat "$theirs/out"
rm -rf "$theirs"
t_done
