#!/bin/bash
# Runs the robustness tests (testsuite/robustness/*.sh): what a hostile local user, a signal, a
# full disk or a closed pipe does to a root ukstap (docs/DESIGN.md "What ukstap promises").
# One script at a time unless UKSTAP_E2E_JOBS says otherwise. make check runs them two at a
# time, in one pool with the e2e scripts (run-e2e-robustness.sh; the scripts that load the
# machine, marked `# e2e-schedule: alone`, with no other beside them).
: "${UKSTAP_E2E_JOBS:=1}"
export UKSTAP_E2E_JOBS
exec bash "$(dirname "$0")/run-e2e.sh" robustness
