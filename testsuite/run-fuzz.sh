#!/bin/bash
# libFuzzer smoke run of the front end (testsuite/fuzz/fuzz_frontend.cpp) for a bounded time.
# Seeds: testsuite/fuzz/corpus/, the parse-error scripts (testsuite/parse-errors/*.stp, whose
# expected errors are checked by run-parse-errors.sh) and a few real tapset files; the language's
# keywords and operators come from testsuite/fuzz/stap.dict. New inputs go to a scratch corpus in
# the build tree, never into the source tree. Fails on a crash, a sanitizer report, a leak, or
# an input that takes longer than 5 s. The target runs passes 1-3 with a structure-aware
# mutator (deep nesting, long chains); whether the C compiles is the differential check that
# follows the run: testsuite/fuzz/compile-check.sh compiles (ukstap -p4) the corpus inputs
# ukstap accepts, within UKSTAP_COMPILE_CHECK_TIME seconds (default 50).
#   UKSTAP_FUZZ_TIME=SECONDS (default 60; 0 skips the run)
set -u
: "${UKSTAP_TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${UKSTAP_TOP_BUILDDIR:=$UKSTAP_TOP_SRCDIR}"
: "${UKSTAP_FUZZ:=$UKSTAP_TOP_BUILDDIR/testsuite/fuzz/fuzz_frontend}"
: "${UKSTAP_FUZZ_TIME:=60}"

if [ "$UKSTAP_FUZZ_TIME" = 0 ]; then
  echo "fuzz run skipped (FUZZ_TIME=0)"
  echo "0 passed, 0 failed"
  exit 77
fi
if [ -f "$UKSTAP_TOP_BUILDDIR/fuzz-build.failed" ]; then
  echo "FAIL: the fuzz target did not build (clang++ -fsanitize=fuzzer,address):"
  grep -E 'error|Error' "$UKSTAP_TOP_BUILDDIR/fuzz-build.log" | head -n 20
  echo "0 passed, 1 failed"
  exit 1
fi
if [ ! -x "$UKSTAP_FUZZ" ]; then
  echo "run-fuzz: $UKSTAP_FUZZ is not built (make fuzz)"
  echo "0 passed, 1 failed"
  exit 1
fi

work=$UKSTAP_TOP_BUILDDIR/fuzz-work
rm -rf "$work/corpus" "$work/seeds"
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
# libFuzzer takes corpus directories: copy the seed files into one.
src=$UKSTAP_TOP_SRCDIR
for f in "$src"/testsuite/fuzz/corpus/*.stp "$src"/testsuite/parse-errors/*.stp \
         "$src"/tapsets/syscalls/files.stp "$src"/tapsets/syscalls/any.stp \
         "$src"/tapsets/syscalls/syscalls.stpm "$src"/tapsets/context.stp \
         "$src"/tapsets/logging.stp "$src"/tapsets/conversions.stp "$src"/tapsets/errno.stp; do
  [ -f "$f" ] && cp "$f" "$work/seeds/$(basename "$(dirname "$f")")-$(basename "$f")"
done
dict=()
[ -f "$src/testsuite/fuzz/stap.dict" ] && dict=(-dict="$src/testsuite/fuzz/stap.dict")
rc=0
"$UKSTAP_FUZZ" -max_total_time="$UKSTAP_FUZZ_TIME" -max_len=16384 -timeout=5 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" "${dict[@]}" \
  "$work/corpus" "$work/seeds" > "$work/fuzz.log" 2>&1 || rc=$?
if [ $rc = 0 ]; then
  grep -E '^#[0-9]+ +(INITED|DONE)|^(Dictionary|stat::)|^fuzz_frontend' "$work/fuzz.log" | tail -n 20
  if [ ! -x "$UKSTAP_TOP_BUILDDIR/ukstap" ]; then
    echo "FAIL: $UKSTAP_TOP_BUILDDIR/ukstap is not built: no compile check"
    echo "1 passed, 1 failed"
    exit 1
  fi
  # The seeds of the source tree first (whole, untruncated), then what the run found.
  if bash "$src/testsuite/fuzz/compile-check.sh" "$UKSTAP_TOP_BUILDDIR/ukstap" "$work/artifacts" \
       "$src/testsuite/fuzz/corpus" "$work/corpus" "$work/seeds"; then
    echo "2 passed, 0 failed"
    exit 0
  fi
  echo "FAIL: generated C that does not compile, or a crash outside libFuzzer (inputs in $work/artifacts/)"
  echo "1 passed, 1 failed"
  exit 1
fi
tail -n 60 "$work/fuzz.log"
echo "FAIL: the fuzzer stopped with status $rc; reproducer(s):"
ls -l "$work/artifacts/" 2>/dev/null
echo "full log: $work/fuzz.log; rerun one input with: $UKSTAP_FUZZ ARTIFACT"
echo "0 passed, 1 failed"
exit 1
