#!/bin/bash
# Runs the end-to-end tests: every testsuite/SUITE/*.sh of each SUITE named in the arguments
# (default: e2e; run-robustness.sh passes "robustness", make check's run-e2e-robustness.sh both,
# in one pool). An argument that is a script (PATH.sh: make check passes testsuite/run-vm.sh) is
# one more script of the pool, started before all others; its exit status 77 with no summary is
# a skip. Each script prints PASS/FAIL lines and a closing "N passed, N failed"; this runner
# adds them up and prints its own closing line.
#
# Two scripts run at a time (UKSTAP_E2E_JOBS, default 2): most of a script's time is spent
# waiting (for a -c target, a -T timeout, a compile on one core), and each test filters by its
# own pids, files and targets. A script that must not share the machine with another one of
# the pool (it loads the whole machine, or samples or counts system-wide) says so in a line
#   # e2e-schedule: alone
# and runs while no other script of the pool does. A line `# e2e-schedule: first` marks the
# long scripts, started before the others so that the last minute is not one long script on
# one core. Each script's output is printed in one piece when it ends, with its wall and CPU
# seconds.
#
# The scripts share one ukstap cache, made for this run and removed with it (UKSTAP_TEST_CACHE,
# e2e-lib.sh's T_CACHE): a module or an unwind table compiled by one script serves the others
# (a module's key hashes the generated C, the runtime's files, the compilers' versions and the
# -D flags; a table's, the ELF file's content). Fresh for each run, never kept: pass 4's own
# compiler flags are not in the key, so a cache kept across builds could serve an object an
# older ukstap compiled. A script whose test is about the cache or a cold start uses a cache of
# its own.
set -u
suites=("${@:-e2e}")
suite_label=$(for s in "${suites[@]}"; do basename "$s" .sh | sed "s/^run-//"; done | paste -sd+)
: "${UKSTAP_TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${UKSTAP_TOP_BUILDDIR:=$UKSTAP_TOP_SRCDIR}"
: "${UKSTAP:=$UKSTAP_TOP_BUILDDIR/ukstap}"
export UKSTAP UKSTAP_TOP_SRCDIR UKSTAP_TOP_BUILDDIR
jobs=${UKSTAP_E2E_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || jobs=1

if [ ! -x "$UKSTAP" ]; then
  echo "run-$suite_label: $UKSTAP is not built"
  echo "0 passed, 1 failed"
  exit 1
fi

out_dir=$(mktemp -d "${TMPDIR:-/tmp}/ukstap-run-$suite_label.XXXXXX")
mkdir "$out_dir/cache"
export UKSTAP_TEST_CACHE=$out_dir/cache
declare -A running=()  # pid -> script name
stop() {  # on exit: the scripts still running (interrupted) are ended, with their shells
  local pid
  for pid in "${!running[@]}"; do pkill -TERM -P "$pid" 2>/dev/null; kill -- "$pid" 2>/dev/null; done
  rm -rf "$out_dir"
}
trap stop EXIT
trap 'exit 130' INT TERM

schedule() { sed -n 's/^# e2e-schedule: *\([a-z]*\).*/\1/p' "$1" | head -n 1; }
lead=() alone=() first=() rest=()
for suite in "${suites[@]}"; do
  if [[ $suite == *.sh ]]; then lead+=("$suite"); continue; fi
  for test in "$UKSTAP_TOP_SRCDIR"/testsuite/$suite/*.sh; do
    [ -e "$test" ] || continue
    case $(schedule "$test") in
      alone) alone+=("$test") ;;
      first) first+=("$test") ;;
      *) rest+=("$test") ;;
    esac
  done
done

passed=0 failed=0
# cpu_secs FILE: the children's user+sys seconds in FILE (the output of bash's `times`, whose
# second line is "XmY.YYYs XmY.YYYs"; a builtin redirected to a file, not piped: a pipeline's
# subshell would report its own children, none).
cpu_secs() { sed -n '2{s/[ms]/ /g;p}' "$1" | awk '{printf "%.1f", $1*60+$2+$3*60+$4}'; }
report() {  # report NAME: print a finished script's output and add up its counts
  local name=$1 rc out last
  rc=$(cat "$out_dir/$name.rc")
  out=$(cat "$out_dir/$name.out")
  echo "=== $name"
  printf '%s\n' "$out"
  # Each script's wall and CPU time, for make check's 5-minute budget (not an assertion).
  echo "--- $name: $(cat "$out_dir/$name.secs") s, $(cpu_secs "$out_dir/$name.times") s CPU"
  last=$(printf '%s\n' "$out" | tail -n 1)
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    if [ "$rc" != 0 ] && [ "${BASH_REMATCH[2]}" = 0 ]; then failed=$((failed + 1)); echo "FAIL: $name exited $rc"; fi
  elif [ "$rc" = 77 ]; then
    echo "SKIP: $name (exit status 77)"
  else
    failed=$((failed + 1))
    echo "FAIL: $name ended without a summary (exit status $rc)"
  fi
}
start() {  # start SCRIPT: run it in the background, its output and status into $out_dir
  local test=$1 name
  name=$(basename "$test" .sh)
  # Named by its suite too when the pool has several (robustness.signals).
  [ ${#suites[@]} = 1 ] || [[ $name == run-* ]] || name=$(basename "$(dirname "$test")").$name
  (
    t0=$SECONDS
    bash "$test" > "$out_dir/$name.out" 2>&1
    echo $? > "$out_dir/$name.rc"
    echo $((SECONDS - t0)) > "$out_dir/$name.secs"
    # CPU seconds (user+sys) of the script and every process it waited for: on a shared or
    # loaded machine these, not the wall time, say what a script costs.
    times > "$out_dir/$name.times"
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
# The lead scripts (the 6.1 guest: a qemu process of its own, not another script tracing this
# machine) run beside the `alone` ones, as they did in make's other job slot.
alone_done() { local pid; for pid in "${!running[@]}"; do [ "${running[$pid]}" != "$1" ] || return 1; done; }

t_start=$SECONDS
for test in "${lead[@]}"; do start "$test"; done
for test in "${alone[@]}"; do
  start "$test"
  a=${running[$!]}
  until alone_done "$a"; do wait_one; done
done
for test in "${first[@]}" "${rest[@]}"; do
  while [ ${#running[@]} -ge "$jobs" ]; do wait_one; done
  start "$test"
done
drain
times > "$out_dir/times"
cpu=$(cpu_secs "$out_dir/times")
echo "--- run-$suite_label: $((SECONDS - t_start)) s, $cpu s CPU, $jobs at a time"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
