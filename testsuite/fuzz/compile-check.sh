#!/bin/bash
# The differential check of the fuzz corpus: the generated C must compile for every input the
# front end accepts. libFuzzer cannot run clang per input (seconds each), so after the fuzz run
# this takes the corpus inputs that `ukstap -p2` accepts, drops those whose pass-3 C is the
# same as one already seen, and compiles the rest with `ukstap -p4` (the very clang commands of
# pass 4) into a fresh cache, until the time budget is spent. The inputs are replayed through
# -p3 at full size (libFuzzer truncates seeds to -max_len): an exit other than 0 or 1 (a crash,
# a hang) fails too. The first directory (the source tree's seeds) is always replayed whole;
# the others (libFuzzer's corpus, thousands of files) in a shuffled order while time remains.
#   compile-check.sh UKSTAP ARTIFACT_DIR SEED_DIR [CORPUS_DIR...]
#   UKSTAP_COMPILE_CHECK_TIME=SECONDS (default 50): the budget of the whole check
# Prints one line per failure and a summary; exit status 1 on any failure.
set -u
ukstap=$1 artifacts=$2
shift 2
budget=${UKSTAP_COMPILE_CHECK_TIME:-50}
work=$(mktemp -d "${TMPDIR:-/tmp}/ukstap-compile-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/cache
mkdir -p "$artifacts"

start=$SECONDS
accepted=0 compiled=0 failed=0 same=0 replayed=0 skipped=0
declare -A seen
shopt -s nullglob
first=1
for dir in "$@"; do
  files=("$dir"/*)
  [ $first = 1 ] || mapfile -t files < <(printf '%s\n' "${files[@]}" | shuf --random-source=<(yes))
  for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    case $f in *.expected) continue ;; esac
    if [ $first = 0 ] && [ $((SECONDS - start)) -ge "$budget" ]; then skipped=$((skipped + 1)); continue; fi
    replayed=$((replayed + 1))
    # Pass 3 at full size: exit 0 or 1 only (a signal is a crash; 124 a hang).
    rc=0
    timeout 20 "$ukstap" -p3 "$f" > "$work/c" 2> "$work/err" < /dev/null || rc=$?
    if [ "$rc" -gt 1 ]; then
      failed=$((failed + 1))
      cp "$f" "$artifacts/"
      echo "FAIL: ukstap -p3 $(basename "$f") exited with status $rc (copied to $artifacts/)"
      continue
    fi
    [ "$rc" = 0 ] || continue
    accepted=$((accepted + 1))
    sum=$(sed '/^#define STP_NPROBES/d' "$work/c" | md5sum | cut -c1-32)
    if [ -n "${seen[$sum]:-}" ]; then same=$((same + 1)); continue; fi
    seen[$sum]=1
    if [ $((SECONDS - start)) -ge "$budget" ]; then skipped=$((skipped + 1)); continue; fi
    rc=0
    timeout 120 "$ukstap" -p4 "$f" > /dev/null 2> "$work/err" < /dev/null || rc=$?
    compiled=$((compiled + 1))
    if [ "$rc" != 0 ]; then
      failed=$((failed + 1))
      cp "$f" "$artifacts/"
      echo "FAIL: $(basename "$f"): pass 3 accepted it but its C does not compile (status $rc):"
      grep -m 3 -E 'error|failed' "$work/err" | sed 's/^/    /'
    fi
  done
  first=0
done
echo "compile-check: $replayed inputs replayed through -p3, $accepted accepted, $same with C" \
     "already seen, $compiled compiled with -p4, $skipped left for lack of time," \
     "$failed failed, in $((SECONDS - start)) s"
[ "$failed" = 0 ]
