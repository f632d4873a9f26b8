#!/bin/bash
# The files ukstap makes for itself during a run (the copy of the vDSO its unwind-table compiler
# reads, the --profile samples file, the module compiled for this run only when the cache is not
# to be trusted) have no name in /tmp once pass 5 runs: a kill -9 of ukstap leaves nothing behind
# (memfds: loader/unwind_tables.cpp, translator/driver/main.cpp; the module directory is
# removed once its objects are open: loader/compile.cpp).
#
# Truth: the directory listing of a /tmp that only this test's ukstap can see (a private mount
# namespace with a fresh tmpfs on /tmp, unshare(1)), and /proc/PID/fd of the running ukstap.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"

# in_private_tmp.sh: runs ukstap --profile in a private /tmp (its cache in /tmp/cache), waits for
# the target (`sleep`, its child) to run, lists ukstap's descriptors naming a file in /tmp, kill
# -9s it, lists what /tmp holds besides the cache.
cat > "$T_TMP/in_private_tmp.sh" <<'EOS'
set -u
mount --make-rprivate / && mount -t tmpfs ukstap-temp-files /tmp || exit 99
export XDG_CACHE_HOME=/tmp/cache
skip_cache=(! -path '/tmp/cache/*')
if [ "${1:-}" = untrusted ]; then  # another user's cache: the module is compiled for this run only
  mkdir /tmp/cache && chown nobody /tmp/cache
  skip_cache=()
fi
"$UKSTAP" --profile=99 -c 'sleep 120' > /dev/null 2>&1 &
pid=$!
child=
for _ in $(seq 600); do  # up to 60 s on a loaded machine
  child=$(pgrep -P "$pid" -x sleep) && break
  sleep 0.1
done
[ -n "$child" ] || { echo "ukstap never started its target"; kill -9 "$pid"; exit 98; }
# Wait for the vDSO copy too (made when the unwind tables are loaded, before the target runs;
# a memfd now).
echo "fds into /tmp while running:"
for f in /proc/"$pid"/fd/*; do
  l=$(readlink "$f") && case $l in /tmp/cache/*|*' (deleted)') ;; /tmp/*) echo "  $l" ;; esac
done
kill -9 "$pid"
wait "$pid" 2> /dev/null
kill "$child" 2> /dev/null
echo "left in /tmp after kill -9:"
find /tmp -mindepth 1 ! -path /tmp/cache "${skip_cache[@]}" | sed 's/^/  /'
EOS
# The fresh /tmp hides whatever lay under /tmp (a build tree checked out there, as CI may): the
# binary, tapsets and runtime run from a copy in /dev/shm.
kit=$(mktemp -d /dev/shm/ukstap-kit.XXXXXX)
cp "$UKSTAP" "$kit/ukstap" && cp -r "$UKSTAP_TOP_SRCDIR/tapsets" "$UKSTAP_TOP_SRCDIR/runtime" "$kit/"
in_private_tmp() {
  unshare -m env UKSTAP="$kit/ukstap" UKSTAP_TAPSET="$kit/tapsets" UKSTAP_RUNTIME="$kit/runtime" \
    bash "$T_TMP/in_private_tmp.sh" "$@"
}
t "kill -9 during a --profile run with user stacks: nothing in /tmp, before or after" 0 \
  $'fds into /tmp while running:\nleft in /tmp after kill -9:\n' '' -- in_private_tmp

t "the same with an untrusted cache: the module compiled for the run is gone too" 0 \
  $'fds into /tmp while running:\nleft in /tmp after kill -9:\n' '' -- in_private_tmp untrusted
rm -rf "$kit"

# The same run to its end: the samples still come back (through the memfd).
t "--profile still writes its profile" 0 '~ [0-9]+$' '' -- \
  "$UKSTAP" --profile=997 -c 'sh -c "i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done"'

# And the vDSO's table is still built from the copy (-v coverage line).
t "the vDSO's unwind table is still compiled" 0 '' '~^Pass 5: \[vdso\]: [1-9][0-9]* rows' -- \
  "$UKSTAP" -v -o /dev/null -e 'probe syscall.getppid { if (pid() == target()) print_ubacktrace() }' -c 'sh -c :'

t_done
