#!/bin/bash
# -c CMD: the whole process tree the command starts goes with ukstap (loader/target.h):
# at exit every process of it is killed (a shell's background children used to run on), and
# when ukstap is SIGKILLed the target and its children are killed too (they used to run on,
# unsupervised). The tree is found in /proc by a marker in its argv (sleep MARKER), not by
# anything ukstap reports.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"

# pids_of MARK: the live processes whose argv is `sleep MARK`
pids_of() {
  local f
  for f in /proc/[0-9]*/cmdline; do
    [ "$( { tr '\0' ' ' < "$f"; } 2> /dev/null)" = "sleep $1 " ] && { f=${f#/proc/}; echo "${f%/cmdline}"; }
  done
  true
}
# gone MARK: true once no such process is left (polls up to 5 s); kills leftovers after a failure
gone() {
  for _ in $(seq 50); do [ -z "$(pids_of "$1")" ] && return 0; sleep 0.1; done
  local left; left=$(pids_of "$1"); [ -n "$left" ] && kill -KILL $left 2> /dev/null
  return 1
}
wait_line() { for _ in $(seq 600); do grep -Eq -- "$2" "$1" 2> /dev/null && return 0; sleep 0.1; done; return 1; }
m() { echo "1234.$$$1"; }  # a marker unique to this run and case

t "-c with a background child: status 0 at -T" 0 '' '' -- \
  "$UKSTAP" -T 1 -c "sleep $(m 1) & sleep $(m 1)" -e 'probe begin { }'
t "-c with a background child: no process of the tree is left" 0 '' '' -- gone "$(m 1)"

t "-c with a grandchild (sh -c inside sh -c): status 0 at -T" 0 '' '' -- \
  "$UKSTAP" -T 1 -c "sh -c \"sleep $(m 2)\"; true" -e 'probe begin { }'
t "-c with a grandchild: no process of the tree is left" 0 '' '' -- gone "$(m 2)"

# The command exits at once, its background child does not: the run ends with the command,
# the child goes with it.
t "-c that leaves a background child and exits: the run ends" 0 '' '' -- \
  timeout -s KILL 60 "$UKSTAP" -c "sleep $(m 3) & true" -e 'probe begin { }'
t "-c that leaves a background child: the child is gone" 0 '' '' -- gone "$(m 3)"

# SIGKILL of ukstap: nothing it started runs on.
"$UKSTAP" -c "sleep $(m 4) & sleep $(m 4)" -e 'probe begin { println("ready") }' > "$T_TMP/k.out" 2>&1 &
pid=$!
wait_line "$T_TMP/k.out" '^ready$'
for _ in $(seq 50); do [ "$(pids_of "$(m 4)" | wc -l)" = 2 ] && break; sleep 0.1; done
t "SIGKILL: the target and its child were running" 0 $'2\n' '' -- bash -c "$(declare -f pids_of); pids_of $(m 4) | wc -l"
kill -KILL $pid; wait $pid 2> /dev/null
t "SIGKILL of ukstap: the target and its child are gone" 0 '' '' -- gone "$(m 4)"
# In a terminal's foreground (script(1) gives ukstap a pty) the command stays in ukstap's job:
# it reads the terminal, and the tree still goes at the end (ukstap is its subreaper). A group
# of its own holding the terminal had stopped a pager later in the pipeline and kept the
# terminal on ^Z.
printf 'read x; echo "read:$x"\n' > "$T_TMP/reader.sh"
t "terminal: the command reads the terminal" 0 '~^read:typed' '' -- bash -c \
  "printf 'typed\\n' | timeout -s KILL 60 script -qec \"'$UKSTAP' -e 'probe begin { }' -c 'sh $T_TMP/reader.sh'\" /dev/null"
t "terminal: a background child of the command is gone after the run" 0 '' '' -- bash -c \
  "timeout -s KILL 60 script -qec \"'$UKSTAP' -e 'probe begin { }' -c 'sleep $(m 5) & true'\" /dev/null < /dev/null > /dev/null
   $(declare -f pids_of gone); gone $(m 5)"
# A reader of the terminal later in the pipeline reads while the command runs (the command
# waits for it: files F and G order the two).
cat > "$T_TMP/cmd.sh" <<EOC
touch "$T_TMP/F"; while [ ! -e "$T_TMP/G" ]; do sleep 0.1; done
EOC
cat > "$T_TMP/pager.sh" <<EOC
while [ ! -e "$T_TMP/F" ]; do sleep 0.1; done; read x < /dev/tty; echo "got \$x"; touch "$T_TMP/G"
EOC
t "terminal: a reader of the terminal after ukstap in the pipeline is not stopped" 0 '~^got typed' '' -- bash -c \
  "printf 'typed\\n' | timeout -s KILL 60 script -qec \"'$UKSTAP' -e 'probe begin { }' -c 'sh $T_TMP/cmd.sh' | sh $T_TMP/pager.sh\" /dev/null"
t_done
