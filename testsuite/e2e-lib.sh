# Helpers for the end-to-end tests in testsuite/e2e/*.sh (sourced, bash).
#
#   t NAME STATUS STDOUT STDERR [--stdin TEXT] -- CMD ARGS...
#
# runs CMD and compares its exit status and its stdout and stderr. An expected text is compared
# byte for byte (write it with $'...\n'), or:
#   '*'        anything
#   '~REGEX'   some line matches the extended REGEX
#   '$TEXT'    the last line is exactly TEXT
#
#   t_xfail REASON NAME STATUS STDOUT STDERR ... -- CMD ARGS...
#
# is a check of a known bug: its failure prints "XFAIL: NAME (REASON)" and counts as passed; its
# success prints "XPASS" and counts as failed, so that the mark is removed with the bug.
# Finish with `t_done`, which prints "N passed, N failed" and sets the exit status.

: "${UKSTAP_TOP_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${UKSTAP_TOP_BUILDDIR:=$UKSTAP_TOP_SRCDIR}"
: "${UKSTAP:=$UKSTAP_TOP_BUILDDIR/ukstap}"
export LC_ALL=C

T_PASSED=0
T_FAILED=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ukstap-e2e.XXXXXX")
trap 'rm -rf "$T_TMP"' EXIT
# T_CACHE: the ukstap cache (XDG_CACHE_HOME) of a script's runs. Under run-e2e.sh the cache of
# the whole run, shared by its scripts (UKSTAP_TEST_CACHE: made fresh for the run, so every
# object in it was compiled by this ukstap from this tree; a module's key hashes its C, the
# runtime, the compilers and the -D flags, a table's the ELF file's content); run alone, the
# script's own. A script whose test is about the cache or a cold start sets a cache of its own.
T_CACHE=${UKSTAP_TEST_CACHE:-$T_TMP/cache}

t_match() {  # t_match EXPECTED FILE
  local want=$1 file=$2
  case $want in
    '*') return 0 ;;
    '~'*) grep -Eq -- "${want#\~}" "$file" ;;
    '$'*) [ "$(tail -n 1 "$file")" = "${want#\$}" ] ;;
    *) printf '%s' "$want" > "$T_TMP/want"; cmp -s "$T_TMP/want" "$file" ;;
  esac
}

t_show() {  # t_show LABEL EXPECTED FILE
  printf '  %s expected: %s\n' "$1" "$(printf '%s' "$2" | sed -n l | head -n 10)"
  printf '  %s got:      %s\n' "$1" "$(sed -n l "$3" | head -n 10)"
}

# UKSTAP_E2E_TIMES=FILE: each check appends a line "SCRIPT<TAB>NAME<TAB>wall<TAB>CPU<TAB>wall
# before<TAB>CPU before" to FILE: its own wall and CPU (user+sys of its children) seconds, and
# those spent since the previous check ended (building, strace, ...). Where a suite's time goes;
# never an assertion.
T_TIMES_SCRIPT=$(basename "$0" .sh)
t_times_mark() {  # t_times_mark N: this shell's children's CPU and the wall clock into mark N
  times > "$T_TMP/times.$1"
  echo "$EPOCHREALTIME" >> "$T_TMP/times.$1"
}
[ -n "${UKSTAP_E2E_TIMES:-}" ] && t_times_mark end
t_times_log() {  # t_times_log NAME: after a check (marks start and end), its line
  local prev=$T_TMP/times.end
  t_times_mark end
  awk -v s="$T_TIMES_SCRIPT" -v n="$1" '
    FNR == 1 { f++ }
    FNR == 2 { gsub(/[ms]/, " "); split($0, a, " "); c[f] = a[1] * 60 + a[2] + a[3] * 60 + a[4] }
    FNR == 3 { w[f] = $1 }
    END { printf "%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\n", s, n, w[3] - w[2], c[3] - c[2], w[2] - w[1], c[2] - c[1] }' \
    "$T_TMP/times.prev" "$T_TMP/times.start" "$T_TMP/times.end" >> "$UKSTAP_E2E_TIMES"
}

t() {
  local name=$1 want_rc=$2 want_out=$3 want_err=$4 stdin=
  shift 4
  if [ -n "${UKSTAP_E2E_TIMES:-}" ]; then cp "$T_TMP/times.end" "$T_TMP/times.prev" 2>/dev/null; t_times_mark start; fi
  if [ "${1:-}" = --stdin ]; then stdin=$2; shift 2; fi
  [ "${1:-}" = -- ] && shift
  local rc=0
  printf '%s' "$stdin" | "$@" > "$T_TMP/out" 2> "$T_TMP/err" || rc=$?
  # The VMA tracker sees the whole machine's mmaps: when other tests churn processes beside this
  # one (make -j, a loaded CI machine) its side-band ring can overflow and ukstap rightly warns.
  # That says the machine was busy, not what the check is about: a check that expects no such
  # line does not see it (its stdout still has to be right; the robustness suite tests the
  # warning itself).
  case $want_err in
    *'lost VMA'*) ;;
    *) sed -i '/^WARNING: Number of lost VMA side-band records: [0-9]* (mappings made then are unknown: their stacks may not symbolize)$/d' "$T_TMP/err" ;;
  esac
  local ok=1
  [ "$rc" = "$want_rc" ] || ok=0
  t_match "$want_out" "$T_TMP/out" || ok=0
  t_match "$want_err" "$T_TMP/err" || ok=0
  if [ $ok = 1 ]; then
    T_PASSED=$((T_PASSED + 1))
    echo "PASS: $name"
  else
    T_FAILED=$((T_FAILED + 1))
    echo "FAIL: $name"
    echo "  command: $*"
    [ "$rc" = "$want_rc" ] || echo "  exit status: expected $want_rc, got $rc"
    t_match "$want_out" "$T_TMP/out" || t_show stdout "$want_out" "$T_TMP/out"
    t_match "$want_err" "$T_TMP/err" || t_show stderr "$want_err" "$T_TMP/err"
  fi
  [ -z "${UKSTAP_E2E_TIMES:-}" ] || t_times_log "$name"
}

# t_skip_line FILE: FILE (a run's stderr) is SystemTap's exit line for probe runs that did not
# happen and nothing else: "WARNING: Number of errors: 0, skipped probes: N", N > 0. The kernel
# itself skips a BPF program's run on a CPU where it (tp_btf, raw_tp) or any kprobe-style
# program (tracepoint, perf_event) is already running, and ukstap reports those runs
# (bpf_prog_info.recursion_misses, loader/exit_report.h): a check of a probe that fires on
# every event of the machine, or at IRQ rate, accepts this line where it would accept nothing.
T_SKIP_LINE='WARNING: Number of errors: 0, skipped probes: [1-9][0-9]*'
t_skip_line() { [ "$(wc -l < "$1")" = 1 ] && grep -Eqx "$T_SKIP_LINE" "$1"; }
# t_empty_or_skip_line FILE: FILE is empty, or only that line.
t_empty_or_skip_line() { [ ! -s "$1" ] || t_skip_line "$1"; }

t_xfail() {
  local reason=$1 name=$2 passed=$T_PASSED failed=$T_FAILED
  shift
  t "$@" > "$T_TMP/xfail.out"
  if [ "$T_FAILED" != "$failed" ]; then
    T_FAILED=$failed
    echo "XFAIL: $name ($reason)"
    sed -n '2,$p' "$T_TMP/xfail.out"
  else
    T_PASSED=$passed
    T_FAILED=$((T_FAILED + 1))
    echo "FAIL: XPASS: $name: passes now; make it a plain t (was: $reason)"
  fi
}

t_done() {
  echo "$T_PASSED passed, $T_FAILED failed"
  [ "$T_FAILED" = 0 ]
}

# t_skip REASON: a check that cannot run here. Outside CI it is skipped visibly; under CI=true
# (a machine with every dependency installed) it is a failure, never a skip.
t_skip() {
  if [ -n "${CI:-}" ]; then echo "FAIL: $1 (a skip is a failure under CI=true)"; T_FAILED=1
  else echo "SKIP: $1"; fi
}

# t_require_root: the BPF tests need root. Outside CI a non-root run skips visibly; under
# CI=true it is a failure, never a skip. Returns non-zero when the caller must stop.
t_require_root() {
  [ "$(id -u)" = 0 ] && return 0
  local name; name=$(basename "$0")
  if [ -n "${CI:-}" ]; then echo "FAIL: $name needs root in CI"; T_FAILED=1
  else echo "SKIP: $name needs root (BPF); rerun as root"; fi
  return 1
}

# t_build NAME COMPILER ARGS...: builds a test program; on failure a FAIL line naming NAME
# with the compiler's messages, T_FAILED set, status 1 (the caller then ends: nothing to trace).
t_build() {
  local name=$1; shift
  if ! "$@" 2> "$T_TMP/build.err"; then
    echo "FAIL: cannot build $name"; cat "$T_TMP/build.err"; T_FAILED=1; return 1
  fi
}
