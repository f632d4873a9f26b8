#!/bin/bash
# input.char and input.line (tapsets/input.stp, loader/input_reader.h): the probes run for each
# byte and each line ukstap reads from its standard input. The truth is the input itself: the
# characters printed one per probe run are the bytes fed in; the lines are the input's lines
# with their newline (stapprobes INPUT), cut at MAXSTRINGLEN-1 bytes (SystemTap's string
# limit: "no more than MAXSTRINGLEN characters will be buffered"). End of input ends the
# reading, not the run: with stdin at EOF (/dev/null, closed) no input probe runs and the
# script goes on to its timer and end probe.
set -u
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }

# Text with spaces, tabs, an empty line, UTF-8 (delivered byte by byte) and '#' last.
TEXT=$'first line\n\tsecond,  with  tabs\n\nd\xc3\xa9j\xc3\xa0 vu\nEND\n#'
CHARS='probe input.char { printf("%s", char); if (char == "#") exit() }'
t "input.char: every byte of a pipe, in order" 0 "$TEXT" '' --stdin "$TEXT" -- "$UKSTAP" -e "$CHARS"

printf '%s' "$TEXT" > "$T_TMP/text"
t "input.char: a regular file (epoll cannot watch it)" 0 "$TEXT" '' -- \
  bash -c '"$1" -e "$2" < "$3"' _ "$UKSTAP" "$CHARS" "$T_TMP/text"

LINES='probe input.line { printf("<%s>", line); if (line == "END\n") exit() }'
WANT_LINES=$(printf '%s' "$TEXT" | awk '{ printf "<%s\n>", $0 } /^END$/ { exit }')
t "input.line: each line with its newline" 0 "$WANT_LINES" '' --stdin "$TEXT" -- \
  "$UKSTAP" -e "$LINES"

# Both families in one script: each byte, then the line it completes.
BOTH='probe input.char { printf("c"); }
probe input.line { printf("L%d", strlen(line)); if (line == "x\n") exit() }'
t "input.char and input.line together" 0 'cccL3cL1ccL2' '' --stdin $'ab\n\nx\n' -- \
  "$UKSTAP" -e "$BOTH"

# Data arriving in pieces: a line split across reads is delivered whole.
t "input.line: a line split across two writes" 0 '<hello world
>' '' -- bash -c '(printf "hello "; sleep 0.3; printf "world\n"; sleep 0.3; printf "END\n") |
  "$1" -e "$2"' _ "$UKSTAP" 'probe input.line { if (line == "END\n") exit(); else printf("<%s>", line) }'

# A line longer than MAXSTRINGLEN: its first MAXSTRINGLEN-1 bytes (no room for the newline).
LONG=abcdefghijklmnopqrstuvwxyz
t "input.line: a long line cut at MAXSTRINGLEN-1 bytes" 0 \
  "<$(printf '%s' "$LONG" | head -c 15)>" '' \
  --stdin "$LONG"$'\n' -- "$UKSTAP" -DMAXSTRINGLEN=16 \
  -e 'probe input.line { printf("<%s>", line); exit() }'

# End of input is not the end of the run; a last line without a newline is not a line.
EOFS='probe input.char { printf("c") } probe input.line { printf("<%s>", line) }
probe timer.ms(300) { exit() } probe end { println("end") }'
t "stdin at EOF (/dev/null): no input probe runs, the run goes on" 0 $'end\n' '' -- \
  bash -c '"$1" -e "$2" < /dev/null' _ "$UKSTAP" "$EOFS"
t "stdin closed: no input probe runs, the run goes on" 0 $'end\n' '' -- \
  bash -c '"$1" -e "$2" <&-' _ "$UKSTAP" "$EOFS"
t "a pipe that ends: its bytes, then the run goes on to its end" 0 $'cc<a\n>cend\n' '' \
  --stdin $'a\nb' -- "$UKSTAP" -e "$EOFS"

# The -c command keeps its stdin when the script has no input probe (ukstap never reads it).
t "-c command reads the stdin a script without input probes leaves alone" 0 $'kept\n' '' \
  --stdin $'kept\n' -- "$UKSTAP" -e 'probe begin { }' -c cat

# A terminal: each key as typed, not echoed; the mode restored at exit (input_tty_check.py).
t "input.char on a terminal: keys as typed, no echo, mode restored" 0 $'ok\n' '' -- \
  python3 "$(dirname "$0")/input_tty_check.py" "$UKSTAP"

t_done
