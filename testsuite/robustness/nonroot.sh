#!/bin/bash
# An unprivileged user: anything that would load BPF (pass 5, --profile) is refused at once,
# before pass 1, with one line saying what is needed; what only reads and translates (-p1 to
# -p4, -l/-L) works as far as it can, and what needs tracefs says it needs root instead of
# "no match". Runs as nobody through setpriv; the binary, tapsets and runtime are copied to a
# directory nobody can read, so the test does not depend on the build tree's permissions.
. "$(dirname "$0")/../e2e-lib.sh"

NL=$'\n'
t_require_root || { t_done; exit; }
command -v setpriv > /dev/null || { echo "FAIL: setpriv (util-linux) is needed"; exit 1; }

pub=$(mktemp -d /tmp/ukstap-nonroot.XXXXXX)
trap 'rm -rf "$T_TMP" "$pub"' EXIT
cp "$UKSTAP" "$pub/ukstap"
cp -r "$UKSTAP_TOP_SRCDIR/tapsets" "$pub/tapsets"
cp -r "$UKSTAP_TOP_SRCDIR/runtime" "$pub/runtime"
mkdir "$pub/cache"
chmod -R a+rX "$pub"
chown nobody "$pub/cache"
uid=$(id -u nobody)
as_nobody() {
  env -i PATH="$PATH" HOME="$pub" XDG_CACHE_HOME="$pub/cache" UKSTAP_TAPSET="$pub/tapsets" \
    UKSTAP_RUNTIME="$pub/runtime" setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}
U=$pub/ukstap
# The promise of what works without root excepts tracepoints: tracefs (mode 0700) is closed to
# nobody, as the -p2 and -l checks below show.
NEED="ukstap: running probes (pass 5) needs root or the CAP_BPF and CAP_PERFMON capabilities (uid $uid has neither); -p1 to -p4 and -l/-L work without, except for tracepoint-based probes (syscall.*, kernel.trace): reading tracepoints needs root: /sys/kernel/tracing is not readable by uid $uid (Permission denied).$NL"

t "nobody really lacks the capabilities" 0 '~^CapEff:[[:space:]]+0+$' '' -- as_nobody grep CapEff /proc/self/status

# Refused before pass 1: the one line, and nothing compiled (the cache stays empty).
t "pass 5 of a syscall script" 1 '' "$NEED" -- as_nobody "$U" -e 'probe syscall.* { println(name) }'
t "pass 5 of a begin probe" 1 '' "$NEED" -- as_nobody "$U" -e 'probe begin { println(1); exit() }'
t "pass 5 with -c" 1 '' "$NEED" -- as_nobody "$U" -c /bin/true -e 'probe begin { println(1) }'
t "--profile" 1 '' "$NEED" -- as_nobody "$U" --profile -T 1
t "nothing was compiled" 0 '' '' -- find "$pub/cache" -mindepth 1

# What works unprivileged, as with stap.
t "-p1" 0 '~^probe syscall\.\*' '' -- as_nobody "$U" -p1 -e 'probe syscall.* { println(name) }'
t "-p2 of a begin probe" 0 '~^begin' '' -- as_nobody "$U" -p2 -e 'probe begin { println(1) }'
t "-p4 of a begin probe" 0 '~\.so$' '' -- as_nobody "$U" -p4 -e 'probe begin { println(1) }'
t "-l begin" 0 $'begin\n' '' -- as_nobody "$U" -l 'begin'
# Tracepoints need tracefs, closed to non-root: the reason, not "no match".
t "-p2 of a syscall script says root is needed" 1 '' \
  '~^semantic error: kernel.trace probes need tracefs: reading tracepoints needs root: /sys/kernel/tracing is not readable' \
  -- as_nobody "$U" -p2 -e 'probe syscall.read { println(1) }'
t "-l of tracepoints says root is needed" 1 '' \
  "ukstap: no match; tracepoints were not searched: reading tracepoints needs root: /sys/kernel/tracing is not readable by uid $uid (Permission denied)$NL" \
  -- as_nobody "$U" -l 'kernel.trace("sched:*")'
t_done
