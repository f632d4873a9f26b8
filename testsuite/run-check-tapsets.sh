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
# ... and the check catches a missing one: kill's sig_name removed from a copy must fail.
neg=$(mktemp -d) || exit 1
cp -r "$UKSTAP_TOP_SRCDIR/tapsets" "$neg/"
sed -i '/^\tsig_name = __sysc_signal_name(sig)$/d' "$neg/tapsets/syscalls/generated.stp"
python3 "$UKSTAP_TOP_SRCDIR/scripts/check-syscall-vars" "$neg/tapsets" > "$neg/out"
if grep -q '^check-syscall-vars: nd_syscall.kill: documented variable `sig_name` is never assigned$' "$neg/out"; then
  echo "check-syscall-vars: OK: a removed documented variable (kill's sig_name) is reported"
else
  echo "FAIL: check-syscall-vars did not report kill's missing sig_name"
  rc=1
fi
rm -rf "$neg"
exit $rc
