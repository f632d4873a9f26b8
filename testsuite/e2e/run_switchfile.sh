#!/bin/bash
# switch_file(), kill -USR2 and -S SIZE[,N]: staprun's output rotation.
#
# Truth: staprun(8) ("FILE SWITCHING BY SIGNAL": -o foo writes foo, then foo.1, foo.2) and stap(1)
# (-S: "switches output file to the next file" past SIZE, "removes the oldest output file" past N;
# staprun counts SIZE in megabytes and numbers the files FILE.0, FILE.1, ...), checked against
# the files on disk: which lines each holds is known from the order the script printed them in.
# The -S output is generated independently here (awk) and cut at the size limit.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
O="$T_TMP/sw"

# begin (native) and timer (BPF) handlers: what is printed before switch_file() stays in the
# old file, what is printed after goes to the next; end output lands in the last one.
t "switch_file: run" 0 '' '' -- "$UKSTAP" -o "$O" -e '
global n
probe begin { println("begin"); switch_file(); println("after begin") }
probe timer.ms(20) { n++; println(n); if (n % 3 == 0) switch_file(); if (n == 7) exit() }
probe end { println("end") }'
t "switch_file: FILE holds what came before the first switch" 0 $'begin\n' '' -- cat "$O"
t "switch_file: FILE.1, FILE.2, FILE.3 in order" 0 $'after begin\n1\n2\n3\n--\n4\n5\n6\n--\n7\nend\n' '' -- \
  bash -c "cat '$O.1'; echo --; cat '$O.2'; echo --; cat '$O.3'"
t "switch_file: no FILE.0, no FILE.4" 0 '' '' -- bash -c "[ ! -e '$O.0' ] && [ ! -e '$O.4' ]"

# kill -USR2 (staprun(8) "FILE SWITCHING BY SIGNAL"): the same switch, from outside. Each step
# waits for the file the previous one made (no fixed sleep).
U="$T_TMP/usr2"
usr2() {
  "$UKSTAP" -o "$U" -e 'probe begin { println("first") } probe end { println("last") }' &
  local pid=$! i
  for i in $(seq 600); do grep -q first "$U" 2>/dev/null && break; sleep 0.05; done
  kill -USR2 $pid
  for i in $(seq 600); do [ -e "$U.1" ] && break; sleep 0.05; done
  kill -INT $pid
  wait $pid
}
t "kill -USR2: run" 0 '' '' -- bash -c "U='$U' UKSTAP='$UKSTAP'; $(declare -f usr2); usr2"
t "kill -USR2: FILE before the signal, FILE.1 after" 0 $'first\n--\nlast\n' '' -- bash -c "cat '$U'; echo --; cat '$U.1'"

# The rotation's later files are made in the directory -o named when the run began, even when
# that path leads elsewhere by then (a renamed directory, a link planted in its place): the
# directory is held open, not looked up again by name at each switch.
M="$T_TMP/movedir"
moved() {
  mkdir -p "$M/d" "$M/elsewhere"
  "$UKSTAP" -o "$M/d/out" -e 'probe begin { println("first") } probe end { println("last") }' &
  local pid=$! i
  for i in $(seq 600); do grep -q first "$M/d/out" 2>/dev/null && break; sleep 0.05; done
  mv "$M/d" "$M/d.moved" && ln -s elsewhere "$M/d"
  kill -USR2 $pid
  for i in $(seq 600); do [ -e "$M/d.moved/out.1" ] || [ -e "$M/elsewhere/out.1" ] && break; sleep 0.05; done
  kill -INT $pid
  wait $pid
}
t "kill -USR2 after -o's directory was moved and a link put in its place: run" 0 '' '' -- \
  bash -c "M='$M' UKSTAP='$UKSTAP'; $(declare -f moved); moved"
t "... FILE.1 is in the directory the run began with, nothing through the link" 0 $'first\n--\nlast\n--\n' '' -- \
  bash -c "cat '$M/d.moved/out'; echo --; cat '$M/d.moved/out.1'; echo --; ls '$M/elsewhere'"

# Without -o there is nothing to switch: everything on stdout.
t "switch_file without -o: stdout, no file" 0 $'a\nb\n' '' -- \
  "$UKSTAP" -e 'probe begin { println("a"); switch_file(); println("b"); exit() }'

# -S 1,2: 5000 lines of 501 bytes (2.5 MB) into 1 MB files: 2092 whole lines fit in each
# (2093 * 501 > 2^20), so FILE.0 = lines 0-2091 (removed: only 2 kept), FILE.1 = 2092-4183,
# FILE.2 = 4184-4999.
S="$T_TMP/big"
t "-S 1,2: run" 0 '' '' -- "$UKSTAP" -DMAXACTION=100000 -S 1,2 -o "$S" \
  -e 'probe begin { for (i = 0; i < 5000; i++) printf("%0500d\n", i); exit() }'
gen() { awk -v a="$1" -v b="$2" 'BEGIN { for (i = a; i <= b; i++) printf("%0500d\n", i) }'; }
t "-S 1,2: FILE.1 = lines 2092-4183" 0 '' '' -- bash -c "$(declare -f gen); cmp <(gen 2092 4183) '$S.1'"
t "-S 1,2: FILE.2 = lines 4184-4999" 0 '' '' -- bash -c "$(declare -f gen); cmp <(gen 4184 4999) '$S.2'"
t "-S 1,2: the oldest (FILE.0) removed, no FILE itself" 0 '' '' -- bash -c "[ ! -e '$S.0' ] && [ ! -e '$S' ]"
t "-S 1 (no N): FILE.0 kept" 0 '' '' -- bash -c "'$UKSTAP' -DMAXACTION=100000 -S 1 -o '$S' \
  -e 'probe begin { for (i = 0; i < 2100; i++) printf(\"%0500d\n\", i); exit() }' &&
  $(declare -f gen); cmp <(gen 0 2091) '$S.0' && cmp <(gen 2092 2099) '$S.1'"

# The next file cannot be opened (a planted symbolic link in a sticky directory, refused as
# for -o itself): one error line naming it, status 1, the old file intact.
D="$T_TMP/sticky"
mkdir "$D" && chmod 1777 "$D" && ln -s "$T_TMP/elsewhere" "$D/o.1"
t "switch_file to a refused name: one error naming FILE.1" 1 '' \
  "ukstap: cannot write output to '$D/o.1': Too many levels of symbolic links"$'\n' -- \
  "$UKSTAP" -o "$D/o" -e 'probe begin { println("a"); switch_file(); println("b"); exit() }'
t "switch_file to a refused name: FILE kept, nothing written through the link" 0 $'a\n' '' -- \
  bash -c "cat '$D/o'; [ ! -e '$T_TMP/elsewhere' ]"

t "-S without -o: an error" 1 '' '~^ukstap: -S needs an output file' -- "$UKSTAP" -S 1 -e 'probe begin { exit() }'
t "-S with a bad size: an error" 1 '' "~^ukstap: Invalid -S size 'x'" -- "$UKSTAP" -S x -o "$S" -e 'probe begin { exit() }'
t "-S with a bad count: an error" 1 '' "~^ukstap: Invalid -S file count '0'" -- "$UKSTAP" -S 1,0 -o "$S" -e 'probe begin { exit() }'
t_done
