#!/bin/bash
# stap.pass0 (tapsets/stap.stp): the pass0__start SDT marker of SystemTap's own stap binary.
# Truths: readelf lists the marker in stap's .note.stapsdt; one stap run fires it once, with a
# non-zero session (its argument). stap stops at the end of pass 0 here (no kernel build tree),
# so later passes' markers cannot be seen on this machine.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
stap=$(command -v stap) || { echo "FAIL: stap is not installed"; T_FAILED=1; t_done; exit; }

t stap_marker_in_notes 0 '' '' -- bash -c "readelf -n $stap | grep -q 'Name: pass0__start'"
t stap_pass0_fires_once 0 $'stap.pass0 1\n' '*' -- "$UKSTAP" -e '
probe stap.pass0 { if (ppid() == target()) printf("%s %d\n", pn(), session != 0) }' \
  -c "sh -c \"$stap -p1 -e 'probe begin { exit() }' > /dev/null 2>&1; exit 0\""
t_done
