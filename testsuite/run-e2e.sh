#!/bin/bash
# Runs the end-to-end tests: every testsuite/SUITE/*.sh (SUITE: the first argument, default e2e;
# run-robustness.sh passes "robustness"). Each prints PASS/FAIL lines and a closing
# "N passed, N failed"; this runner adds them up and prints its own closing line.
set -u
suite=${1:-e2e}
: "${UKSTAP_TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${UKSTAP_TOP_BUILDDIR:=$UKSTAP_TOP_SRCDIR}"
: "${UKSTAP:=$UKSTAP_TOP_BUILDDIR/ukstap}"
export UKSTAP UKSTAP_TOP_SRCDIR UKSTAP_TOP_BUILDDIR

if [ ! -x "$UKSTAP" ]; then
  echo "run-$suite: $UKSTAP is not built"
  echo "0 passed, 1 failed"
  exit 1
fi

passed=0 failed=0
for test in "$UKSTAP_TOP_SRCDIR"/testsuite/$suite/*.sh; do
  [ -e "$test" ] || continue
  name=$(basename "$test" .sh)
  echo "=== $name"
  t0=$SECONDS
  out=$(bash "$test" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  # Each script's wall time, for make check's 10-minute budget (not an assertion).
  echo "--- $name: $((SECONDS - t0)) s"
  last=$(printf '%s\n' "$out" | tail -n 1)
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    if [ $rc != 0 ] && [ "${BASH_REMATCH[2]}" = 0 ]; then failed=$((failed + 1)); echo "FAIL: $name exited $rc"; fi
  else
    failed=$((failed + 1))
    echo "FAIL: $name ended without a summary (exit status $rc)"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
