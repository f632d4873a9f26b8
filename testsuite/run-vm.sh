#!/bin/bash
# make check's runs in the test bed (testsuite/vm/run: Debian 12's own 6.1 kernel under qemu):
# the bed's own checks and testsuite/vm/subset.sh's cases, in one guest; a timeout that kills a
# second one while it boots, and a few runs that boot nothing. `make check-vm` runs the whole e2e
# suite in the guest instead.
# Without the bed (no qemu, no extracted kernel: scripts/install-deps) this is a visible skip;
# under CI=true a failure, never a skip.
. "$(dirname "$0")/e2e-lib.sh"
VM=$UKSTAP_TOP_SRCDIR/testsuite/vm/run
NL=$'\n'

if ! "$VM" --check 2> "$T_TMP/check.err"; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: the test bed cannot run: $(cat "$T_TMP/check.err")"; T_FAILED=1; t_done; exit
  fi
  echo "SKIP: the test bed cannot run: $(cat "$T_TMP/check.err")"
  exit 77
fi
t_require_root || { t_done; exit; }

# A host directory: ro/ is seen by the guest through the read-only root (its writes stay in
# the guest), rw/ is shared writable (-w). A fixed path: the subset's
# scripts name split_prog by its path, and the same script text is what lets the guest's ukstap
# cache serve the next make check (a mktemp name compiled every case again: 75 s for one).
W=$UKSTAP_TOP_BUILDDIR/testsuite/vm-work
rm -rf "$W"
mkdir -p "$W/ro" "$W/rw" || { echo "FAIL: cannot create $W"; exit 1; }
trap 'rm -rf "$W" "$T_TMP"' EXIT
if ! gcc -O2 -fomit-frame-pointer -o "$W/split_prog" "$UKSTAP_TOP_SRCDIR/testsuite/e2e/progs/split_prog.c" 2> "$T_TMP/gcc.err"; then
  echo "FAIL: cannot build split_prog"; cat "$T_TMP/gcc.err"; T_FAILED=1; t_done; exit
fi

# --- the bed itself, without a guest: bad input is one line and status 125
t "bed: qemu missing" 125 '' $'vm: /nonexistent/qemu-system-x86_64 not found (scripts/install-deps installs qemu-system-x86)\n' -- \
  env UKSTAP_VM_QEMU=/nonexistent/qemu-system-x86_64 "$VM" true
t "bed: kernel package missing" 125 '' '~^vm: no Debian 6.1 kernel in /nonexistent/k \(boot/vmlinuz-6.1.0-\*-amd64\): run scripts/install-deps' -- \
  "$VM" -k /nonexistent/k true
# The state directory (the initramfs the guest boots as root, a share it writes) under a directory
# others can write: refused, nothing booted. Truth: the mode chmod set.
mkdir -m 777 "$T_TMP/open" && chmod 777 "$T_TMP/open"
t "bed: a state directory others could swap is refused" 125 '' \
  "vm: refusing the state directory $T_TMP/open/st: $T_TMP/open is writable by group or others (mode 777)$NL" -- \
  env UKSTAP_VM_STATE="$T_TMP/open/st" "$VM" true

# --- the timeout: the guest is killed (here while it boots: 1 s of qemu), one line, status 124
t "bed: a timeout kills the guest, one line" 124 '' $'vm: timed out after 1 s: the guest was killed (command: sleep 1000)\n' -- \
  "$VM" -C 1 -t 1 -- sleep 1000

# --- the compile server (testsuite/vm/compile-server, host-compile), on the host alone: what
# the subset's guest relies on (testsuite/vm/run-host-tools). Truths: ukstap's own compile of the same module (its cache key
# names the directory, sha256sum the bytes), the file system after the server ran.
make_var() { sed -n "s/^$1 = //p" "$UKSTAP_TOP_BUILDDIR/Makefile" 2>/dev/null; }
export T_VM_BPF_CLANG=${UKSTAP_BPF_CLANG:-$(make_var BPF_CLANG)} T_VM_CC=${UKSTAP_CC:-cc}
export T_VM_BPFTOOL=${UKSTAP_BPFTOOL:-$(make_var BPFTOOL)}
: "${T_VM_BPF_CLANG:=clang-14}" "${T_VM_BPFTOOL:=bpftool}"
C=$T_TMP/cs
mkdir -p "$C/jobs" "$C/private" "$C/bin" "$C/own" "$C/served" "$C/src" "$C/elsewhere" "$C/victim" && chmod 700 "$C/private"
for tool in clang cc bpftool; do cp "$UKSTAP_TOP_SRCDIR/testsuite/vm/host-compile" "$C/bin/$tool"; done
"$UKSTAP_TOP_SRCDIR/testsuite/vm/compile-server" "$C/jobs" "$C/private" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$W" "$T_TMP"' EXIT
prog='global n; probe syscall.getpid { n++ } probe end { printf("%d\n", n) }'
t "compile server: a module compiled through it (BPF, native, vmlinux.h) is ukstap's own, bytes and key" 0 \
  $'bpftool 0\ncc 0\nclang 0\n' '' -- bash -c '
  XDG_CACHE_HOME=$1/own "$UKSTAP" -p4 -e "$2" > /dev/null || exit
  T_VM_JOBS=$1/jobs UKSTAP_BPF_CLANG=$1/bin/clang UKSTAP_CC=$1/bin/cc UKSTAP_BPFTOOL=$1/bin/bpftool \
    XDG_CACHE_HOME=$1/served "$UKSTAP" -p4 -e "$2" > /dev/null || exit
  sort -u "$1/private/served"; ls "$1/jobs"/local.* 2> /dev/null
  sums() { cd "$1" && find . -type f ! -path "./compilers/*" | sort | xargs sha256sum; }
  diff <(sums "$1/own/ukstap") <(sums "$1/served/ukstap")' \
  _ "$C" "$prog"
# An argument pass 4 never passes (here an output outside the job): refused, the tool runs where
# it was called (the guest), and local.ID says why.
echo 'int x;' > "$C/src/a.c"
t "compile server: an argument pass 4 never passes is refused; the tool runs in the caller" 0 \
  "~^cc: refused by the host: output $C/elsewhere/a.so\$" '' -- bash -c '
  T_VM_JOBS=$1/jobs "$1/bin/cc" -fPIC -shared "$1/src/a.c" -o "$1/elsewhere/a.so" && test -s "$1/elsewhere/a.so" && cat "$1/jobs"/local.*' _ "$C"
# A job directory that is a link (here to a directory holding a valid job): refused, nothing
# written through the link.
mkdir "$C/victim/job"
printf 'cc\n' > "$C/victim/job/tool"
printf '%s\0' --version > "$C/victim/job/argv"
: > "$C/victim/job/ready"
ln -s "$C/victim/job" "$C/jobs/job.link1"
t "compile server: a job directory that is a link is refused, nothing written through it" 0 $'refused\nargv\nready\ntool\n' '' -- bash -c '
  for i in $(seq 100); do [ -e "$1/jobs/ans.link1.status" ] && break; sleep 0.1; done
  cat "$1/jobs/ans.link1.status"; ls "$1/victim/job"' _ "$C"
kill $server 2>/dev/null
wait $server 2>/dev/null

# --- one guest: the bed's own checks (status, stdout/stderr, uname, cwd, variables, the
# read-only root, /tmp, the writable share), then the subset (testsuite/vm/subset.sh).
# One boot for both: a boot under TCG is ~7 CPU s of make check. One vCPU (-C 1): under TCG
# the second one cost this script 64 CPU s against 37 (two runs side by side, 2026-11-26). The bed's command prints its
# lines first, then runs the subset with its output and status into the writable share
# (rw/subset.*, read by the host after the guest is gone), then exits 7: a subset that hangs or
# crashes the guest fails "exit 7" and the subset's own line, not the bed's other checks.
# Truths (the bed's): the kernel package's file name (the version booted), the host's $PWD and
# variables, seq on the host (the complete output), the host's view of ro/ and rw/ after the
# guest is gone.
# The subset's pass-4 compiles (and vmlinux.h's bpftool dump) run on the host
# (testsuite/vm/run-host-tools: under TCG they were ~80% of the subset's time with a cold guest
# cache, as in CI). The guest's ukstap still generates the C from its 6.1 kernel, keys, installs
# and checks the objects itself. Its -v line says where the tools ran; each tool run in the
# guest costs make check tens of seconds (a refused argument, a PCH command), so none may.
kver=$(ls "${UKSTAP_VM_KERNEL:-/var/lib/ukstap/vm-kernel}"/boot/vmlinuz-6.1.0-*-amd64 | sort -V | tail -n 1)
kver=${kver##*/vmlinuz-}
t0=$SECONDS
rc=0
export T_VM_PASSED='a b$c' VM_NOT_PASSED=x
T_VM_SPLIT=$W/split_prog "$UKSTAP_TOP_SRCDIR/testsuite/vm/run-host-tools" -v -C 1 -w "$W/rw" -t 900 -- bash -c '
  echo out-first; echo err-first >&2; uname -r; pwd; echo "${T_VM_PASSED-unset}|${VM_NOT_PASSED-unset}"
  cat <(echo process-substitution)
  echo x > "$1/ro/written" && cat "$1/ro/written"
  echo y > /tmp/f && cat /tmp/f
  echo z > "$1/rw/out"
  seq 1 20000; echo err-last >&2
  bash "$2" > "$1/rw/subset.out" 2> "$1/rw/subset.err"; echo $? > "$1/rw/subset.rc"
  exit 7' _ "$W" "$UKSTAP_TOP_SRCDIR/testsuite/vm/subset.sh" > "$T_TMP/b.out" 2> "$T_TMP/b.err" || rc=$?
cat "$W/rw/subset.out" "$W/rw/subset.err" 2> /dev/null
echo "--- one guest (the bed's checks and the subset): $((SECONDS - t0)) s"
grep '^vm: ' "$T_TMP/b.err" | sed 's/^/  /'
grep -v '^vm: ' "$T_TMP/b.err" > "$T_TMP/b.cmderr"
seq 1 20000 > "$T_TMP/seq"
t "bed: exit 7 comes back as 7" 0 $'7\n' '' -- echo "$rc"
t "bed: stdout, in order and complete; cwd; T_* passed, others not; /dev/fd" 0 "out-first${NL}$kver${NL}$PWD${NL}a b\$c|unset${NL}process-substitution${NL}x${NL}y${NL}$(cat "$T_TMP/seq")${NL}" '' -- cat "$T_TMP/b.out"
t "bed: stderr, apart from stdout" 0 $'err-first\nerr-last\n' '' -- cat "$T_TMP/b.cmderr"
t "bed: the guest's write under / never reaches the host" 1 '' '' -- test -e "$W/ro/written"
t "bed: the writable share's file reaches the host" 0 $'z\n' '' -- cat "$W/rw/out"
t "subset: every pass-4 tool ran on the host (in the guest: 0)" 0 '' '' -- \
  grep -q '^vm: tools run on the host: .*; in the guest: 0$' "$T_TMP/b.err"
last=$(tail -n 1 "$W/rw/subset.out" 2> /dev/null)
src=$(cat "$W/rw/subset.rc" 2> /dev/null)
if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
  T_PASSED=$((T_PASSED + BASH_REMATCH[1]))
  T_FAILED=$((T_FAILED + BASH_REMATCH[2]))
  if [ "${BASH_REMATCH[2]}" = 0 ] && [ "$src" != 0 ]; then echo "FAIL: the subset exited ${src:-without a status}"; T_FAILED=$((T_FAILED + 1)); fi
else
  echo "FAIL: the subset ended without a summary (exit status ${src:-none}; the guest's $rc)"; T_FAILED=$((T_FAILED + 1))
fi
t_done
