#!/bin/bash
# The one stack-line parser of bench/ and the e2e checks (bench/lib/stap_stack.py): its unit
# tests (stack_parser.py: SystemTap's backtrace lines, perf script's frame lines, "does this
# address follow a call"). No BPF, no root.
. "$(dirname "$0")/../e2e-lib.sh"
P="python3 $UKSTAP_TOP_SRCDIR/testsuite/e2e/stack_parser.py"
t "stack parser: SystemTap backtrace lines (docs/STAP-FORMATS.md §4)" 0 '' '*' -- $P StapLines
t "stack parser: perf script frame lines" 0 '' '*' -- $P PerfLines
t "stack parser: return addresses after a call (objdump)" 0 '' '*' -- $P FollowsCall
t_done
