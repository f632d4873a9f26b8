#!/bin/bash
# make check's end-to-end and robustness scripts (testsuite/e2e, testsuite/robustness) in one
# pool of run-e2e.sh: two scripts at a time, the ones marked `# e2e-schedule: alone` (they load
# or sample the whole machine) with no other script of either suite beside them. One pool, not
# the two runners one after the other: robustness after e2e was two minutes of make check's
# wall time on one core. run-e2e.sh and run-robustness.sh still run one suite each.
exec bash "$(dirname "$0")/run-e2e.sh" e2e robustness
