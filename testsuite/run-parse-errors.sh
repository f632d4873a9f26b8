#!/bin/bash
# The parse-error corpus: for every testsuite/parse-errors/NAME.stp, `ukstap -p1 NAME.stp` run
# from that directory must write exactly NAME.expected to stderr, and exit 1 when that has a
# "Pass N: ... failed." line (else 0). NAME.args, when present, holds the options used instead
# of -p1 (e.g. `-p2` for an error of symbol resolution, `-g -p2` for embedded C).
set -u
: "${UKSTAP_TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${UKSTAP_TOP_BUILDDIR:=$UKSTAP_TOP_SRCDIR}"
: "${UKSTAP:=$UKSTAP_TOP_BUILDDIR/ukstap}"
export LC_ALL=C
dir=$UKSTAP_TOP_SRCDIR/testsuite/parse-errors

if [ ! -x "$UKSTAP" ]; then
  echo "run-parse-errors: $UKSTAP is not built"
  echo "0 passed, 1 failed"
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ukstap-pe.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
shopt -s nullglob
for stp in "$dir"/*.stp; do
  name=$(basename "$stp" .stp)
  expected=$dir/$name.expected
  if [ ! -f "$expected" ]; then
    echo "FAIL: $name (no $name.expected)"
    failed=$((failed + 1))
    continue
  fi
  opts=(-p1)
  [ -f "$dir/$name.args" ] && read -r -a opts < "$dir/$name.args"
  rc=0
  (cd "$dir" && "$UKSTAP" "${opts[@]}" "$name.stp" > /dev/null 2> "$tmp/err" < /dev/null) || rc=$?
  want_rc=0
  grep -q '^Pass [0-9]: .* failed\.' "$expected" && want_rc=1
  if cmp -s "$expected" "$tmp/err" && [ "$rc" = "$want_rc" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $name (exit status $rc)"
    diff -u --label "$name.expected" --label "stderr" "$expected" "$tmp/err" | head -n 40
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
