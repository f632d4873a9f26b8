#!/bin/bash
# scripts/check-tapsets in `make check`: every syscall alias against the running kernel's
# tracepoints. tracefs is mounted first when it is not and we are root (as ukstap does).
# Without tracefs the check is skipped (77), except under CI=true (which runs as root), where
# that is a failure.
set -u
: "${UKSTAP_TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"

have_tracefs() {
  [ -d /sys/kernel/tracing/events/syscalls ] || [ -d /sys/kernel/debug/tracing/events/syscalls ]
}
if ! have_tracefs && [ "$(id -u)" = 0 ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
    { mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null; }
fi
if ! have_tracefs && [ "${CI:-}" = true ]; then
  echo "FAIL: no tracefs under CI (id: $(id -un)); check-tapsets cannot run"
  exit 1
fi
bash "$UKSTAP_TOP_SRCDIR/scripts/check-tapsets" "$UKSTAP_TOP_SRCDIR/tapsets"
rc=$?
# SystemTap's documented variables on every alias (scripts/stap-syscall-vars.json truth).
python3 "$UKSTAP_TOP_SRCDIR/scripts/check-syscall-vars" "$UKSTAP_TOP_SRCDIR/tapsets" || rc=1
exit $rc
