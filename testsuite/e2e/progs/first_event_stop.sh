#!/bin/sh
# first_event_stop.sh PROG ARGS...: ukstap's -c command for run_first_event_mirror.sh. Stops its
# parent (ukstap) and waits until every thread of it has stopped, then execs PROG: PROG's first
# events come while ukstap cannot have read its exec and mmap records, so the kernel's walk has
# no VMA mirror of PROG (the exec dropped the shell's) and must find PROG's files by itself.
# PROG continues ukstap (first_event_prog.c `cont`).
# stopped TASKDIR: its State line says stopped. The shell's own read, no process per poll (an
# exec over 9p is slow in the TCG guest).
stopped() {
  while IFS= read -r l; do
    case $l in State:*stopped*) return 0 ;; State:*) return 1 ;; esac
  done < "$1/status"
  return 1
}
kill -STOP "$PPID" || exit 1
for t in /proc/"$PPID"/task/*; do
  until stopped "$t" 2>/dev/null || [ ! -e "$t" ]; do :; done
done
exec "$@"
