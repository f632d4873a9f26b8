#!/bin/bash
# backtrace() cut at MAXSTRINGLEN keeps whole "0x… " entries (runtime/bpf/stp_bpf_kstack.h), as
# ubacktrace() does: a fragment would read back (print_stack, strtol) as another address.
# SystemTap's runtime cuts the copied text at MAXSTRINGLEN - 1 bytes, mid-address; ukstap departs
# from it there. MAXSTRINGLEN=32 holds one kernel address (19 bytes with the space) of the
# syscall entry path's 4 or more (3 or more for callers(), which skips the first). Truth: /proc/kallsyms (every entry is a full 16-digit address
# inside the kernel's text). Root; under CI=true not being root is a failure, never a skip.
. "$(dirname "$0")/../e2e-lib.sh"
t_require_root || { t_done; exit; }
export XDG_CACHE_HOME="$T_TMP/cache"

"$UKSTAP" -DMAXSTRINGLEN=32 -o "$T_TMP/bt.out" -e '
  probe syscall.getppid { if (pid() == target()) {
    printf("hex %s|\n", backtrace()); printf("callers %s|\n", callers(-1)); print_backtrace(); exit() } }' \
  -c 'perl -e getppid' > /dev/null 2> "$T_TMP/bt.err"
rc=$?
t "the run" 0 '' '' -- bash -c "cat '$T_TMP/bt.err' >&2; exit $rc"
# The text's [lowest, highest] text symbol: every address of a kernel stack is inside.
range=$(awk '$2 ~ /^[Tt]$/ && $1 !~ /^0+$/ {print $1}' /proc/kallsyms | sort | sed -n '1p;$p' | paste -sd' ')
cat > "$T_TMP/check.py" <<'PY'
import re, sys
path, what, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16)
lines = open(path).read().splitlines()
text = next(l for l in lines if l.startswith(what + " "))[len(what) + 1:-1]
frames = [l for l in lines if re.match(r"^ 0x[0-9a-f]+ : ", l)]
if len(text) > 31: sys.exit("longer than MAXSTRINGLEN - 1: %r" % text)
toks = text.split(" ")
if toks[-1] != "" or len(toks) < 2: sys.exit("not 'ADDR ADDR ... ': %r" % text)
for t in toks[:-1]:
    if not re.fullmatch(r"0x[0-9a-f]{16}", t) or not lo <= int(t, 16) <= hi:
        sys.exit("not a whole kernel address: %r in %r" % (t, text))
skip = 1 if what == "callers" else 0
if len(frames) - skip <= len(toks) - 1: sys.exit("the stack fits (%d frames): nothing was cut" % len(frames))
PY
for w in hex callers; do
  t "$w: whole addresses inside the kernel text (kallsyms $range), more frames than fit" 0 '' '' -- \
    python3 "$T_TMP/check.py" "$T_TMP/bt.out" "$w" $range
done
t_done
