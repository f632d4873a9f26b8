#!/bin/bash
# Runs the robustness tests (testsuite/robustness/*.sh): what a hostile local user, a signal, a
# full disk or a closed pipe does to a root ukstap (docs/DESIGN.md "What ukstap promises").
exec bash "$(dirname "$0")/run-e2e.sh" robustness
