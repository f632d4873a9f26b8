#!/bin/bash
# make check's end-to-end and robustness scripts (testsuite/e2e, testsuite/robustness) and the
# 6.1 guest's runner (testsuite/run-vm.sh) in one pool of run-e2e.sh: two scripts at a time, the
# ones marked `# e2e-schedule: alone` (they load or sample the whole machine) with no other
# script of either suite beside them. One pool, not the two suites one after the other:
# robustness after e2e was two minutes of make check's wall time on one core. The guest joins
# the pool, started first: in make -j2's other job slot it ran before the fuzz target's build
# and the fuzzing, and that chain (guest ~260 s + build + 80 s of fuzzing, one process at a
# time) ended after the pool. run-e2e.sh and run-robustness.sh still run one suite each.
exec bash "$(dirname "$0")/run-e2e.sh" "$(dirname "$0")/run-vm.sh" e2e robustness
