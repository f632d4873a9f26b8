#!/bin/sh
# first_event_stop.sh PROG ARGS...: ukstap's -c command for run_first_event_mirror.sh. Stops its
# parent (ukstap) and waits until every thread of it has stopped, then execs PROG: PROG's first
# events come while ukstap cannot have read its exec and mmap records, so the kernel's walk has
# no VMA mirror of PROG (the exec dropped the shell's) and must find PROG's files by itself.
# PROG continues ukstap (first_event_prog.c `cont`).
kill -STOP "$PPID" || exit 1
for t in /proc/"$PPID"/task/*; do
  until grep -q '^State:.*stopped' "$t/status" 2>/dev/null || [ ! -e "$t" ]; do :; done
done
exec "$@"
