#!/bin/bash
# Runs the end-to-end tests: every testsuite/SUITE/*.sh (SUITE: the first argument, default e2e;
# run-robustness.sh passes "robustness"). Each prints PASS/FAIL lines and a closing
# "N passed, N failed"; this runner adds them up and prints its own closing line.
#
# Two scripts run at a time (UKSTAP_E2E_JOBS, default 2): most of a script's time is spent
# waiting (for a -c target, a -T timeout, a compile on one core), and each test filters by its
# own pids, files and targets. A script that must not share the machine with another one of
# the suite (it loads the whole machine, or samples or counts system-wide) says so in a line
#   # e2e-schedule: alone
# and runs while no other script of the suite does. A line `# e2e-schedule: first` marks the
# long scripts, started before the others so that the last minute is not one long script on
# one core. Each script's output is printed in one piece when it ends.
set -u
suite=${1:-e2e}
: "${UKSTAP_TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${UKSTAP_TOP_BUILDDIR:=$UKSTAP_TOP_SRCDIR}"
: "${UKSTAP:=$UKSTAP_TOP_BUILDDIR/ukstap}"
export UKSTAP UKSTAP_TOP_SRCDIR UKSTAP_TOP_BUILDDIR
jobs=${UKSTAP_E2E_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || jobs=1

if [ ! -x "$UKSTAP" ]; then
  echo "run-$suite: $UKSTAP is not built"
  echo "0 passed, 1 failed"
  exit 1
fi

out_dir=$(mktemp -d "${TMPDIR:-/tmp}/ukstap-run-$suite.XXXXXX")
declare -A running=()  # pid -> script name
stop() {  # on exit: the scripts still running (interrupted) are ended, with their shells
  local pid
  for pid in "${!running[@]}"; do pkill -TERM -P "$pid" 2>/dev/null; kill -- "$pid" 2>/dev/null; done
  rm -rf "$out_dir"
}
trap stop EXIT
trap 'exit 130' INT TERM

schedule() { sed -n 's/^# e2e-schedule: *\([a-z]*\).*/\1/p' "$1" | head -n 1; }
alone=() first=() rest=()
for test in "$UKSTAP_TOP_SRCDIR"/testsuite/$suite/*.sh; do
  [ -e "$test" ] || continue
  case $(schedule "$test") in
    alone) alone+=("$test") ;;
    first) first+=("$test") ;;
    *) rest+=("$test") ;;
  esac
done

passed=0 failed=0
report() {  # report NAME: print a finished script's output and add up its counts
  local name=$1 rc out last
  rc=$(cat "$out_dir/$name.rc")
  out=$(cat "$out_dir/$name.out")
  echo "=== $name"
  printf '%s\n' "$out"
  # Each script's wall time, for make check's 10-minute budget (not an assertion).
  echo "--- $name: $(cat "$out_dir/$name.secs") s"
  last=$(printf '%s\n' "$out" | tail -n 1)
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    if [ "$rc" != 0 ] && [ "${BASH_REMATCH[2]}" = 0 ]; then failed=$((failed + 1)); echo "FAIL: $name exited $rc"; fi
  else
    failed=$((failed + 1))
    echo "FAIL: $name ended without a summary (exit status $rc)"
  fi
}
start() {  # start SCRIPT: run it in the background, its output and status into $out_dir
  local test=$1 name
  name=$(basename "$test" .sh)
  (
    t0=$SECONDS
    bash "$test" > "$out_dir/$name.out" 2>&1
    echo $? > "$out_dir/$name.rc"
    echo $((SECONDS - t0)) > "$out_dir/$name.secs"
  ) < /dev/null &
  running[$!]=$name
}
wait_one() {  # wait for one running script to end and report it
  local pid
  wait -n -p pid "${!running[@]}"
  report "${running[$pid]}"
  unset "running[$pid]"
}
drain() { while [ ${#running[@]} -gt 0 ]; do wait_one; done; }

t_start=$SECONDS
for test in "${alone[@]}"; do start "$test"; drain; done
for test in "${first[@]}" "${rest[@]}"; do
  while [ ${#running[@]} -ge "$jobs" ]; do wait_one; done
  start "$test"
done
drain
echo "--- run-$suite: $((SECONDS - t_start)) s, $jobs at a time"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
